package jsonfile

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
)

// A line of commands.jsonl with seq 0 has no seq: it stays in the file
// but is no command (indexCommands), so it is never listed, even after a
// negative cursor, and its command id is free. Indexing it (seq < 0 for
// seq <= 0) would list it and answer an append of its id as a duplicate
// at seq 0, a seq no consumer's cursor ever passes.
func TestCommandLineWithSeqZeroIsNoCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeRawFile(t, filepath.Join(dir, commandsFile), cmdLine("c0", "r", 0)+"\n"+cmdLine("c1", "r", 1)+"\n")
	s := openInternal(t, dir)
	ctx := t.Context()
	recs, _, err := s.CommandListAfter(ctx, -1, 0)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range recs {
		ids = append(ids, r.CommandID)
	}
	if !slices.Equal(ids, []string{"c1"}) {
		t.Errorf("CommandListAfter(-1) = %v, want [c1]: the seq-0 line is no command", ids)
	}
	res, err := s.CommandAppend(ctx, &durable.CommandRecord{CommandID: "c0", RunID: "r", Type: "pause"})
	if err != nil || !res.Accepted || res.Seq != 2 {
		t.Errorf("CommandAppend(c0) = %+v, %v; want accepted at seq 2", res, err)
	}
}

// A command line whose ts is a number (a hand edit) is still the command,
// with no ts (commandWithoutTS), not a line passed over: without that
// fallback the command is lost to its consumer.
func TestCommandLineWithNumericTSIsStillACommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	numeric := strings.Replace(cmdLine("c2", "r", 2), `"2026-01-01T09:00:00+00:00"`, "1767258000", 1)
	writeRawFile(t, filepath.Join(dir, commandsFile), cmdLine("c1", "r", 1)+"\n"+numeric+"\n")
	s := openInternal(t, dir)
	recs, next, err := s.CommandListAfter(t.Context(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs[1].CommandID != "c2" || recs[1].Seq != 2 || next != 2 {
		t.Fatalf("CommandListAfter(0) = %d commands, next %d; want c1 and c2 (seq 2), next 2", len(recs), next)
	}
	if recs[1].HasTS() {
		t.Errorf("c2's ts = %v, want none (the file's is a number)", recs[1].TS)
	}
}

// A delete that leaves the newest command in commands.jsonl writes no
// commands_seq.json: the file's own last seq keeps the counter, and the
// Python layout gets no file it has no use for. Only a delete of the
// newest commands needs it (keptMax < lastSeq).
func TestCommandDeleteOfOlderCommandsWritesNoSeqFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := openInternal(t, dir)
	ctx := t.Context()
	for _, c := range []struct{ id, run string }{{"c1", "gone"}, {"c2", "keep"}} {
		if _, err := s.CommandAppend(ctx, &durable.CommandRecord{CommandID: c.id, RunID: c.run, Type: "pause"}); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := s.CommandDeleteByRun(ctx, "gone"); err != nil || n != 1 {
		t.Fatalf("CommandDeleteByRun = %d, %v; want 1", n, err)
	}
	if _, err := os.Stat(filepath.Join(dir, seqFile)); !os.IsNotExist(err) {
		t.Errorf("%s after deleting only an older command: stat error %v, want none written", seqFile, err)
	}
}

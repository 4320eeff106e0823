package jsonfile

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
)

// listCommandIDs lists the ids of every command s holds, in order.
func listCommandIDs(t *testing.T, s *Store) []string {
	t.Helper()
	recs, _, err := s.CommandListAfter(t.Context(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range recs {
		out = append(out, r.CommandID)
	}
	return out
}

// cmdLine is a command line as Python's JsonlCommandStore writes it.
func cmdLine(id, run string, seq int) string {
	return `{"command_id": "` + id + `", "run_id": "` + run + `", "type": "pause", "payload": {}, ` +
		`"ts": "2026-01-01T09:00:00+00:00", "client_id": null, "seq": ` + string(rune('0'+seq)) + `}`
}

// appendFile appends "in one write": a write that stores only part of
// the line without reporting an error is still a failed append, cut back
// off the file, not a command reported accepted with a torn line.
func TestShortWriteFailsTheAppend(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := openInternal(t, dir)
	ctx := t.Context()
	s.writeForTest = func(f *os.File, data []byte) (int, error) {
		s.writeForTest = nil
		return f.Write(data[:len(data)-1])
	}
	if res, err := s.CommandAppend(ctx, &durable.CommandRecord{CommandID: "c1", RunID: "r1", Type: "pause"}); err == nil {
		t.Fatalf("a short write was reported as %+v", res)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if got := listCommandIDs(t, openInternal(t, dir)); len(got) != 0 {
		t.Errorf("commands after a reopen = %v, want none", got)
	}
}

// CommandListAfter returns commands "in seq order" (store.CommandStore)
// even when commands.jsonl holds them out of order (racing writers).
func TestCommandsListedInSeqOrderFromAnUnorderedFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeRawFile(t, filepath.Join(dir, commandsFile),
		cmdLine("c3", "r", 3)+"\n"+cmdLine("c1", "r", 1)+"\n"+cmdLine("c2", "r", 2)+"\n")
	s := openInternal(t, dir)
	if got := listCommandIDs(t, s); !slices.Equal(got, []string{"c1", "c2", "c3"}) {
		t.Errorf("commands = %v, want [c1 c2 c3]", got)
	}
	recs, next, err := s.CommandListAfter(t.Context(), 1, 0)
	if err != nil || len(recs) != 2 || recs[0].CommandID != "c2" || recs[1].CommandID != "c3" || next != 3 {
		t.Errorf("CommandListAfter(1) = %d commands, next %d, %v; want c2, c3 and next 3", len(recs), next, err)
	}
}

// CommandDeleteByRun copies every other line byte for byte, as Python's
// delete_by_run does: a line of two joined commands of which none is
// deleted stays one line, as it was.
func TestCommandDeleteKeepsAJoinedLineOfKeptCommandsAsItWas(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	joined := cmdLine("c1", "keep", 1) + cmdLine("c2", "keep", 2)
	path := filepath.Join(dir, commandsFile)
	writeRawFile(t, path, joined+"\n"+cmdLine("c3", "gone", 3)+"\n")
	s := openInternal(t, dir)
	if n, err := s.CommandDeleteByRun(t.Context(), "gone"); err != nil || n != 1 {
		t.Fatalf("CommandDeleteByRun = %d, %v; want 1", n, err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != joined+"\n" {
		t.Errorf("commands.jsonl after the delete = %q, want the joined line unchanged %q", b, joined+"\n")
	}
}

// CommandDeleteByRun: "Only what left the file leaves memory, so a reopen
// lists the same." A command of the run recovered from a line that stays
// in the file (it is followed by a torn value, so the line is kept as it
// is) is still listed, before and after a reopen.
func TestCommandDeleteKeepsListingWhatStaysInTheFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeRawFile(t, filepath.Join(dir, commandsFile),
		cmdLine("c1", "r1", 1)+`{"command_id": "tor`+"\n"+cmdLine("c2", "r1", 2)+"\n"+cmdLine("c3", "r2", 3)+"\n")
	s := openInternal(t, dir)
	if got := listCommandIDs(t, s); !slices.Equal(got, []string{"c1", "c2", "c3"}) {
		t.Fatalf("commands at open = %v", got)
	}
	if _, err := s.CommandDeleteByRun(t.Context(), "r1"); err != nil {
		t.Fatal(err)
	}
	before := listCommandIDs(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	after := listCommandIDs(t, openInternal(t, dir))
	if !slices.Equal(before, after) {
		t.Errorf("after the delete: listed %v in process but %v after a reopen", before, after)
	}
}

// CommandLastSeq is "the highest stored seq": once the newest commands
// are deleted it is the highest left (as Python's get_last_seq after
// delete_by_run), while their seqs are still never issued again.
func TestCommandLastSeqIsTheHighestStoredAfterADelete(t *testing.T) {
	t.Parallel()
	s := openInternal(t, t.TempDir())
	ctx := t.Context()
	for _, c := range []struct{ id, run string }{{"a", "keep"}, {"b", "gone"}} {
		if _, err := s.CommandAppend(ctx, &durable.CommandRecord{CommandID: c.id, RunID: c.run, Type: "pause"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.CommandDeleteByRun(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	if last, err := s.CommandLastSeq(ctx); err != nil || last != 1 {
		t.Errorf("CommandLastSeq after deleting the newest = %d, %v; want 1", last, err)
	}
	res, err := s.CommandAppend(ctx, &durable.CommandRecord{CommandID: "c", RunID: "keep", Type: "resume"})
	if err != nil || res.Seq != 3 {
		t.Errorf("next append = %+v, %v; want seq 3", res, err)
	}
}

// A command id found twice in commands.jsonl (two racing writers) keeps
// the seq of its first line, as Python's _rebuild_index keeps it: a
// duplicate append reports that seq.
func TestDuplicateCommandInTheFileKeepsItsFirstSeq(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeRawFile(t, filepath.Join(dir, commandsFile), cmdLine("c1", "r", 1)+"\n"+cmdLine("c1", "r", 2)+"\n")
	s := openInternal(t, dir)
	res, err := s.CommandAppend(t.Context(), &durable.CommandRecord{CommandID: "c1", RunID: "r", Type: "pause"})
	if err != nil || !res.Duplicate || res.Seq != 1 {
		t.Errorf("append of c1 = %+v, %v; want a duplicate of seq 1", res, err)
	}
	if res, err := s.CommandAppend(t.Context(), &durable.CommandRecord{CommandID: "c2", RunID: "r", Type: "pause"}); err != nil || res.Seq != 3 {
		t.Errorf("append of c2 = %+v, %v; want seq 3", res, err)
	}
}

// TestCommandDeleteMatchesAPaddedRunID: a line whose run_id has spaces
// around it (written by hand or by another tool) belongs to the run, as
// Python's delete_by_run strips the id it reads; it leaves the file and
// the listing, and a reopen lists the same.
func TestCommandDeleteMatchesAPaddedRunID(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeRawFile(t, filepath.Join(dir, commandsFile), cmdLine("c1", " r1 ", 1)+"\n"+cmdLine("c2", "r2", 2)+"\n")
	s := openInternal(t, dir)
	if n, err := s.CommandDeleteByRun(t.Context(), "r1"); err != nil || n != 1 {
		t.Fatalf("CommandDeleteByRun(r1) = %d, %v; want the padded line's command", n, err)
	}
	if got := listCommandIDs(t, s); !slices.Equal(got, []string{"c2"}) {
		t.Fatalf("commands after the delete = %v; want [c2]", got)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if got := listCommandIDs(t, openInternal(t, dir)); !slices.Equal(got, []string{"c2"}) {
		t.Fatalf("commands after a reopen = %v; want [c2]", got)
	}
}

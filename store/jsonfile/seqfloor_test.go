package jsonfile_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// TestSeqAboveSavedCursorWithoutSeqFile: a reopened store raises its seq
// counter to the highest saved consumer cursor, so a command appended
// after the newest ones were deleted never gets a seq the consumer has
// already passed. commands_seq.json, added for the same purpose, exists
// only when this version did the delete: a data
// directory whose newest commands were deleted by Python's delete_by_run
// (which shares the directory and writes no such file) or by the Go store
// before this change has only the cursor to remember them. Without the
// cursor floor (dropped for a while) the reopened store handed out seqs at
// or below the consumer's cursor, and the consumer
// (CommandListAfter(cursor)) never saw those commands: a lost command.
func TestSeqAboveSavedCursorWithoutSeqFile(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir := t.TempDir()
	s := open(t, dir, true)
	for _, c := range []struct{ id, run string }{{"a", "keep"}, {"b", "keep"}, {"c", "gone"}, {"d", "gone"}} {
		if _, err := s.CommandAppend(ctx, &durable.CommandRecord{CommandID: c.id, RunID: c.run, Type: "pause"}); err != nil {
			t.Fatal(err)
		}
	}
	// The runner consumed all four commands.
	if err := s.CursorSave(ctx, store.DefaultConsumer, 4); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// The newest commands are deleted as Python's delete_by_run (or the
	// store before today) deletes them: commands.jsonl rewritten without
	// them, nothing else written.
	path := filepath.Join(dir, "commands.jsonl")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var kept []byte
	for _, line := range bytes.SplitAfter(data, []byte("\n")) {
		if len(line) > 0 && !bytes.Contains(line, []byte(`"gone"`)) {
			kept = append(kept, line...)
		}
	}
	if err := os.WriteFile(path, kept, 0o644); err != nil {
		t.Fatal(err)
	}

	s2 := open(t, dir, true)
	res, err := s2.CommandAppend(ctx, &durable.CommandRecord{CommandID: "e", RunID: "keep", Type: "resume"})
	if err != nil || !res.Accepted {
		t.Fatalf("append after reopen = %+v, %v", res, err)
	}
	cursor, err := s2.CursorLoad(ctx, store.DefaultConsumer)
	if err != nil {
		t.Fatal(err)
	}
	cmds, _, err := s2.CommandListAfter(ctx, cursor, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(cmds) != 1 || cmds[0].CommandID != "e" {
		t.Fatalf("new command got seq %d, at or below the consumer's saved cursor %d: CommandListAfter(%d) = %d commands, so the runner never sees it",
			res.Seq, cursor, cursor, len(cmds))
	}
}

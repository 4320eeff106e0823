package jsonfile

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// The package doc and docs/compatibility.md let a Python process that runs
// no runner (`serve --no-runner`, scripts) append to commands.jsonl while
// this store is open: Python's stores take no lock. These tests play that
// process with plain appends to the file.

// TestCommandAppendAfterForeignTornTail: a Python append killed mid-line
// (a line longer than its write buffer is several write calls; or ENOSPC)
// leaves a torn tail without '\n' after the store opened. The store's next
// command must start a line of its own, read from the file's real last
// byte, not from what the store saw at open, or it is glued onto the torn
// bytes and lost at the next open although it was accepted.
func TestCommandAppendAfterForeignTornTail(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	s := openInternal(t, dir)
	if _, err := s.CommandAppend(ctx, &durable.CommandRecord{CommandID: "c1", RunID: "r1", Type: "pause"}); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(dir, commandsFile), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"command_id": "py1", "run_id": "r1", "type": "resume", "payl`); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()

	res, err := s.CommandAppend(ctx, &durable.CommandRecord{CommandID: "c2", RunID: "r1", Type: "resume"})
	if err != nil || !res.Accepted {
		t.Fatalf("append: %+v, %v", res, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openInternal(t, dir)
	recs, _, err := s.CommandListAfter(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range recs {
		ids = append(ids, r.CommandID)
	}
	if len(ids) != 2 || ids[0] != "c1" || ids[1] != "c2" {
		data, _ := os.ReadFile(filepath.Join(dir, commandsFile))
		t.Errorf("commands after a reopen: %v, want [c1 c2] (c2 accepted at seq %d); commands.jsonl:\n%s", ids, res.Seq, data)
	}
}

// TestCommandDeleteByRunLeavesForeignAppendDescriptorHarmless: a Python
// writer may hold commands.jsonl open to append (open(path, "a"), then
// write) across CommandDeleteByRun's rewrite. Its write must land in the
// displaced, unlinked file, as under Python's own delete_by_run (temp +
// os.replace), never in another file: were the displaced file recycled as
// a spare (atomicfile.Recycler), the next run save would exchange it into
// run_<id>.json and the late command line would end up after the run's
// JSON, making the run unreadable.
func TestCommandDeleteByRunLeavesForeignAppendDescriptorHarmless(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	s := openInternal(t, dir)
	run := &durable.RunState{RunID: "r1", WorkflowID: "w", Status: durable.RunRunning, Vars: map[string]any{}}
	if err := s.RunCommit(ctx, &store.CommitParams{Run: run, Create: true}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []*durable.CommandRecord{
		{CommandID: "c1", RunID: "gone", Type: "pause"},
		{CommandID: "c2", RunID: "r1", Type: "pause"},
	} {
		if _, err := s.CommandAppend(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	py, err := os.OpenFile(filepath.Join(dir, commandsFile), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer py.Close()

	if n, err := s.CommandDeleteByRun(ctx, "gone"); err != nil || n != 1 {
		t.Fatalf("delete: %d, %v", n, err)
	}
	// A run save, which would take the displaced file were it a spare.
	cur, err := s.RunGet(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	cur.CurrentNode = "next"
	if err := s.RunCommit(ctx, &store.CommitParams{Run: cur}); err != nil {
		t.Fatal(err)
	}
	line := `{"command_id": "py1", "run_id": "r1", "type": "resume", "payload": {}, "ts": "2026-01-01T00:00:00+00:00", "client_id": null, "seq": 3}` + "\n"
	if _, err := py.WriteString(line); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "run_r1.json"))
	if bytes.Contains(data, []byte(`"py1"`)) {
		t.Errorf("a write on an append descriptor of commands.jsonl landed in run_r1.json:\n%s", data)
	}
	if _, err := s.RunGet(ctx, "r1"); err != nil {
		t.Errorf("run r1 unreadable after a late command append: %v", err)
	}
	// The rewritten commands.jsonl holds the kept command only.
	if data, _ := os.ReadFile(filepath.Join(dir, commandsFile)); bytes.Contains(data, []byte(`"py1"`)) || !bytes.Contains(data, []byte(`"c2"`)) {
		t.Errorf("commands.jsonl after the rewrite:\n%s", data)
	}
}

package jsonfile

import (
	"bytes"
	"fmt"
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

// appendForeignCommand appends a command line as Python's
// JsonlCommandStore.append writes it, from a process whose counter was
// rebuilt from the file.
func appendForeignCommand(t *testing.T, dir, id, runID string, seq int) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(dir, commandsFile), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	line := fmt.Sprintf(`{"command_id": %q, "run_id": %q, "type": "resume", "payload": {}, "ts": "2026-01-01T00:00:00+00:00", "client_id": null, "seq": %d}`+"\n", id, runID, seq)
	if _, err := f.WriteString(line); err != nil {
		t.Fatal(err)
	}
}

// appendCommands appends commands (id, run id) through the store.
func appendCommands(t *testing.T, s *Store, idRun ...string) {
	t.Helper()
	for i := 0; i < len(idRun); i += 2 {
		if _, err := s.CommandAppend(t.Context(), &durable.CommandRecord{CommandID: idRun[i], RunID: idRun[i+1], Type: "pause"}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCommandDeleteByRunKeepsForeignSeqsTaken: CommandDeleteByRun re-reads
// commands.jsonl and so takes in a command a Python process appended
// meanwhile (seq 3). Its seq is then taken: the store's next command must
// get a seq above it, or two commands share seq 3 and a runner whose
// cursor reached 3 (it applied the Python command) never applies ours.
func TestCommandDeleteByRunKeepsForeignSeqsTaken(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	s := openInternal(t, dir)
	appendCommands(t, s, "c1", "keep", "c2", "gone")
	appendForeignCommand(t, dir, "py3", "keep", 3)

	if n, err := s.CommandDeleteByRun(ctx, "gone"); err != nil || n != 1 {
		t.Fatalf("delete: %d, %v", n, err)
	}
	// The runner applies what follows its cursor 1: the Python command.
	recs, next, err := s.CommandListAfter(ctx, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].CommandID != "py3" || next != 3 {
		t.Fatalf("after the delete, listed %d commands, next %d; want py3 at seq 3", len(recs), next)
	}
	res, err := s.CommandAppend(ctx, &durable.CommandRecord{CommandID: "c4", RunID: "keep", Type: "cancel"})
	if err != nil || !res.Accepted {
		t.Fatalf("append: %+v, %v", res, err)
	}
	if res.Seq <= 3 {
		t.Errorf("c4 got seq %d, which py3 (read back by the delete) holds; want a seq > 3", res.Seq)
	}
	recs, _, err = s.CommandListAfter(ctx, next, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].CommandID != "c4" {
		t.Errorf("after cursor %d: %d commands; want c4 alone", next, len(recs))
	}
}

// TestCommandDeleteByRunSavesDeletedForeignSeq: a command a Python
// process appended, deleted by the same CommandDeleteByRun, had its seq
// handed out too (a consumer may have read it): commands_seq.json,
// written before the rewrite, must hold it, so that neither this store
// nor a reopened one issues it again.
func TestCommandDeleteByRunSavesDeletedForeignSeq(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	s := openInternal(t, dir)
	appendCommands(t, s, "c1", "keep", "c2", "gone")
	appendForeignCommand(t, dir, "py3", "gone", 3)

	if n, err := s.CommandDeleteByRun(ctx, "gone"); err != nil || n != 2 {
		t.Fatalf("delete: %d, %v", n, err)
	}
	if n, ok := s.readNumberFile(filepath.Join(dir, seqFile), "seq"); !ok || n != 3 {
		t.Errorf("%s holds %d (ok %v); want 3, py3's seq", seqFile, n, ok)
	}
	res, err := s.CommandAppend(ctx, &durable.CommandRecord{CommandID: "c4", RunID: "keep", Type: "cancel"})
	if err != nil || res.Seq != 4 {
		t.Errorf("append: %+v, %v; want seq 4", res, err)
	}
}

package jsonfile

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// TestCommandAppendUnsyncedIsStillTheCommand checks the command
// inbox's idempotency promise (spec runtime-model.md §4.5 "If a record
// with the same command_id exists → duplicate"; store.CommandStore
// "stores a command once per CommandID"; Python's JsonlCommandStore
// indexes every line of the file) across an append whose line reached
// commands.jsonl (written and synced) but whose directory sync failed
// (appendFile's errAppendedUnsynced). RunCommit's doc says that in that
// case "the indexes follow the file, as a read of it does"; CommandAppend
// instead forgets the line it wrote, so the client's retry of the same
// command_id is accepted as a new command with a new seq, the file holds
// the command twice, and this process never lists the first line while a
// reopened store lists only it.
func TestCommandAppendUnsyncedIsStillTheCommand(t *testing.T) {
	dir := t.TempDir()
	s := openInternalSync(t, dir, false) // synced: a new file's entry is synced too
	ctx := t.Context()
	giveBack := exhaustFDsAfterNextWrite(t, s) // the directory sync after the write cannot open the directory
	_, err := s.CommandAppend(ctx, &durable.CommandRecord{CommandID: "c1", RunID: "r1", Type: "pause"})
	giveBack()
	if !errors.Is(err, errAppendedUnsynced) {
		t.Fatalf("precondition: first append = %v, want the directory sync to fail after the write", err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, commandsFile))
	if !strings.Contains(string(data), `"c1"`) {
		t.Fatalf("precondition: the line is not in the file: %q", data)
	}
	// The client retries the command it was told failed.
	res, err := s.CommandAppend(ctx, &durable.CommandRecord{CommandID: "c1", RunID: "r1", Type: "pause"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Duplicate || res.Seq != 1 {
		t.Errorf("retry of c1, which commands.jsonl already holds at seq 1: %+v; want a duplicate of seq 1", res)
	}
	data, _ = os.ReadFile(filepath.Join(dir, commandsFile))
	if n := strings.Count(string(data), `"command_id": "c1"`); n != 1 {
		t.Errorf("commands.jsonl holds command c1 %d times:\n%s", n, data)
	}
}

// TestListedRunIsReadable: every run the store lists can be read and
// committed by its id. Python's JsonFileRunStore writes any id its OS
// takes in a file name (run_a\b.json, run_...json); this store refuses
// such ids (checkID, for portable names), and used to list their files
// anyway, so a runner polled them for ever and could neither read nor save
// them. They are now skipped at load with a warning.
func TestListedRunIsReadable(t *testing.T) {
	dir := t.TempDir()
	for _, id := range []string{`a\b`, `..`} {
		// As Python's json.dump(asdict(run), ensure_ascii=False, indent=2) writes it.
		run := "{\n  \"run_id\": " + strconv.Quote(id) + `,
  "workflow_id": "wf",
  "status": "running",
  "current_node": "n",
  "vars": {},
  "waiting": null,
  "output": null,
  "error": null,
  "created_at": "2025-01-01T00:00:00.000001+00:00",
  "updated_at": "2025-01-01T00:00:00.000001+00:00",
  "actor_id": "gateway",
  "session_id": null,
  "parent_run_id": null
}`
		if err := os.WriteFile(filepath.Join(dir, "run_"+id+".json"), []byte(run), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := openInternal(t, dir)
	ctx := t.Context()
	listed, err := s.RunList(ctx, &store.RunListParams{Status: durable.RunRunning})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range listed {
		if _, err := s.RunGet(ctx, r.RunID); err != nil {
			t.Errorf("RunList returned run %q, but RunGet(%q) = %v", r.RunID, r.RunID, err)
		}
		if err := s.RunCommit(ctx, &store.CommitParams{Run: r}); err != nil {
			t.Errorf("RunList returned run %q, but committing it fails: %v", r.RunID, err)
		}
	}
}

// TestCommandDeleteKeepsWhatAReopenLists checks CommandDeleteByRun's
// own promise (commands.go: "Only what left the file leaves memory, so a
// reopen lists the same") and Python's dedup after a delete (commands.py
// JsonlCommandStore.delete_by_run ends with self._rebuild_index(), so the
// id→seq index is rebuilt from the lines left in the file). A
// commands.jsonl written by two Python processes (each with its own index)
// can hold one command_id twice, for two runs. Deleting the first run's
// commands drops the id from memory although the file still holds it for
// the other run: this process then lists nothing, a reopened store lists
// c1@2, and a retry of c1 is accepted as a new command (seq 3) where
// Python answers duplicate of seq 2.
func TestCommandDeleteKeepsWhatAReopenLists(t *testing.T) {
	dir := t.TempDir()
	lines := `{"command_id": "c1", "run_id": "A", "type": "pause", "payload": {}, "ts": "2025-01-01T00:00:00+00:00", "client_id": null, "seq": 1}
{"command_id": "c1", "run_id": "B", "type": "pause", "payload": {}, "ts": "2025-01-01T00:00:01+00:00", "client_id": null, "seq": 2}
`
	if err := os.WriteFile(filepath.Join(dir, commandsFile), []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	s := openInternal(t, dir)
	if n, err := s.CommandDeleteByRun(ctx, "A"); err != nil || n != 1 {
		t.Fatalf("CommandDeleteByRun(A) = %d, %v; want 1", n, err)
	}
	list := func(s *Store) []string {
		recs, _, err := s.CommandListAfter(ctx, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range recs {
			out = append(out, r.CommandID+"@"+strconv.FormatInt(r.Seq, 10)+"/"+r.RunID)
		}
		return out
	}
	inProcess := list(s)
	// The client retries c1 (for run B), which the file still holds at seq 2.
	res, err := s.CommandAppend(ctx, &durable.CommandRecord{CommandID: "c1", RunID: "B", Type: "pause"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Duplicate || res.Seq != 2 {
		t.Errorf("retry of c1 after the delete = %+v; want a duplicate of seq 2 (Python rebuilds its index from the file)", res)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	reopened := list(openInternal(t, dir))
	if !slices.Equal(inProcess, reopened) {
		t.Errorf("after the delete this process listed %v, a reopened store lists %v; want the same", inProcess, reopened)
	}
}

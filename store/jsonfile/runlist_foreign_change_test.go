package jsonfile_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/jsonfile"
)

// foreignChangeWaitingRuns creates waiting (event) runs a, b, c in dir, a the
// most recently updated, and returns the open store.
func foreignChangeWaitingRuns(t *testing.T, dir string) *jsonfile.Store {
	t.Helper()
	s, err := jsonfile.New(jsonfile.Config{Dir: dir, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, id := range []string{"c", "b", "a"} {
		at := durable.NewTime(base.Add(time.Duration(i) * time.Minute))
		r := &durable.RunState{RunID: id, WorkflowID: "wf", Status: durable.RunWaiting, CurrentNode: "n",
			Vars: map[string]any{}, Waiting: &durable.WaitState{Reason: durable.WaitEvent, WaitKey: "evt:k", AllowFreeText: true},
			CreatedAt: at, UpdatedAt: at}
		if err := s.RunCommit(t.Context(), &store.CommitParams{Run: r, Create: true}); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func runIDsOf(runs []*durable.RunState) []string {
	var ids []string
	for _, r := range runs {
		ids = append(ids, r.RunID)
	}
	return ids
}

// TestRunListLimitAfterForeignDelete: another process (Python serve
// --no-runner, a user) deletes run a's file. Python's
// JsonFileRunStore.list_runs scans the run files and fills its page from
// the remaining runs: list_runs(status=WAITING, limit=2) gives [b, c], not
// the short page [b], which a caller paging through the listing (the
// scheduler's listAll) reads as its end.
func TestRunListLimitAfterForeignDelete(t *testing.T) {
	dir := t.TempDir()
	s := foreignChangeWaitingRuns(t, dir)
	defer s.Close()
	if err := os.Remove(filepath.Join(dir, "run_a.json")); err != nil {
		t.Fatal(err)
	}
	got, err := s.RunList(t.Context(), &store.RunListParams{Status: durable.RunWaiting, WaitReason: durable.WaitEvent, Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if ids := runIDsOf(got); !slices.Equal(ids, []string{"b", "c"}) {
		t.Fatalf("RunList(waiting, limit 2) after a's file was deleted = %v, want [b c] (as Python's list_runs)", ids)
	}
}

// TestRunListLimitAfterForeignSave: another process saves run a as
// running (temp file + rename, as Python's JsonFileRunStore.save); the
// page of waiting runs is filled from the next ones: [b, c].
func TestRunListLimitAfterForeignSave(t *testing.T) {
	dir := t.TempDir()
	s := foreignChangeWaitingRuns(t, dir)
	defer s.Close()
	path := filepath.Join(dir, "run_a.json")
	// a as Python saves it once running: waiting null, updated_at later.
	at := durable.NewTime(time.Date(2026, 1, 1, 0, 5, 0, 0, time.UTC))
	a := &durable.RunState{RunID: "a", WorkflowID: "wf", Status: durable.RunRunning, CurrentNode: "n",
		Vars: map[string]any{}, CreatedAt: durable.NewTime(time.Date(2026, 1, 1, 0, 2, 0, 0, time.UTC)), UpdatedAt: at}
	data, err := durable.AppendRun(nil, a, pyjson.Pretty)
	if err != nil {
		t.Fatal(err)
	}
	txt := string(data)
	if err := os.WriteFile(path+".0123456789abcdef0123456789abcdef.tmp", []byte(txt), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".0123456789abcdef0123456789abcdef.tmp", path); err != nil {
		t.Fatal(err)
	}
	got, err := s.RunList(t.Context(), &store.RunListParams{Status: durable.RunWaiting, WaitReason: durable.WaitEvent, Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if ids := runIDsOf(got); !slices.Equal(ids, []string{"b", "c"}) {
		t.Fatalf("RunList(waiting, limit 2) after another process saved a as running = %v, want [b c] (as Python's list_runs)", ids)
	}
}

// TestRunListPageNotOverfilledAfterForeignChange: a run dropped from a page
// (another process saved it in a state that no longer matches) leaves its
// place to the next candidate only: the refill loads limit minus the runs
// already kept. Refilled with a whole page, RunList(limit 2) gives three
// runs.
func TestRunListPageNotOverfilledAfterForeignChange(t *testing.T) {
	dir := t.TempDir()
	s := foreignChangeWaitingRuns(t, dir) // a, b, c: a the newest
	defer s.Close()
	at := durable.NewTime(time.Date(2025, 12, 31, 0, 0, 0, 0, time.UTC)) // d: older than c
	d := &durable.RunState{RunID: "d", WorkflowID: "wf", Status: durable.RunWaiting, CurrentNode: "n",
		Vars: map[string]any{}, Waiting: &durable.WaitState{Reason: durable.WaitEvent, WaitKey: "evt:k", AllowFreeText: true},
		CreatedAt: at, UpdatedAt: at}
	if err := s.RunCommit(t.Context(), &store.CommitParams{Run: d, Create: true}); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "run_a.json")); err != nil {
		t.Fatal(err)
	}
	got, err := s.RunList(t.Context(), &store.RunListParams{Status: durable.RunWaiting, Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if ids := runIDsOf(got); !slices.Equal(ids, []string{"b", "c"}) {
		t.Fatalf("RunList(waiting, limit 2) after a's file was deleted = %v, want [b c]", ids)
	}
}

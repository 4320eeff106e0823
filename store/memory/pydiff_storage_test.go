package memory_test

// Differential tests: the in-memory store against Python's
// InMemoryRunStore / InMemoryCommandStore (abstractruntime 0.4.28),
// called directly with the same inputs. Expected values are what the
// Python calls returned (see the comment on each).

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

func mustTime(t *testing.T, s string) durable.Time {
	t.Helper()
	v, err := durable.ParseTime(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func mustCreate(t *testing.T, s *memory.Store, r *durable.RunState) {
	t.Helper()
	if r.Vars == nil {
		r.Vars = map[string]any{}
	}
	if r.WorkflowID == "" {
		r.WorkflowID = "wf"
	}
	if r.CurrentNode == "" {
		r.CurrentNode = "n"
	}
	if r.Status == "" {
		r.Status = durable.RunRunning
	}
	if err := s.RunCommit(context.Background(), &store.CommitParams{Run: r, Create: true}); err != nil {
		t.Fatal(err)
	}
}

func runIDs(runs []*durable.RunState) []string {
	out := make([]string, len(runs))
	for i, r := range runs {
		out[i] = r.RunID
	}
	return out
}

// Python InMemoryRunStore.list_children(parent_run_id="") compares
// run.parent_run_id (None for a root run) with "" and returns [].
func TestDiffStoreListChildrenOfEmptyParent(t *testing.T) {
	ctx := context.Background()
	s := memory.New()
	T := mustTime(t, "2024-01-01T00:00:00+00:00")
	mustCreate(t, s, &durable.RunState{RunID: "root", CreatedAt: T, UpdatedAt: T})
	mustCreate(t, s, &durable.RunState{RunID: "child", ParentRunID: "root", CreatedAt: T, UpdatedAt: T})
	kids, err := s.RunListChildren(ctx, "", "")
	if err != nil {
		t.Fatal(err)
	}
	// Python: InMemoryRunStore.list_children(parent_run_id="") -> []
	if len(kids) != 0 {
		t.Errorf("RunListChildren(\"\"): got %v, Python list_children(parent_run_id=\"\") gives []", runIDs(kids))
	}
}

// Python InMemoryRunStore.list_run_index(session_id=" sess ") strips both
// sides: it returned the run saved with session_id "sess" (['s1']).
func TestDiffStoreRunIndexSessionFilterIsTrimmed(t *testing.T) {
	ctx := context.Background()
	s := memory.New()
	T := mustTime(t, "2024-01-01T00:00:00+00:00")
	mustCreate(t, s, &durable.RunState{RunID: "s1", SessionID: "sess", CreatedAt: T, UpdatedAt: T})
	rows, err := s.RunIndex(ctx, &store.RunIndexParams{SessionID: " sess "})
	if err != nil {
		t.Fatal(err)
	}
	// Python: list_run_index(session_id=" sess ") -> [{'run_id': 's1', ...}]
	if len(rows) != 1 || rows[0].RunID != "s1" {
		t.Errorf("RunIndex(SessionID %q): got %d rows, Python gives ['s1']", " sess ", len(rows))
	}
}

// Python InMemoryCommandStore.get_last_seq returns its counter, which a
// delete does not lower: after appending c1 (r1) and c2 (r2) and
// delete_by_run("r2"), get_last_seq() returned 2 (and the next append
// got seq 3).
func TestDiffStoreLastSeqAfterDeleteByRun(t *testing.T) {
	ctx := context.Background()
	s := memory.New()
	ts := mustTime(t, "2024-01-01T00:00:00+00:00")
	for _, c := range []struct{ id, run string }{{"c1", "r1"}, {"c2", "r2"}} {
		if _, err := s.CommandAppend(ctx, &durable.CommandRecord{CommandID: c.id, RunID: c.run, Type: "pause", TS: ts}); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := s.CommandDeleteByRun(ctx, "r2"); err != nil || n != 1 {
		t.Fatalf("delete: %d, %v", n, err)
	}
	last, err := s.CommandLastSeq(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Python: InMemoryCommandStore.get_last_seq() after delete_by_run("r2") -> 2
	if last != 2 {
		t.Errorf("CommandLastSeq after deleting the newest command: got %d, Python get_last_seq() gives 2", last)
	}
}

package storetest_test

import (
	"slices"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/jsonfile"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// TestRunIndexFindsPaddedStoredSessionInMemoryAndJSON: runtime.Start
// stores session ids trimmed, but a run Python wrote may carry a padded
// one. Python's in-memory and JSON stores find it by its session id,
// trimmed or not (list_run_index compares str(run.session_id or
// "").strip() with the stripped filter), and so do ours; history's session
// export passes the trimmed id. (The SQL stores compare the stored id as
// written, as Python's SQLite store does: docs/compatibility.md.)
func TestRunIndexFindsPaddedStoredSessionInMemoryAndJSON(t *testing.T) {
	for name, open := range strippingStores() {
		t.Run(name, func(t *testing.T) {
			s, reopen := open(t)
			for _, r := range []struct{ id, session string }{{"spaced", " s1 "}, {"tabbed", "s1\t"}, {"other", "s2"}} {
				createIndexed(t, s, &durable.RunState{RunID: r.id, SessionID: r.session})
			}
			s = reopen()
			for _, filter := range []string{" s1 ", "s1", "s1\t"} {
				if got, want := indexedIDs(t, s, &store.RunIndexParams{SessionID: filter}), []string{"spaced", "tabbed"}; !slices.Equal(got, want) {
					t.Errorf("RunIndex(SessionID %q) = %v, want %v (the runs stored in sessions %q and %q)",
						filter, got, want, " s1 ", "s1\t")
				}
			}
		})
	}
}

// strippingStores opens the stores whose run index trims ids as Python's
// in-memory and JSON stores do, each with a function that reopens it.
func strippingStores() map[string]func(t *testing.T) (store.Store, func() store.Store) {
	return map[string]func(t *testing.T) (store.Store, func() store.Store){
		"memory": func(t *testing.T) (store.Store, func() store.Store) {
			s := memory.New()
			return s, func() store.Store { return s }
		},
		"jsonfile": func(t *testing.T) (store.Store, func() store.Store) {
			dir := t.TempDir()
			openDir := func() store.Store {
				s, err := jsonfile.New(jsonfile.Config{Dir: dir, NoSync: true})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = s.Close() })
				return s
			}
			s := openDir()
			// Reopened: the index is rebuilt from the run files.
			return s, func() store.Store { _ = s.Close(); return openDir() }
		},
	}
}

// TestRunIndexRootOnlyTakesBlankParentAsRoot: RunIndex(RootOnly) keeps a
// run whose parent id is blank once trimmed, as Python's in-memory and
// JSON stores do (list_run_index skips a run only when
// str(run.parent_run_id or "").strip() is not empty): a run Python saved
// with a whitespace parent is a root there, and in its root listing here.
// (The SQL stores take only a NULL or empty parent_run_id for a root, as
// Python's SQLite store does: docs/compatibility.md.)
func TestRunIndexRootOnlyTakesBlankParentAsRoot(t *testing.T) {
	for name, open := range strippingStores() {
		t.Run(name, func(t *testing.T) {
			s, reopen := open(t)
			for _, r := range []struct{ id, parent string }{{"root", ""}, {"spaced", " \t"}, {"unit-sep", "\x1f"}, {"child", "root"}} {
				createIndexed(t, s, &durable.RunState{RunID: r.id, ParentRunID: r.parent})
			}
			s = reopen()
			got := indexedIDs(t, s, &store.RunIndexParams{RootOnly: true})
			if want := []string{"root", "spaced", "unit-sep"}; !slices.Equal(got, want) {
				t.Errorf("RunIndex(RootOnly) = %v, want %v (blank parents are roots)", got, want)
			}
		})
	}
}

// createIndexed creates run r (its id and session or parent set) as a
// running run of workflow wf.
func createIndexed(t *testing.T, s store.Store, r *durable.RunState) {
	t.Helper()
	at := durable.NewTime(time.Date(2026, 11, 29, 22, 46, 49, 0, time.UTC))
	r.WorkflowID, r.Status, r.CurrentNode, r.Vars, r.CreatedAt, r.UpdatedAt = "wf", durable.RunRunning, "n", map[string]any{}, at, at
	if err := s.RunCommit(t.Context(), &store.CommitParams{Run: r, Create: true}); err != nil {
		t.Fatalf("create %s: %v", r.RunID, err)
	}
}

// indexedIDs lists the run ids RunIndex gives for p, sorted.
func indexedIDs(t *testing.T, s store.Store, p *store.RunIndexParams) []string {
	t.Helper()
	rows, err := s.RunIndex(t.Context(), p)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range rows {
		ids = append(ids, r.RunID)
	}
	slices.Sort(ids)
	return ids
}

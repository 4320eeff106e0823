package snapshot_test

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/snapshot"
)

// ListParams.RunID keeps only snapshots of exactly that run, not of runs
// whose id merely contains it.
func TestListRunIDIsExact(t *testing.T) {
	t.Parallel()
	for name, mk := range stores() {
		st := mk(t)
		for _, s := range []*durable.Snapshot{{SnapshotID: "a", RunID: "run-1"}, {SnapshotID: "b", RunID: "run-10"}} {
			if err := st.Save(t.Context(), s); err != nil {
				t.Fatal(err)
			}
		}
		got, err := st.List(t.Context(), snapshot.ListParams{RunID: "run-1"})
		if err != nil || len(got) != 1 || got[0].SnapshotID != "a" {
			t.Errorf("%s: List(run-1) = %d snapshots, %v; want only a", name, len(got), err)
		}
	}
}

// JSONStore.Delete of an id no snapshot file can have (it would name a
// path outside the directory) reports false without an error, as Python's
// delete of a missing snapshot returns False.
func TestJSONDeleteInvalidIDIsAbsent(t *testing.T) {
	t.Parallel()
	st, err := snapshot.NewJSON(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"", "..", "a/b"} {
		if ok, err := st.Delete(t.Context(), id); ok || err != nil {
			t.Errorf("Delete(%q) = %v, %v; want false, nil", id, ok, err)
		}
	}
}

// JSONStore refuses snapshot ids holding a backslash, a path separator on
// Windows through which an id could name a file outside the directory.
func TestJSONRefusesBackslashID(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st, err := snapshot.NewJSON(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Save(t.Context(), &durable.Snapshot{SnapshotID: `..\evil`}); err == nil {
		t.Error(`Save(id ..\evil) succeeded; want an invalid id error`)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("dir holds %d entries after the refused save, want 0", len(entries))
	}
}

// JSONStore.Save refuses the ids "." and "..", as the rest of the store
// treats them as invalid: Delete answers false for them
// (TestJSONDeleteInvalidIDIsAbsent) and List skips their files
// (TestListSkipsFilesNoLoadReaches). Would break: path dropping the ".."
// (or ".") check, after which Save(id "..") wrote snapshot_...json.
func TestJSONSaveRefusesDotIDs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st, err := snapshot.NewJSON(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{".", ".."} {
		if err := st.Save(t.Context(), &durable.Snapshot{SnapshotID: id, RunID: "r"}); err == nil {
			t.Errorf("Save(id %q) succeeded; want an invalid id error", id)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("dir holds %d entries after the refused saves, want 0", len(entries))
	}
}

// JSONStore.List, which reads a file per snapshot, gives up with the
// context's error once the context is cancelled instead of reading the
// whole directory. Would break: List dropping its ctx.Err check.
func TestJSONListStopsAtCancelledContext(t *testing.T) {
	t.Parallel()
	st, err := snapshot.NewJSON(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Save(t.Context(), &durable.Snapshot{SnapshotID: "a", RunID: "r"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if got, err := st.List(ctx, snapshot.ListParams{}); !errors.Is(err, context.Canceled) {
		t.Errorf("List with a cancelled context = %d snapshots, %v; want context.Canceled", len(got), err)
	}
}

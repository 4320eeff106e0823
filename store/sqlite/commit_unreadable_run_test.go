package sqlite_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

// TestCommitRefusesRunItCouldNotReadBack: a run whose status is no run
// status ("bogus") or whose wait has an unknown reason would be refused by
// the store's own RunGet (as by Python's RunState.from_dict, which raises
// on RunStatus("bogus")): stored, it would answer "not found" from then
// on, lost to the runtime (no load, no resume, no cancel). The commit is
// refused with an error naming the value, and the stored version kept.
func TestCommitRefusesRunItCouldNotReadBack(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.New(ctx, sqlite.Config{Path: filepath.Join(t.TempDir(), "db.sqlite")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := durable.NewTime(time.Now())
	for _, c := range []struct {
		name string
		edit func(r *durable.RunState)
	}{
		{"status bogus", func(r *durable.RunState) { r.Status = "bogus" }},
		{"wait reason bogus", func(r *durable.RunState) {
			r.Status = durable.RunWaiting
			r.Waiting = &durable.WaitState{Reason: "bogus", WaitKey: "k"}
		}},
	} {
		id := "run-" + strings.ReplaceAll(c.name, " ", "-")
		run := &durable.RunState{RunID: id, WorkflowID: "w", Status: durable.RunRunning, CurrentNode: "a",
			Vars: map[string]any{"keep": "me"}, CreatedAt: now, UpdatedAt: now}
		if err := st.RunCommit(ctx, &store.CommitParams{Run: run, Create: true}); err != nil {
			t.Fatal(err)
		}
		cur, err := st.RunGet(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		c.edit(cur)
		cerr := st.RunCommit(ctx, &store.CommitParams{Run: cur})
		if cerr == nil || !strings.Contains(cerr.Error(), `"bogus"`) {
			t.Errorf("%s: commit returned %v, want an error naming the value", c.name, cerr)
		}
		got, err := st.RunGet(ctx, id)
		if err != nil {
			t.Errorf("%s: commit returned %v, and the run is now unreadable: %v", c.name, cerr, err)
			continue
		}
		if got.Version != 1 || got.Status != durable.RunRunning {
			t.Errorf("%s: stored run now at version %d, status %s; want the version 1 kept", c.name, got.Version, got.Status)
		}
	}
}

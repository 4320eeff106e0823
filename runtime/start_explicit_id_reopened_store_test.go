package runtime_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

// A create-if-absent under an explicit id is never a "random id" create,
// even on a runtime drawing UUID4s: on a SQLite store reopened since the
// run was made (the run no longer in its cache), repeating the start finds
// the existing, completed run and returns it. Passing RandomID for it would
// let the store queue a second create that shadows the run with a fresh
// one at its entry node.
func TestStartExplicitIDOnReopenedSQLiteReturnsTheExistingRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "db.sqlite")
	p := runtime.StartParams{WorkflowID: "chain", RunID: "run-kept", Vars: map[string]any{"a": 1}}
	open := func() (*sqlite.Store, *runtime.Runtime) {
		lite, err := sqlite.New(ctx, sqlite.Config{Path: path, Synchronous: "OFF"})
		if err != nil {
			t.Fatal(err)
		}
		reg, err := runtime.NewRegistry(chain(2))
		if err != nil {
			t.Fatal(err)
		}
		rt, err := runtime.New(runtime.Config{Store: lite, Registry: reg}) // UUID4 ids
		if err != nil {
			t.Fatal(err)
		}
		return lite, rt
	}
	lite, rt := open()
	if _, err := rt.Start(ctx, p); err != nil {
		t.Fatal(err)
	}
	if st, err := rt.Tick(ctx, "run-kept", runtime.TickOptions{}); err != nil || st.Status != durable.RunCompleted {
		t.Fatalf("tick: %v", err)
	}
	if err := lite.Close(); err != nil {
		t.Fatal(err)
	}
	lite, rt = open()
	defer lite.Close()
	if id, err := rt.Start(ctx, p); err != nil || id != "run-kept" {
		t.Fatalf("repeated start: %q %v", id, err)
	}
	st, err := rt.GetState(ctx, "run-kept")
	if err != nil || st.Status != durable.RunCompleted {
		t.Fatalf("after the repeated start: %v %v; want the completed run", st, err)
	}
}

package runtime_test

import (
	"context"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/jsonfile"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// A run whose parent_run_id names no run ticks to its end on every store:
// each tick reads the parent (session.endUnderCancelledParent) and takes
// store.ErrNotFound as "no parent". On the JSON-file store an id too long
// for a file name failed every tick with "file name too long".
func TestUnknownOverlongParentIDTicksOnEveryStore(t *testing.T) {
	parent := strings.Repeat("p", 300)
	wf := &runtime.Workflow{ID: "one", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"ok": true}), nil
		},
	}}
	for name, open := range map[string]func(t *testing.T) store.Store{
		"memory": func(t *testing.T) store.Store { return memory.New() },
		"jsonfile": func(t *testing.T) store.Store {
			st, err := jsonfile.New(jsonfile.Config{Dir: t.TempDir(), NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			return st
		},
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			st := open(t)
			defer st.Close()
			reg, err := runtime.NewRegistry(wf)
			if err != nil {
				t.Fatal(err)
			}
			rt, err := runtime.New(runtime.Config{Store: st, Registry: reg})
			if err != nil {
				t.Fatal(err)
			}
			id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "one", ParentRunID: parent})
			if err != nil {
				t.Fatalf("Start: %v", err)
			}
			got, err := rt.Tick(ctx, id, runtime.TickOptions{})
			if err != nil {
				t.Fatalf("Tick of a run whose parent id names no run: %v; want it completed, as on the other stores "+
					"(RunGet of an id no run can have must be store.ErrNotFound)", err)
			}
			if got.Status != durable.RunCompleted {
				t.Fatalf("status %s, want completed", got.Status)
			}
		})
	}
}

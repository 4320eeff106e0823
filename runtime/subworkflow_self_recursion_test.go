package runtime_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/scheduler"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// selfRecursiveRuntime is a runtime on st with one workflow, "rec", whose
// entry node starts "rec" again as a sync subworkflow: a self-recursive
// subflow (spec visualflow.md "Self-recursion allowed") whose condition
// never turns false. enter, if set, sees each run reach the entry node.
func selfRecursiveRuntime(t *testing.T, st store.Store, enter func(*durable.RunState)) *runtime.Runtime {
	t.Helper()
	rec := &runtime.Workflow{ID: "rec", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			if enter != nil {
				enter(run)
			}
			return runtime.Request(&durable.Effect{Type: durable.EffectStartSubworkflow,
				Payload: map[string]any{"workflow_id": "rec"}, ResultKey: "sub"}, "b"), nil
		},
		"b": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"ok": true}), nil
		},
	}}
	reg, err := runtime.NewRegistry(rec)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// TestSubworkflowSelfRecursionFailsRunNotProcess: a sync child is ticked
// inside its parent's handler (handleStartSubworkflow → driver.tick →
// session.steps → execute → handleStartSubworkflow …), so a workflow that
// starts itself without end nested without bound until the goroutine
// stack overflowed and the whole process died with "fatal error: stack
// overflow" (not recoverable). Python's _handle_start_subworkflow wraps
// the child's tick in `except Exception`, so its RecursionError fails the
// innermost effect ("Subworkflow 'rec' failed: …") and the runs fail one
// after another (spec §3.6 "child raised → failed"). The nesting is now
// bounded: past the limit the effect fails, naming it. Runs in a child
// process (runInChildProcess, 32 MiB stack).
func TestSubworkflowSelfRecursionFailsRunNotProcess(t *testing.T) {
	if !runInChildProcess(t) {
		return
	}
	ctx := context.Background()
	levels := 0
	rt := selfRecursiveRuntime(t, memory.New(), func(*durable.RunState) { levels++ })
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "rec"})
	if err != nil {
		t.Fatal(err)
	}
	st, err := rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil {
		t.Fatalf("tick: %v", err)
	}
	if st.Status != durable.RunFailed || !strings.Contains(st.Error, "Subworkflow 'rec' failed: ") {
		t.Fatalf("root run %s (%.200q); want it failed with the subworkflow's error once the nesting is too deep", st.Status, st.Error)
	}
	if !strings.Contains(st.Error, "nested deeper than the limit of") {
		t.Errorf("root run's error does not name the nesting limit: …%q", st.Error[max(0, len(st.Error)-200):])
	}
	if levels < 100 || levels > 1000 {
		t.Errorf("%d runs nested; want the limit to let a reasonable depth (100..1000) through", levels)
	}
}

// TestSubworkflowSelfRecursionRestartFailsRunsNotProcess: a process that
// dies in the middle of a self-recursive sync subworkflow leaves every
// level running at its checkpoint. A restart ticks them again (the
// scheduler's Recover, or a host re-ticking them one by one, the deepest
// first): each such tick nests from its own run, with a fresh depth, and
// must end in failures too, never in a stack overflow.
func TestSubworkflowSelfRecursionRestartFailsRunsNotProcess(t *testing.T) {
	if !runInChildProcess(t) {
		return
	}
	for _, order := range []string{"deepest first", "recover"} {
		st := memory.New()
		ids := interruptedRecursion(t, st, 150)
		rt := selfRecursiveRuntime(t, st, nil)
		ctx := context.Background()
		if order == "deepest first" {
			for _, id := range slices.Backward(ids) {
				if _, err := rt.Tick(ctx, id, runtime.TickOptions{}); err != nil {
					t.Fatalf("%s: re-tick of %s: %v", order, id, err)
				}
			}
		}
		sched, err := scheduler.New(scheduler.Config{Runtime: rt})
		if err != nil {
			t.Fatal(err)
		}
		if err := sched.Recover(ctx); err != nil {
			t.Fatalf("%s: recover: %v", order, err)
		}
		for i, id := range ids {
			run, err := st.RunGet(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if run.Status != durable.RunFailed {
				t.Fatalf("%s: level %d is %s (%.200q) after the restart, want failed", order, i, run.Status, run.Error)
			}
		}
	}
}

// interruptedRecursion starts "rec" on st and ticks it until the run
// depth levels down is reached, where the caller's context is cancelled
// (a process dying): it returns the runs of each level, outermost first,
// after checking they were left running.
func interruptedRecursion(t *testing.T, st store.Store, depth int) []string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var ids []string
	rt := selfRecursiveRuntime(t, st, func(run *durable.RunState) {
		if ids = append(ids, run.RunID); len(ids) == depth {
			cancel()
		}
	})
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "rec"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Tick(ctx, id, runtime.TickOptions{}); err == nil {
		t.Fatal("the interrupted tick reported no error")
	}
	if len(ids) != depth {
		t.Fatalf("the interrupted tick reached %d levels, want %d", len(ids), depth)
	}
	for i, id := range ids {
		run, err := st.RunGet(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if run.Status != durable.RunRunning {
			t.Fatalf("level %d is %s (%.200q) after the interruption, want running", i, run.Status, run.Error)
		}
	}
	return ids
}

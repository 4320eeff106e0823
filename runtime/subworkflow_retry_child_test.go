package runtime_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// Retries of a failed START_SUBWORKFLOW. Spec §2.10: only failed outcomes
// are retried, each attempt calling the handler again (§2.4 step 5);
// Python's runtime.py _execute_effect_with_retry calls
// _handle_start_subworkflow per attempt, and that calls self.start(): a
// new child run each time, ticked from its entry.

// retryNode is a node function that ignores its context.
func retryNode(f func(run *durable.RunState) runtime.StepPlan) runtime.NodeFunc {
	return func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
		return f(run), nil
	}
}

// retryChildWorkflows returns a child requesting one "flaky" effect and
// a parent running it as a sync subworkflow with payload (workflow_id
// added), storing the result at vars.sub.
func retryChildWorkflows(payload map[string]any) (parent, child *runtime.Workflow) {
	child = &runtime.Workflow{ID: "child", Entry: "c", Nodes: map[string]runtime.NodeFunc{
		"c": retryNode(func(run *durable.RunState) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: "flaky", Payload: map[string]any{}}, "d")
		}),
		"d": retryNode(func(run *durable.RunState) runtime.StepPlan { return runtime.Complete(map[string]any{"ok": true}) }),
	}}
	payload["workflow_id"] = "child"
	parent = &runtime.Workflow{ID: "parent", Entry: "p", Nodes: map[string]runtime.NodeFunc{
		"p": retryNode(func(run *durable.RunState) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectStartSubworkflow, Payload: payload, ResultKey: "sub"}, "q")
		}),
		"q": retryNode(func(run *durable.RunState) runtime.StepPlan {
			return runtime.Complete(map[string]any{"sub": run.Vars["sub"]})
		}),
	}}
	return parent, child
}

// newRetryRuntime returns a runtime over st retrying START_SUBWORKFLOW
// twice without waiting, with flaky as the "flaky" effect's handler.
func newRetryRuntime(t *testing.T, st *memory.Store, flaky runtime.HandlerFunc, wfs ...*runtime.Workflow) *runtime.Runtime {
	t.Helper()
	reg, err := runtime.NewRegistry(wfs...)
	if err != nil {
		t.Fatal(err)
	}
	var ticks atomic.Int64 // every reading a millisecond later: children are listed in creation order
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	rt, err := runtime.New(runtime.Config{
		Store: st, Registry: reg,
		Clock:    func() time.Time { return base.Add(time.Duration(ticks.Add(1)) * time.Millisecond) },
		Policy:   runtime.RetryPolicy{Attempts: map[durable.EffectType]int{durable.EffectStartSubworkflow: 2}},
		Sleep:    func(context.Context, time.Duration) error { return nil },
		Handlers: map[durable.EffectType]runtime.Handler{"flaky": {Func: flaky}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// children returns the child runs of parentID, oldest first.
func children(t *testing.T, st *memory.Store, parentID string) []*durable.RunState {
	t.Helper()
	kids, err := st.RunListChildren(context.Background(), parentID, "")
	if err != nil {
		t.Fatal(err)
	}
	return kids
}

// A retry of a sync START_SUBWORKFLOW whose child failed starts a second
// child and runs it: a transient failure inside the child does not fail
// the parent when the retry succeeds.
func TestSubworkflowRetryStartsANewChild(t *testing.T) {
	ctx := context.Background()
	var calls atomic.Int32
	parent, child := retryChildWorkflows(map[string]any{})
	st := memory.New()
	rt := newRetryRuntime(t, st, func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		if calls.Add(1) == 1 {
			return runtime.Failed("transient"), nil
		}
		return runtime.Completed(map[string]any{}), nil
	}, parent, child)
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "parent"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != durable.RunCompleted || calls.Load() != 2 {
		t.Fatalf("parent %s (%q), child effect run %d time(s); want the retry to run a new child and the parent to complete",
			got.Status, got.Error, calls.Load())
	}
	kids := children(t, st, id)
	if len(kids) != 2 || kids[0].Status != durable.RunFailed || kids[1].Status != durable.RunCompleted {
		t.Fatalf("children %v; want the failed first attempt's child and the completed retry's", childStatuses(kids))
	}
	sub, _ := got.Output["sub"].(map[string]any)
	if sub["sub_run_id"] != kids[1].RunID {
		t.Fatalf("result sub_run_id %v, want the retry's child %s", sub["sub_run_id"], kids[1].RunID)
	}
}

// A run replayed after an interruption (or a crash) goes on after its
// last failed attempt: the interrupted second attempt is made again under
// its number, finds the second child where the interruption left it and
// finishes it, starting no third one.
func TestSubworkflowRetryReplayFindsEachAttemptsChild(t *testing.T) {
	ctx := context.Background()
	var calls atomic.Int32
	tctx, shutdown := context.WithCancel(ctx)
	defer shutdown()
	parent, child := retryChildWorkflows(map[string]any{})
	st := memory.New()
	rt := newRetryRuntime(t, st, func(hctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		switch calls.Add(1) {
		case 1:
			return runtime.Failed("transient"), nil
		case 2: // the host shuts down while the second child's effect runs
			shutdown()
			return runtime.Outcome{}, context.Cause(hctx)
		}
		return runtime.Completed(map[string]any{}), nil
	}, parent, child)
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "parent"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Tick(tctx, id, runtime.TickOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted tick: %v, want context.Canceled", err)
	}
	if kids := children(t, st, id); len(kids) != 2 || kids[1].Status != durable.RunRunning {
		t.Fatalf("children after the interruption %v; want [failed running]", childStatuses(kids))
	}
	got, err := rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	kids := children(t, st, id)
	if got.Status != durable.RunCompleted || len(kids) != 2 || kids[1].Status != durable.RunCompleted || calls.Load() != 3 {
		t.Fatalf("replay: parent %s (%q), children %v, child effect run %d times; want the second child finished "+
			"(3 runs of its effect in all) and the parent completed", got.Status, got.Error, childStatuses(kids), calls.Load())
	}
}

// A child named by payload.run_id is the only run with that id: a retry
// finds it as it ended instead of running it again (payload.run_id is
// ours, Python has no such field; docs/compatibility.md "child run id").
func TestSubworkflowRetryReusesNamedChild(t *testing.T) {
	ctx := context.Background()
	var calls atomic.Int32
	parent, child := retryChildWorkflows(map[string]any{"run_id": "named-child"})
	st := memory.New()
	rt := newRetryRuntime(t, st, func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		calls.Add(1)
		return runtime.Failed("broken"), nil
	}, parent, child)
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "parent"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	kids := children(t, st, id)
	if got.Status != durable.RunFailed || !strings.HasPrefix(got.Error, "Effect failed after 2 attempts: Subworkflow 'child' failed:") ||
		calls.Load() != 1 || len(kids) != 1 || kids[0].RunID != "named-child" {
		t.Fatalf("parent %s (%q), children %v, child effect run %d time(s); want the named child run once and "+
			"found failed by the retry", got.Status, got.Error, childStatuses(kids), calls.Load())
	}
}

func childStatuses(kids []*durable.RunState) []durable.RunStatus {
	out := make([]durable.RunStatus, len(kids))
	for i, k := range kids {
		out[i] = k.Status
	}
	return out
}

package runtime_test

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// The limit reads of a node see the run it is ticking. Python's
// Runtime.check_limits(run) and get_limit_status(run) read the RunState
// they are given ("the runtime provides warnings, workflow nodes are
// responsible for enforcement decisions", runtime.py check_limits); spec
// §1.14: current_iteration "is never incremented by the kernel (workflows
// do it)". Pure transitions are committed only at checkpoints
// (docs/architecture.md), so the stored run lags behind the one a node
// changes.

// countingLoop is a loop that counts iterations in _limits and asks check
// for a verdict on each; check returns the output to complete with, or nil
// to go round again.
func countingLoop(check func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (map[string]any, error)) *runtime.Workflow {
	return &runtime.Workflow{ID: "loop", Entry: "iter", Nodes: map[string]runtime.NodeFunc{
		"iter": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			l := run.Vars["_limits"].(map[string]any)
			cur, _ := runtime.AsInt(l["current_iteration"])
			l["current_iteration"] = cur + 1
			return runtime.Next("check"), nil
		},
		"check": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			out, err := check(ctx, run, rc)
			if err != nil || out == nil {
				return runtime.Next("iter"), err
			}
			return runtime.Complete(out), nil
		},
	}}
}

// tickLoop runs wf to its end in one tick with max_iterations 3.
func tickLoop(t *testing.T, wf *runtime.Workflow) *durable.RunState {
	t.Helper()
	ctx := context.Background()
	reg, err := runtime.NewRegistry(wf)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := runtime.New(runtime.Config{Store: memory.New(), Registry: reg, Limits: runtime.LimitsConfig{MaxIterations: 3}})
	if err != nil {
		t.Fatal(err)
	}
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: wf.ID})
	if err != nil {
		t.Fatal(err)
	}
	st, err := rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// exceededAt returns the current count of an exceeded iterations limit
// among warns, or 0.
func exceededAt(warns []runtime.LimitWarning) int64 {
	for _, w := range warns {
		if w.LimitType == "iterations" && w.Status == "exceeded" {
			return w.Current
		}
	}
	return 0
}

func TestCheckLimitsFromNodeSeesUncommittedIterations(t *testing.T) {
	st := tickLoop(t, countingLoop(func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (map[string]any, error) {
		warns, err := rc.Runtime().CheckLimits(ctx, run.RunID)
		if n := exceededAt(warns); err != nil || n > 0 {
			return map[string]any{"iterations": n}, err
		}
		return nil, nil
	}))
	if it, _ := runtime.AsInt(st.Output["iterations"]); st.Status != durable.RunCompleted || it != 3 {
		t.Fatalf("run %s, output %v, _limits %v; want completed after 3 iterations: CheckLimits called by the run's "+
			"own node must see the run as the node holds it", st.Status, st.Output, st.Vars["_limits"])
	}
}

func TestGetLimitStatusFromNodeSeesUncommittedIterations(t *testing.T) {
	st := tickLoop(t, countingLoop(func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (map[string]any, error) {
		status, err := rc.Runtime().GetLimitStatus(ctx, run.RunID)
		if err != nil {
			return nil, err
		}
		it := status["iterations"].(map[string]any)
		if it["current"].(int64) >= it["max"].(int64) {
			return map[string]any{"iterations": it["current"]}, nil
		}
		return nil, nil
	}))
	if it, _ := runtime.AsInt(st.Output["iterations"]); st.Status != durable.RunCompleted || it != 3 {
		t.Fatalf("run %s, output %v; want completed after 3 iterations: GetLimitStatus called by the run's own "+
			"node must see the run as the node holds it", st.Status, st.Output)
	}
}

// CheckLimitsOf and LimitStatusOf read the run they are given, as
// Python's check_limits(run) does.
func TestCheckLimitsOfReadsTheGivenRun(t *testing.T) {
	st := tickLoop(t, countingLoop(func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (map[string]any, error) {
		if n := exceededAt(runtime.CheckLimitsOf(run)); n > 0 {
			return map[string]any{"iterations": n, "status": runtime.LimitStatusOf(run)}, nil
		}
		return nil, nil
	}))
	it, _ := runtime.AsInt(st.Output["iterations"])
	status, _ := st.Output["status"].(map[string]any)
	iters, _ := status["iterations"].(map[string]any)
	cur, _ := runtime.AsInt(iters["current"])
	if st.Status != durable.RunCompleted || it != 3 || cur != 3 || iters["warning"] != true {
		t.Fatalf("run %s, output %v; want completed after 3 iterations with the status of the third", st.Status, st.Output)
	}
}

package runtime_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/memory"
)

func subwfInt(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case int:
		return int64(x)
	case float64:
		return int64(x)
	case json.Number:
		n, _ := x.Int64()
		return n
	}
	return 0
}

// subwfWorkflows: "p" requests START_SUBWORKFLOW with vars.payload, result at
// "sub", then completes with {"sub": vars.sub}; "spin" makes vars.n steps
// and completes.
func subwfWorkflows() []*runtime.Workflow {
	p := &runtime.Workflow{ID: "p", Entry: "start", Nodes: map[string]runtime.NodeFunc{
		"start": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			pl, _ := run.Vars["payload"].(map[string]any)
			cp := map[string]any{}
			for k, v := range pl {
				cp[k] = v
			}
			return runtime.Request(&durable.Effect{Type: durable.EffectStartSubworkflow, Payload: cp, ResultKey: "sub"}, "done"), nil
		},
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"sub": run.Vars["sub"]}), nil
		},
	}}
	spin := &runtime.Workflow{ID: "spin", Entry: "s", Nodes: map[string]runtime.NodeFunc{
		"s": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			i := subwfInt(run.Vars["i"]) + 1
			run.Vars["i"] = i
			if i >= subwfInt(run.Vars["n"]) {
				return runtime.Complete(map[string]any{"steps": i}), nil
			}
			return runtime.Next("s"), nil
		},
	}}
	return []*runtime.Workflow{p, spin}
}

// A sync START_SUBWORKFLOW ticks its child with Python's fixed budget:
// _handle_start_subworkflow (core/runtime.py) calls tick with its default
// max_steps=100, whatever budget the host ticks its runs with, so a child
// still running after 100 steps fails the effect ("Unexpected subworkflow
// status: running") and one needing fewer completes, under a host budget
// of 10 or of 1000 alike.
func TestSyncSubworkflowChildHasPythonsStepBudget(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		hostSteps, childSteps int
		want                  durable.RunStatus
	}{
		{10, 50, durable.RunCompleted}, // Python: 50 < 100, the child completes inline
		{1000, 150, durable.RunFailed}, // Python: still running after 100 steps
	} {
		reg, err := runtime.NewRegistry(subwfWorkflows()...)
		if err != nil {
			t.Fatal(err)
		}
		rt, err := runtime.New(runtime.Config{Store: memory.New(), Registry: reg, MaxSteps: tc.hostSteps})
		if err != nil {
			t.Fatal(err)
		}
		id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "p", Vars: map[string]any{
			"payload": map[string]any{"workflow_id": "spin", "vars": map[string]any{"n": int64(tc.childSteps)}},
		}})
		if err != nil {
			t.Fatal(err)
		}
		st, err := rt.Tick(ctx, id, runtime.TickOptions{MaxSteps: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if st.Status != tc.want {
			t.Errorf("Config.MaxSteps %d, sync child of %d steps: parent %s (error %q); Python's sync child gets 100 steps whatever the host's budget: parent %s",
				tc.hostSteps, tc.childSteps, st.Status, st.Error, tc.want)
		} else if tc.want == durable.RunFailed && st.Error != "Effect failed after 1 attempts: Unexpected subworkflow status: running" {
			t.Errorf("error %q", st.Error)
		}
	}
}

// A workflow_id that is not a string names no workflow: Python's registry
// is a dict keyed by string ids, so the number 5 is not found even when a
// workflow "5" is registered, and the effect fails with "Workflow '5' not
// found in registry".
func TestSubworkflowNumericWorkflowIDIsNotFound(t *testing.T) {
	ctx := context.Background()
	five := &runtime.Workflow{ID: "5", Entry: "n", Nodes: map[string]runtime.NodeFunc{
		"n": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"ran": true}), nil
		},
	}}
	reg, err := runtime.NewRegistry(append(subwfWorkflows(), five)...)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := runtime.New(runtime.Config{Store: memory.New(), Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "p", Vars: map[string]any{
		"payload": map[string]any{"workflow_id": int64(5)},
	}})
	if err != nil {
		t.Fatal(err)
	}
	st, err := rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := "Effect failed after 1 attempts: Workflow '5' not found in registry"
	if st.Status != durable.RunFailed || st.Error != want {
		t.Errorf("workflow_id 5 (a number) with a workflow \"5\" registered: parent %s, error %q, sub %v; Python: failed with %q",
			st.Status, st.Error, st.Vars["sub"], want)
	}
}

// The sync nesting limit (docs/compatibility.md, "sync subworkflow
// nesting") stands for Python's RecursionError, which
// _handle_start_subworkflow catches around the child's tick and returns as
// a failed effect, never wrapped as a tool result (wrap_as_tool_result
// only wraps a child that ended failed): the innermost run fails.
func TestSyncSubworkflowDepthLimitFailsEvenWhenWrapped(t *testing.T) {
	ctx := context.Background()
	rec := &runtime.Workflow{ID: "rec", Entry: "call", Nodes: map[string]runtime.NodeFunc{
		"call": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectStartSubworkflow, Payload: map[string]any{
				"workflow_id": "rec", "wrap_as_tool_result": true,
			}, ResultKey: "sub"}, "done"), nil
		},
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"ok": true}), nil
		},
	}}
	reg, err := runtime.NewRegistry(rec)
	if err != nil {
		t.Fatal(err)
	}
	st := memory.New()
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "rec"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Tick(ctx, id, runtime.TickOptions{}); err != nil {
		t.Fatal(err)
	}
	// Walk down to the innermost run: the one whose effect hit the limit.
	cur := id
	depth := 0
	for {
		kids, err := st.RunListChildren(ctx, cur, "")
		if err != nil {
			t.Fatal(err)
		}
		if len(kids) == 0 {
			break
		}
		cur = kids[0].RunID
		depth++
	}
	inner, err := rt.GetState(ctx, cur)
	if err != nil {
		t.Fatal(err)
	}
	if inner.Status != durable.RunFailed {
		t.Errorf("innermost run (depth %d): %s, sub %v; the documented limit (and Python's RecursionError, caught unwrapped) fails its effect, so it fails",
			depth, inner.Status, inner.Vars["sub"])
	}
}

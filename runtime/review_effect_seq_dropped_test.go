package runtime_test

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// A node may replace its run's vars with a new map (kernel_fields.go keeps
// such a map), which drops vars._runtime.effect_seq. The next effects then
// count again from 0, so an identical effect of the same node made again
// (a loop, the v0.7 contract: it runs again) gets the key of the one made
// before the replacement, and the run, taken for one the Python runtime
// left (no effect_seq), looks that key up and reuses the earlier result:
// the effect is not made again.
func TestReviewLoopAfterVarsReplacedRunsEffectAgain(t *testing.T) {
	calls := 0
	h := runtime.Handler{Local: true, Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		calls++
		return runtime.Completed(map[string]any{"call": calls}), nil
	}}
	wf := &runtime.Workflow{ID: "loop", Entry: "act", Nodes: map[string]runtime.NodeFunc{
		"act": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: "job", ResultKey: "r", Payload: map[string]any{"n": 1}}, "next"), nil
		},
		"next": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			if run.Vars["again"] == nil {
				// A new task: fresh vars, as a node may set them.
				run.Vars = map[string]any{"again": true}
				return runtime.Next("act"), nil
			}
			return runtime.Complete(map[string]any{"r": run.Vars["r"]}), nil
		},
	}}
	for name, local := range map[string]bool{"local handler": true, "external handler": false} {
		t.Run(name, func(t *testing.T) {
			calls = 0
			h.Local = local
			rt := applyRuntime(t, runtime.Config{Handlers: map[durable.EffectType]runtime.Handler{"job": h}}, wf)
			id, err := rt.Start(t.Context(), runtime.StartParams{WorkflowID: "loop"})
			if err != nil {
				t.Fatal(err)
			}
			run, err := rt.Tick(t.Context(), id, runtime.TickOptions{})
			if err != nil || run.Status != durable.RunCompleted {
				t.Fatalf("tick: %v, %v", run, err)
			}
			if calls != 2 {
				t.Fatalf("handler called %d times, want 2: the effect made again after the vars were replaced "+
					"reused the first one's result (output %v)", calls, run.Output)
			}
		})
	}
}

// The same through a host's UpdateVars that replaces _runtime while the
// run waits between two turns of a loop.
func TestReviewLoopAfterHostReplacedRuntimeRunsEffectAgain(t *testing.T) {
	calls := 0
	h := runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		calls++
		return runtime.Completed(map[string]any{"call": calls}), nil
	}}
	wf := &runtime.Workflow{ID: "loop", Entry: "act", Nodes: map[string]runtime.NodeFunc{
		"act": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: "job", ResultKey: "r", Payload: map[string]any{"n": 1}}, "ask"), nil
		},
		"ask": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			if run.Vars["answer"] != nil {
				return runtime.Complete(map[string]any{"r": run.Vars["r"]}), nil
			}
			return runtime.Request(&durable.Effect{Type: durable.EffectAskUser, ResultKey: "answer", Payload: map[string]any{"prompt": "again?"}}, "act"), nil
		},
	}}
	rt := applyRuntime(t, runtime.Config{Handlers: map[durable.EffectType]runtime.Handler{"job": h}}, wf)
	id, err := rt.Start(t.Context(), runtime.StartParams{WorkflowID: "loop"})
	if err != nil {
		t.Fatal(err)
	}
	if run, err := rt.Tick(t.Context(), id, runtime.TickOptions{}); err != nil || run.Status != durable.RunWaiting {
		t.Fatalf("tick: %v, %v", run, err)
	}
	if err := rt.UpdateVars(t.Context(), id, func(vars map[string]any) (bool, error) {
		vars["_runtime"] = map[string]any{"note": "host state"}
		return true, nil
	}); err != nil {
		t.Fatal(err)
	}
	run, err := rt.Resume(t.Context(), runtime.ResumeParams{RunID: id, Payload: map[string]any{"text": "yes"}})
	if err != nil || run.Status != durable.RunCompleted {
		t.Fatalf("resume: %v, %v", run, err)
	}
	if calls != 2 {
		t.Fatalf("handler called %d times, want 2 (output %v)", calls, run.Output)
	}
}

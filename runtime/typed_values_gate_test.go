package runtime_test

// Edge cases of the kernel's core loop: typed values and the step gate.
// Each test's comment gives the rule it checks.

import (
	"context"
	"reflect"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// StepGate's doc (tick.go): "StepGate is consulted before each step.
// Returning ErrStepGateClosed stops the tick cleanly at that boundary".
// session.step looks the current node up before it consults the gate, so
// a run standing at a node its workflow does not have is failed for good
// (a terminal, durable change) by a tick whose gate is closed: a host that
// closed the gate (a host pause, a workflow being re-registered) finds the
// run failed though it asked for no step to run.
func TestClosedGateFailsRunAtUnknownNode(t *testing.T) {
	ctx := context.Background()
	wf := &runtime.Workflow{ID: "w", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Next("gone"), nil // e.g. a node a newer version of the workflow renamed
		},
	}}
	f := setup(t, wf)
	id, err := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "w"})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := f.rt.Tick(ctx, id, runtime.TickOptions{MaxSteps: 1}); err != nil || st.CurrentNode != "gone" {
		t.Fatalf("setup: %v %+v", err, st)
	}
	gateCalls := 0
	st, err := f.rt.Tick(ctx, id, runtime.TickOptions{StepGate: func(ctx context.Context, run *durable.RunState, nodeID string) error {
		gateCalls++
		return runtime.ErrStepGateClosed
	}})
	if err != nil {
		t.Fatalf("tick with a closed gate: %v", err)
	}
	stored, _ := f.rt.GetState(ctx, id)
	if st.Status != durable.RunRunning || stored.Status != durable.RunRunning || gateCalls != 1 {
		t.Fatalf("a tick whose gate is closed changed the run: returned %s, stored %s (error %q), gate consulted %d times, want the run left running and the gate consulted once",
			st.Status, stored.Status, stored.Error, gateCalls)
	}
}

// SetPath's doc (vars.go): it creates {} "for every missing or non-object
// intermediate". An object a node put in vars as a typed Go map (the
// kernel accepts any JSON value in vars; the stores read it back as
// map[string]any) is not map[string]any, so SetPath replaces it by {} and
// its other members are lost when an effect's result is written under it
// (storeResult) in the same session. After a checkpoint and a reload the
// same object is map[string]any and is kept: the run's outcome depends on
// where a tick's step budget (or any checkpoint) happened to fall.
func TestResultKeyUnderTypedObjectKeepsMembers(t *testing.T) {
	ctx := context.Background()
	wf := &runtime.Workflow{ID: "w", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			run.Vars["ctx"] = map[string]string{"topic": "go"}
			return runtime.Next("b"), nil
		},
		"b": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectAnswerUser,
				Payload: map[string]any{"message": "hi"}, ResultKey: "ctx.answer"}, "c"), nil
		},
		"c": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"ctx": run.Vars["ctx"]}), nil
		},
	}}
	outputs := map[bool]map[string]any{}
	for _, split := range []bool{true, false} {
		f := setup(t, wf)
		id, err := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "w"})
		if err != nil {
			t.Fatal(err)
		}
		if split { // a checkpoint between the write and the effect
			if _, err := f.rt.Tick(ctx, id, runtime.TickOptions{MaxSteps: 1}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := f.rt.Tick(ctx, id, runtime.TickOptions{}); err != nil {
			t.Fatal(err)
		}
		st, _ := f.rt.GetState(ctx, id)
		if st.Status != durable.RunCompleted {
			t.Fatalf("split=%v: %s %q", split, st.Status, st.Error)
		}
		c, _ := st.Output["ctx"].(map[string]any)
		if c["topic"] != "go" {
			t.Errorf("split=%v: vars.ctx.topic lost when the result was written at ctx.answer: ctx = %v", split, c)
		}
		outputs[split] = st.Output
	}
	if !reflect.DeepEqual(outputs[true], outputs[false]) {
		t.Errorf("the outcome depends on the step budget:\n  with a checkpoint between: %v\n  in one tick:               %v", outputs[true], outputs[false])
	}
}

// noteTokensUsed (limits.go) reads usage from the handler's outcome with
// a map[string]any assertion. A host LLM handler whose result holds usage
// as a typed Go map (a JSON object the kernel accepts: checkOutcomeJSON
// passes it and the stores save it) leaves _limits.estimated_tokens_used
// unchanged, while the same result read back from the ledger (a reused
// prior result after a crash) is noted: Python notes it
// (isinstance(usage, dict) of the same object).
func TestTokensUsedFromTypedUsage(t *testing.T) {
	ctx := context.Background()
	wf := &runtime.Workflow{ID: "w", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectLLMCall,
				Payload: map[string]any{"prompt": "hi"}, ResultKey: "r"}, "c"), nil
		},
		"c": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{}), nil
		},
	}}
	f := setup(t, wf)
	f.rt.SetHandler(durable.EffectLLMCall, runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		return runtime.Completed(map[string]any{"content": "x", "usage": map[string]int64{"input_tokens": 42}}), nil
	}})
	id, err := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "w"})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := f.rt.Tick(ctx, id, runtime.TickOptions{}); err != nil || st.Status != durable.RunCompleted {
		t.Fatalf("%v %+v", err, st)
	}
	ls, err := f.rt.GetLimitStatus(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	tok, _ := ls["tokens"].(map[string]any)
	if tok["estimated_used"] != int64(42) {
		t.Fatalf("estimated_tokens_used = %v after an LLM call whose usage.input_tokens was 42", tok["estimated_used"])
	}
}

package runtime_test

import (
	"context"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// Object keys that are not UTF-8 are stored with U+FFFD in place of the
// bad bytes (docs/compatibility.md). Two distinct keys that differ only in
// their invalid bytes ("k\xff", "k\xfe") would become the same key, one
// of the two values dropped without an error (which one depending on Go's
// map order): they are refused, the error naming where.
func TestStartRefusesVarsKeysCollidingOnceRepaired(t *testing.T) {
	ctx := context.Background()
	wf := &runtime.Workflow{ID: "w", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(nil), nil
		},
	}}
	rt := applyRuntime(t, runtime.Config{}, wf)
	vars := map[string]any{"m": map[string]any{"k\xff": "first", "k\xfe": "second"}}
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "w", Vars: vars})
	if err == nil || !strings.Contains(err.Error(), "vars.m") || !strings.Contains(err.Error(), "same key") {
		t.Fatalf("Start: run %q, %v; want a refusal naming vars.m and the colliding keys", id, err)
	}
}

// The same through Resume: the payload is refused, the run left waiting.
func TestResumeRefusesPayloadKeysCollidingOnceRepaired(t *testing.T) {
	ctx := context.Background()
	wf := &runtime.Workflow{ID: "w", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectAskUser, ResultKey: "answer",
				Payload: map[string]any{"prompt": "?", "wait_key": "k"}}, "b"), nil
		},
		"b": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectAskUser,
				Payload: map[string]any{"prompt": "?", "wait_key": "k2"}}, "b"), nil
		},
	}}
	rt := applyRuntime(t, runtime.Config{}, wf)
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "w"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Tick(ctx, id, runtime.TickOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = rt.Resume(ctx, runtime.ResumeParams{RunID: id, WaitKey: "k",
		Payload: map[string]any{"k\xff": "first", "k\xfe": "second"}})
	if err == nil || !strings.Contains(err.Error(), "payload") || !strings.Contains(err.Error(), "same key") {
		t.Fatalf("Resume: %v; want a refusal naming the payload and the colliding keys", err)
	}
	if run, err := rt.GetState(ctx, id); err != nil || run.Status != durable.RunWaiting {
		t.Fatalf("after the refused resume: %v, %v; want the run still waiting", run, err)
	}
}

package runtime_test

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// The record a run's end appends is told apart from the events a
// workflow emits, even one a workflow names abstract.status itself: the
// gateway ends a ledger stream on it.
func TestIsTerminalStatusRecordOnlyForTheKernelsRecord(t *testing.T) {
	t.Parallel()
	emitter := &runtime.Workflow{ID: "emitter", Entry: "emit", Nodes: map[string]runtime.NodeFunc{
		"emit": func(ctx context.Context, run *durable.RunState, _ *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.StepPlan{NextNode: "done", Effect: &durable.Effect{Type: durable.EffectEmitEvent,
				Payload: map[string]any{"name": runtime.StatusEventName, "scope": "session", "payload": map[string]any{"text": "completed"}}}}, nil
		},
		"done": func(ctx context.Context, run *durable.RunState, _ *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.StepPlan{CompleteOutput: map[string]any{"ok": true}}, nil
		},
	}}
	f := setup(t, emitter)
	ctx := context.Background()
	id, err := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "emitter"})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := f.rt.Tick(ctx, id, runtime.TickOptions{}); err != nil || st.Status != durable.RunCompleted {
		t.Fatalf("tick: %v, %v; want completed", st, err)
	}
	recs, err := f.rt.GetLedger(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	terminal := 0
	for i, r := range recs {
		if runtime.IsTerminalStatusRecord(r) {
			terminal++
			if i != len(recs)-1 || r.IdempotencyKey != runtime.TerminalStatusKey(durable.RunCompleted) {
				t.Errorf("record %d (key %q) taken for the terminal record; want only the last one, key %q",
					i, r.IdempotencyKey, runtime.TerminalStatusKey(durable.RunCompleted))
			}
		}
	}
	if terminal != 1 {
		t.Errorf("%d terminal records among %d; want 1 (the workflow's own abstract.status event is not one)", terminal, len(recs))
	}
	if runtime.IsTerminalStatusRecord(nil) {
		t.Error("IsTerminalStatusRecord(nil) = true")
	}
}

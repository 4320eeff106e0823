package runtime_test

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// A local handler that leaves the run unserialisable gets its attempt's
// completion recorded failed, and only that: under the key the ledger holds
// the attempt's STARTED record, then one FAILED end. Failing every pending
// record under the key would turn the STARTED record into a second failure.
func TestApplyEffectUnserialisableKeepsTheStartedRecord(t *testing.T) {
	ctx := t.Context()
	bad := func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		req.Run.Vars["bad"] = func() {}
		return runtime.Completed(map[string]any{"ok": true}), nil
	}
	rt := applyRuntime(t, runtime.Config{Handlers: map[durable.EffectType]runtime.Handler{"bad": {Func: bad, Local: true}}}, askThenDone())
	run := wevStartTick(t, rt, runtime.StartParams{WorkflowID: "ask"})
	if _, err := rt.ApplyEffect(ctx, runtime.ApplyEffectParams{RunID: run.RunID, NodeID: "n", IdempotencyKey: "k", Effect: &durable.Effect{Type: "bad"}}); err == nil {
		t.Fatal("apply of a handler that broke the run succeeded")
	}
	var got []durable.StepStatus
	for _, r := range ledgerOf(t, rt, run.RunID) {
		if r.IdempotencyKey == "k" {
			got = append(got, r.Status)
		}
	}
	if len(got) != 2 || got[0] != durable.StepStarted || got[1] != durable.StepFailed {
		t.Fatalf("records under the key: %v, want [started failed]", got)
	}
}

package runtime

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// An attempt a runner that died left open (a ledger written before
// replays closed such attempts, or by Python) stays open when a later
// attempt of the same node ends: an end closes the attempt of its own
// step, not every attempt of its node. Cancel then ends the orphan
// "cancelled". Matching ends to attempts by node (openAttempts) would take
// the later attempt's completion for the orphan's and leave it open.
func TestCancelEndsAnOrphanAttemptOfANodeWhoseLaterAttemptCompleted(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	llm := Handler{Func: func(context.Context, *EffectRequest) (Outcome, error) {
		return Completed(map[string]any{"answer": "42"}), nil
	}}
	wf := &Workflow{ID: "w", Entry: "call", Nodes: map[string]NodeFunc{
		"call": errNode(func(run *durable.RunState) StepPlan {
			return Request(&durable.Effect{Type: "llm", Payload: map[string]any{"prompt": "q"}, ResultKey: "r"}, "ask")
		}),
		"ask": errNode(func(run *durable.RunState) StepPlan {
			return Request(&durable.Effect{Type: durable.EffectAskUser, Payload: map[string]any{"prompt": "?"}, ResultKey: "x"}, "")
		}),
	}}
	rt := errRuntime(t, st, Config{Handlers: map[durable.EffectType]Handler{"llm": llm}}, wf)
	id := startRun(t, rt, StartParams{})
	orphan := &durable.StepRecord{StepID: "orphan-attempt", RunID: id, NodeID: "call", Status: durable.StepStarted,
		Effect: &durable.Effect{Type: "llm", Payload: map[string]any{}}, Attempt: 1, IdempotencyKey: "older-key"}
	if err := st.LedgerAppend(ctx, id, []*durable.StepRecord{orphan}); err != nil {
		t.Fatal(err)
	}
	if run, err := rt.Tick(ctx, id, TickOptions{}); err != nil || run.Status != durable.RunWaiting {
		t.Fatalf("tick: %v %v; want the llm call completed and the run waiting on the ask", run, err)
	}
	if _, err := rt.Cancel(ctx, id, ""); err != nil {
		t.Fatal(err)
	}
	var orphanEnd *durable.StepRecord
	for _, r := range listLedger(t, st, id) {
		if r.StepID == orphan.StepID && r.Status != durable.StepStarted {
			orphanEnd = r
		}
	}
	if orphanEnd == nil || orphanEnd.Status != durable.StepCancelled || orphanEnd.Error != "cancelled" {
		t.Fatalf("end of the orphan attempt: %+v; want a cancelled end, error \"cancelled\"", orphanEnd)
	}
}

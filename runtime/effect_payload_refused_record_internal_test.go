package runtime

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// TestRefusedEffectPayloadFailureIsRecorded: a node whose effect payload
// is not JSON (a NaN) fails its run before any attempt, and the ledger
// says so with a failed record naming the node and the error, as for
// every other node failure (docs/compatibility.md, "node function
// error"): a ledger reader must not see a failed run without a failed
// step.
func TestRefusedEffectPayloadFailureIsRecorded(t *testing.T) {
	ctx := context.Background()
	wf := effectThenComplete(&durable.Effect{Type: "llm", Payload: map[string]any{"temperature": math.NaN()}})
	calls := 0
	rt := errRuntime(t, memory.New(), Config{Handlers: map[durable.EffectType]Handler{
		"llm": {Func: func(context.Context, *EffectRequest) (Outcome, error) {
			calls++
			return Completed(map[string]any{}), nil
		}},
	}}, wf)
	id, st := startTickW(t, rt)
	if st.Status != durable.RunFailed || !strings.Contains(st.Error, "temperature") || calls != 0 {
		t.Fatalf("status %s error %q, handler called %d times; want failed naming the payload path, no call", st.Status, st.Error, calls)
	}
	recs, err := rt.GetLedger(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.Status == durable.StepFailed && r.NodeID == "a" && r.Error == st.Error {
			return
		}
	}
	var lines []string
	for _, r := range recs {
		lines = append(lines, string(r.Status)+" node="+r.NodeID+" key="+r.IdempotencyKey+" err="+r.Error)
	}
	t.Fatalf("run failed with %q but the ledger holds no failed record for node a:\n%s", st.Error, strings.Join(lines, "\n"))
}

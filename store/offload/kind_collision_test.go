package offload_test

import (
	"context"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/runtime"
)

// LedgerFindCompleted's restore decides how to put an offloaded value
// back from the artifact's content type (text/… → string,
// application/json → decoded value), and artifact ids are content
// addressed per run, not per type. A result holding an object and,
// elsewhere, the same object's compact JSON as text (an LLM's raw JSON
// answer next to its parsed form) was offloaded to one artifact, whose
// content type was whichever was stored last, so a replay restored the
// object as a string (or the text as an object). The second kind now
// gets an id of its own.
func TestReplayRestoresObjectAndItsJSONTextApart(t *testing.T) {
	parsed := map[string]any{"a": strings.Repeat("x", 60), "b": strings.Repeat("y", 60)}
	raw, err := pyjson.Marshal(parsed, pyjson.Canonical) // 135 bytes > the 100-byte threshold; each member < 100
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	handlers := map[durable.EffectType]runtime.Handler{
		durable.EffectLLMCall: {Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
			calls++
			return runtime.Completed(map[string]any{"data": pyjson.Clone(parsed), "raw": string(raw)}), nil
		}},
	}
	wf := &runtime.Workflow{ID: "w", Entry: "call", Nodes: map[string]runtime.NodeFunc{
		"call": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectLLMCall,
				Payload: map[string]any{"prompt": "hi"}, ResultKey: "answer"}, "done"), nil
		},
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"answer": run.Vars["answer"]}), nil
		},
	}}
	run := tickAfterFailedCommit(t, wf, handlers, 2) // the outcome's commit fails; the replay reads the ledger
	if calls != 1 {
		t.Fatalf("handler called %d times; the replay should reuse the recorded result", calls)
	}
	answer, _ := run.Output["answer"].(map[string]any)
	if _, ok := answer["data"].(map[string]any); !ok {
		t.Errorf("replayed result data = %T %v, want the object the handler returned", answer["data"], answer["data"])
	}
	if s, ok := answer["raw"].(string); !ok || s != string(raw) {
		t.Errorf("replayed result raw = %T %v, want the JSON text the handler returned", answer["raw"], answer["raw"])
	}
}

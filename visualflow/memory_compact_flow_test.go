package visualflow

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// A memory_compact node runs the runtime's built-in MEMORY_COMPACT end to
// end: its pins reach the payload, the summariser child calls the host's
// LLM_CALL, and the node's span_id pin (here its outputKey) names the
// archive the summary message points to.
func TestMemoryCompactNodeCompactsTheRunContext(t *testing.T) {
	t.Parallel()
	wf, err := Compile(mustFlow(t, outputKeyFlow("memory_compact",
		`"inputs":[{"id":"exec-in","type":"execution"},{"id":"preserve_recent","type":"number"},{"id":"focus","type":"string"}],
		 "outputs":[{"id":"exec-out","type":"execution"},{"id":"span_id","type":"string"}],
		 "pinDefaults":{"preserve_recent":1,"focus":"plans"}`)), CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := runtime.NewRegistry(wf)
	if err != nil {
		t.Fatal(err)
	}
	var prompt any
	llm := runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		prompt = req.Effect.Payload["prompt"]
		return runtime.Completed(map[string]any{"content": `{"summary": "we planned", "key_points": ["plan"], "confidence": 0.9}`}), nil
	}}
	rt, err := runtime.New(runtime.Config{
		Store: memory.New(), Registry: reg, Artifacts: artifact.NewMemory(),
		Handlers: map[durable.EffectType]runtime.Handler{durable.EffectLLMCall: llm},
		Clock:    func() time.Time { return fixedClock },
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	msgs := []any{
		map[string]any{"role": "user", "content": "let's plan"},
		map[string]any{"role": "assistant", "content": "ok"},
		map[string]any{"role": "user", "content": "next"},
	}
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: wf.ID, Vars: map[string]any{"context": map[string]any{"messages": msgs}}})
	if err != nil {
		t.Fatal(err)
	}
	st, err := rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	if p, _ := prompt.(string); !strings.Contains(p, "Focus: plans\n") || !strings.HasSuffix(p, "user: let's plan\nassistant: ok\n") {
		t.Errorf("LLM prompt %q; want the focus and the two older messages", prompt)
	}
	spanID, _ := st.Vars["saved"].(string)
	c, _ := st.Vars["context"].(map[string]any)
	got, _ := c["messages"].([]any)
	if spanID == "" || len(got) != 2 {
		t.Fatalf("span_id %q, messages %s; want a span and summary + 1 recent", spanID, jsonText(t, got))
	}
	if s := got[0].(map[string]any)["content"]; s != "[CONVERSATION HISTORY SUMMARY span_id="+spanID+"]: we planned" {
		t.Errorf("summary message %q", s)
	}
}

package visualflow

import (
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// The reference maps an llm_call outcome's tool_calls through
// _as_dict_list: a single tool-call object is a one-item list (and counts
// in meta.tool_calls), not dropped.
func TestReviewLLMCallSingleToolCallObjectIsMapped(t *testing.T) {
	t.Parallel()
	call := map[string]any{"name": "search", "arguments": map[string]any{"q": "x"}}
	for _, pin := range []string{"tool_calls", "meta"} {
		flow := effectWiredFlow("llm_call", `{"prompt":"hi"}`, `{}`, pin)
		sc := &scripted{results: []any{map[string]any{"content": "", "tool_calls": call}}}
		_, st := runFlows(t, []string{flow}, nil, map[durable.EffectType]runtime.Handler{durable.EffectLLMCall: sc.handler()}, nil)
		if st.Status != durable.RunCompleted {
			t.Fatalf("status %s (%s)", st.Status, st.Error)
		}
		switch pin {
		case "tool_calls":
			if got, want := jsonText(t, st.Output["r"]), jsonText(t, []any{call}); got != want {
				t.Errorf("tool_calls pin = %s, want %s", got, want)
			}
		case "meta":
			meta, _ := st.Output["r"].(map[string]any)
			if got := jsonText(t, meta["tool_calls"]); got != "1" {
				t.Errorf("meta.tool_calls = %s, want 1", got)
			}
		}
	}
}

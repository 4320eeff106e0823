package visualflow

import (
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// The reference treats an outcome mode as "not executed" only when it is a
// non-blank string (isinstance(mode, str) and mode.strip() and mode !=
// "executed"): a whitespace-only mode reads like an absent one, so the
// results decide success.
func TestReviewToolCallsBlankModeIsNotAFailure(t *testing.T) {
	t.Parallel()
	outcome := map[string]any{"mode": "  ", "results": []any{map[string]any{"success": true, "output": "ok"}}}
	for _, c := range []struct{ typ, defaults, pin string }{
		{"tool_calls", `{"tool_calls":[{"name":"t","arguments":{}}]}`, "success"},
		{"call_tool", `{"tool_call":{"name":"t","arguments":{}}}`, "success"},
		{"call_tool", `{"tool_call":{"name":"t","arguments":{}}}`, "result"},
	} {
		flow := effectWiredFlow(c.typ, c.defaults, `{}`, c.pin)
		sc := &scripted{results: []any{outcome}}
		_, st := runFlows(t, []string{flow}, nil, map[durable.EffectType]runtime.Handler{durable.EffectToolCalls: sc.handler()}, nil)
		if st.Status != durable.RunCompleted {
			t.Fatalf("%s: status %s (%s)", c.typ, st.Status, st.Error)
		}
		want := any(true)
		if c.pin == "result" {
			want = "ok"
		}
		if got := st.Output["r"]; got != want {
			t.Errorf("%s.%s = %v, want %v", c.typ, c.pin, got, want)
		}
	}
}

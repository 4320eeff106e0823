package visualflow

import "testing"

// The reference reads _limits.max_history_messages with Python's int()
// (ActiveContextPolicy.select_active_messages_for_llm_from_run), any
// failure meaning -1 (no limit): "1.5" is no limit (int("1.5") raises),
// and true is 1 (int(True)).
func TestReviewIncludeContextHistoryLimitIsPythonInt(t *testing.T) {
	t.Parallel()
	history := []any{chatMsg("system", "S"), chatMsg("user", "u1"), chatMsg("assistant", "a1"), chatMsg("user", "u2")}
	cases := []struct {
		limit any
		want  []any
	}{
		{"1.5", []any{chatMsg("system", "S"), chatMsg("user", "u1"), chatMsg("assistant", "a1"), chatMsg("user", "u2"), chatMsg("user", "now")}},
		{true, []any{chatMsg("system", "S"), chatMsg("user", "u2"), chatMsg("user", "now")}},
		{" 1 ", []any{chatMsg("system", "S"), chatMsg("user", "u2"), chatMsg("user", "now")}},
	}
	for _, c := range cases {
		vars := map[string]any{"_limits": map[string]any{"max_history_messages": c.limit},
			"context": map[string]any{"messages": append([]any{}, history...)}}
		p := llmPayloadOf(t, `{"prompt":"now","include_context":true}`, `{}`, vars)
		if got, want := jsonText(t, p["messages"]), jsonText(t, c.want); got != want {
			t.Errorf("max_history_messages %#v: messages = %s\nwant %s", c.limit, got, want)
		}
	}
}

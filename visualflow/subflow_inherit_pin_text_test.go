package visualflow

import "testing"

// §5.5: a present inherit_context pin is the coerced pin value, so the
// text "false" means no inheritance (unlike the configured default, read
// with Python's bool()): the child gets none of the parent's messages.
func TestSubflowInheritContextPinTextFalseDoesNotInherit(t *testing.T) {
	msg := map[string]any{"role": "user", "content": "earlier"}
	p, _ := subflowCall(t, subflowParent(`, {"id": "inherit_context", "type": "boolean"}`, `"inherit_context": "false"`),
		map[string]any{"prompt": "hi", "context": map[string]any{"messages": []any{msg}}})
	vars, _ := p["vars"].(map[string]any)
	ctx, _ := vars["context"].(map[string]any)
	if msgs, _ := ctx["messages"].([]any); len(msgs) != 0 {
		t.Fatalf("child vars = %s, want no inherited context messages for the pin text \"false\"", jsonText(t, p["vars"]))
	}
}

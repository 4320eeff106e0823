package visualflow

import (
	"strings"
	"testing"
)

// A failed tool result without an error text shows its output instead
// (details = error or the rendered output, spec §5.6 observations), so the
// parent context reads "[t]: Error: partial" rather than an empty error.
func TestAgentFailedToolWithoutErrorShowsOutput(t *testing.T) {
	calls := []any{map[string]any{"call_id": "c1", "name": "t"}}
	results := []any{map[string]any{"call_id": "c1", "name": "t", "success": false, "output": "partial"}}
	st := runAgentFlow(t, includeContextAgentFlow("react-fail-out", true), toolReact("react-fail-out", calls, "done"),
		toolsHandler(results), nil)
	msgs := parentMessages(st)
	if len(msgs) != 3 {
		t.Fatalf("parent context.messages = %s, want task, one observation, answer", jsonText(t, msgs))
	}
	if got := msgs[1].(map[string]any)["content"]; got != "[t]: Error: partial" {
		t.Errorf("observation = %q, want %q", got, "[t]: Error: partial")
	}
}

// Details of exactly 2000 characters are kept whole: only longer text is
// truncated (spec §5.6 "truncated to 2000 chars").
func TestAgentToolObservationOfExactlyTheLimitIsNotTruncated(t *testing.T) {
	out := strings.Repeat("x", 2000)
	calls := []any{map[string]any{"call_id": "c1", "name": "t"}}
	results := []any{map[string]any{"call_id": "c1", "name": "t", "success": true, "output": out}}
	st := runAgentFlow(t, includeContextAgentFlow("react-2000", true), toolReact("react-2000", calls, "done"),
		toolsHandler(results), nil)
	msgs := parentMessages(st)
	if len(msgs) != 3 {
		t.Fatalf("parent context.messages = %s, want task, one observation, answer", jsonText(t, msgs))
	}
	if got := msgs[1].(map[string]any)["content"]; got != "[t]: "+out {
		t.Errorf("observation of 2000 chars was changed: %d chars, ends %q", len(got.(string)), got.(string)[len(got.(string))-40:])
	}
}

// A truncated observation's kept head is right-stripped before the
// "(truncated, …)" suffix (Python's _truncate), so no run of spaces is
// left dangling before it.
func TestAgentTruncatedToolObservationHeadIsRightStripped(t *testing.T) {
	suffix := "\n… (truncated, 2,500 chars total)"
	keep := 2000 - len([]rune(suffix))
	out := strings.Repeat("x", keep-3) + "   " + strings.Repeat("y", 2500-keep)
	calls := []any{map[string]any{"call_id": "c1", "name": "t"}}
	results := []any{map[string]any{"call_id": "c1", "name": "t", "success": true, "output": out}}
	st := runAgentFlow(t, includeContextAgentFlow("react-rs", true), toolReact("react-rs", calls, "done"),
		toolsHandler(results), nil)
	msgs := parentMessages(st)
	if len(msgs) != 3 {
		t.Fatalf("parent context.messages = %s, want task, one observation, answer", jsonText(t, msgs))
	}
	if got, want := msgs[1].(map[string]any)["content"], "[t]: "+strings.Repeat("x", keep-3)+suffix; got != want {
		t.Errorf("truncated observation ends %q, want it to end %q", got.(string)[len(got.(string))-50:], want[len(want)-50:])
	}
}

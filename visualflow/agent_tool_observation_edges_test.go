package visualflow

import (
	"strings"
	"testing"
)

// A failed tool result without an error text shows its output instead
// (details = error or the rendered output, spec §5.6 observations), so the
// parent context reads "[t]: Error: partial" rather than an empty error.
func TestAgentFailedToolWithoutErrorShowsOutput(t *testing.T) {
	got := oneToolObservation(t, "react-fail-out", map[string]any{"call_id": "c1", "name": "t", "success": false, "output": "partial"})
	if got != "[t]: Error: partial" {
		t.Errorf("observation = %q, want %q", got, "[t]: Error: partial")
	}
}

// Details of exactly 2000 characters are kept whole: only longer text is
// truncated (spec §5.6 "truncated to 2000 chars").
func TestAgentToolObservationOfExactlyTheLimitIsNotTruncated(t *testing.T) {
	out := strings.Repeat("x", 2000)
	got := oneToolObservation(t, "react-2000", map[string]any{"call_id": "c1", "name": "t", "success": true, "output": out})
	if got != "[t]: "+out {
		t.Errorf("observation of 2000 chars was changed: %d chars, ends %q", len(got), got[max(0, len(got)-40):])
	}
}

// A truncated observation's kept head is right-stripped before the
// "(truncated, …)" suffix (Python's _truncate), so no run of spaces is
// left dangling before it.
func TestAgentTruncatedToolObservationHeadIsRightStripped(t *testing.T) {
	suffix := "\n… (truncated, 2,500 chars total)"
	keep := 2000 - len([]rune(suffix))
	out := strings.Repeat("x", keep-3) + "   " + strings.Repeat("y", 2500-keep)
	got := oneToolObservation(t, "react-rs", map[string]any{"call_id": "c1", "name": "t", "success": true, "output": out})
	if want := "[t]: " + strings.Repeat("x", keep-3) + suffix; got != want {
		t.Errorf("truncated observation ends %q, want it to end %q", got[max(0, len(got)-50):], want[len(want)-50:])
	}
}

// oneToolObservation runs an include_context agent whose ReAct child makes
// one call of tool t, answered by result, and returns the content of the
// observation the parent context gets for it (between task and answer).
func oneToolObservation(t *testing.T, reactID string, result map[string]any) string {
	t.Helper()
	calls := []any{map[string]any{"call_id": "c1", "name": "t"}}
	st := runAgentFlow(t, includeContextAgentFlow(reactID, true), toolReact(reactID, calls, "done"),
		toolsHandler([]any{result}), nil)
	msgs := parentMessages(st)
	if len(msgs) != 3 {
		t.Fatalf("parent context.messages = %s, want task, one observation, answer", jsonText(t, msgs))
	}
	got, _ := msgs[1].(map[string]any)["content"].(string)
	return got
}

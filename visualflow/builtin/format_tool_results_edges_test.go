package builtin

import (
	"strings"
	"testing"
)

// formatOne runs format_tool_results on one item with env and returns its
// line.
func formatOne(t *testing.T, env *Env, item map[string]any) string {
	t.Helper()
	out, _ := callNode(t, env, "format_tool_results", obj{"tool_results": arr{item}}).(string)
	return out
}

// Spec §6.7 format_tool_results: the error text is the observation only
// when success is the boolean false. An item without a boolean success
// (status DONE) shows its output even when it carries an error field.
func TestFormatToolResultsErrorOnlyWhenSuccessIsFalse(t *testing.T) {
	for _, tt := range []struct {
		item map[string]any
		want string
	}{
		{obj{"name": "t", "error": "boom", "output": "fine"}, "- t() [DONE] : fine"},
		{obj{"name": "t", "success": "false", "error": "boom", "output": "fine"}, "- t() [DONE] : fine"},
		{obj{"name": "t", "success": false, "error": "boom", "output": "fine"}, "- t() [FAILURE] : boom"},
	} {
		if got := formatOne(t, nil, tt.item); got != tt.want {
			t.Errorf("format_tool_results(%v) = %q; want %q", tt.item, got, tt.want)
		}
	}
}

// Spec §6.7 format_tool_results: an output that is not an object is
// rendered on one line and clamped to 420 characters (419 and "…"), so a
// long tool output cannot flood the agent's prompt.
func TestFormatToolResultsClampsAScalarOutputAt420(t *testing.T) {
	long := strings.Repeat("é", 500)
	got := formatOne(t, nil, obj{"name": "t", "success": true, "output": long})
	want := "- t() [SUCCESS] : " + strings.Repeat("é", 419) + "…"
	if got != want {
		t.Errorf("format_tool_results(500-char output) = %d runes; want the output clamped to 419 + \"…\"", len([]rune(got)))
	}
	exact := strings.Repeat("x", 420)
	if got := formatOne(t, nil, obj{"name": "t", "success": true, "output": exact}); got != "- t() [SUCCESS] : "+exact {
		t.Errorf("format_tool_results(420-char output) clamped; want it whole")
	}
}

// Spec §6.7 format_tool_results: the primary key order is the spec's
// required_args, else its parameters' keys. When required_args name keys
// the call does not have, the parameters are not tried: the signature is
// tool().
func TestFormatToolResultsParametersOnlyWithoutRequiredArgs(t *testing.T) {
	env := &Env{ToolSpec: catalogue(
		map[string]any{"name": "read", "required_args": []any{"path"},
			"parameters": map[string]any{"path": obj{}, "mode": obj{}}},
		map[string]any{"name": "peek", "parameters": map[string]any{"path": obj{}, "mode": obj{}}},
	)}
	if got, want := formatOne(t, env, obj{"name": "read", "success": true, "output": "ok", "arguments": obj{"mode": "r"}}), "- read() [SUCCESS] : ok"; got != want {
		t.Errorf("required_args without a value: %q; want %q", got, want)
	}
	if got, want := formatOne(t, env, obj{"name": "peek", "success": true, "output": "ok", "arguments": obj{"mode": "r"}}), "- peek(r) [SUCCESS] : ok"; got != want {
		t.Errorf("parameters only: %q; want %q", got, want)
	}
}

// Spec §6.7 format_tool_results: text is collapsed to one line, a lone
// carriage return counting as a line break like "\n" and "\r\n"; a
// boolean primary is written true/false (JSON), not Python's True.
func TestFormatToolResultsOneLineAndBooleanPrimary(t *testing.T) {
	if got, want := formatOne(t, nil, obj{"name": "t", "success": true, "output": "a\rb\r\nc\n\nd"}), "- t() [SUCCESS] : a b c d"; got != want {
		t.Errorf("output with \\r: %q; want %q", got, want)
	}
	if got, want := formatOne(t, nil, obj{"name": "t", "success": true, "output": "ok", "arguments": obj{"force": true}}), "- t(true) [SUCCESS] : ok"; got != want {
		t.Errorf("boolean primary: %q; want %q", got, want)
	}
	if got, want := formatOne(t, nil, obj{"name": "t", "success": true, "output": "ok", "arguments": obj{"force": false}}), "- t(false) [SUCCESS] : ok"; got != want {
		t.Errorf("boolean primary: %q; want %q", got, want)
	}
}

package builtin

import "testing"

// Spec §6.7 format_tool_results: the list is read from tool_results, else
// from results; every object item gives a line, the empty object too; the
// signature's primary value comes from the call's arguments before its
// output. Breaks if the results fallback is dropped, an empty item is
// skipped, or the output's value is preferred to the argument's.
func TestFormatToolResultsInputsAndPrimarySource(t *testing.T) {
	for _, tt := range []struct {
		name string
		in   map[string]any
		want string
	}{
		{"results pin", obj{"results": arr{obj{"name": "t", "success": true, "output": "ok"}}},
			"- t() [SUCCESS] : ok"},
		{"empty item", obj{"tool_results": arr{obj{}, 3, obj{"name": "t"}}},
			"- tool() [DONE] : (no output)\n- t() [DONE] : (no output)"},
		{"argument before output", obj{"tool_results": arr{obj{"name": "t", "success": true,
			"arguments": obj{"path": "from-args"}, "output": obj{"path": "from-output", "rendered": "done"}}}},
			"- t(from-args) [SUCCESS] : done"},
	} {
		if got := callNode(t, nil, "format_tool_results", tt.in); got != tt.want {
			t.Errorf("%s: got %q; want %q", tt.name, got, tt.want)
		}
	}
}

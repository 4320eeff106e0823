package builtin

import "testing"

// Python: round(1.7976931348623157e308, -308) raises OverflowError
// ("rounded value too large to represent"), a node error (Q3: the run
// completes with success:false). pyval.Round returns +Inf instead, which
// the node hands on as its result.
func TestRoundNodeOverflowIsAnError(t *testing.T) {
	got, err := roundNode(nil, map[string]any{"value": 1.7976931348623157e308, "decimals": int64(-308)})
	if err == nil {
		t.Errorf("round node returned %#v and no error; Python raises OverflowError", got)
	}
}

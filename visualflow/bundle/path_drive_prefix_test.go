package bundle

import "testing"

// Spec visualflow.md §7.2: no drive-like prefix, "a `:` in the first
// segment". Python's _is_safe_relpath (workflow_bundle/models.py) takes
// the first segment as the text before the first '/', backslashes
// included, so `flows\C:x.json` is refused there; CheckPath split the
// first segment at '\' too and accepted such paths (a ':' after a
// backslash, before any '/'). The other cases are where both agree.
func TestDrivePrefixIsCheckedAsPython(t *testing.T) {
	cases := []struct {
		path string
		safe bool
	}{
		{`C:foo`, false},
		{`c:/x`, false},
		{` C:x`, false}, // checked stripped, as Python does
		{`x:`, false},
		{`\\server\x`, false},
		{`//server/x`, false},
		{`flows\C:x.json`, false},
		{`a\b:c/d.json`, false},
		{`flows/C:x.json`, true}, // ':' past the first '/': not a prefix for either
		{`flows/a:b/c.json`, true},
		{`flows\main.json`, true},
		{`C\x.json`, true},
	}
	for _, tc := range cases {
		err := CheckPath(tc.path)
		if got := err == nil; got != tc.safe {
			t.Errorf("CheckPath(%q) = %v; Python's _is_safe_relpath says safe=%v", tc.path, err, tc.safe)
		}
	}
}

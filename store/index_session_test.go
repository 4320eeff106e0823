package store

import "testing"

// TestRunIndexMatchesSessionTrimmedOnBothSides: the in-memory and JSON
// stores filter the index with Matches, which compares the trimmed filter
// with the trimmed stored session id, as Python's in-memory and JSON
// stores do (str(run.session_id or "").strip() != session_id.strip()). A
// run Python stored with a padded session id is found by that id, trimmed
// or not (history's session export passes it trimmed).
func TestRunIndexMatchesSessionTrimmedOnBothSides(t *testing.T) {
	for _, c := range []struct {
		stored, filter string
		want           bool
	}{
		{" s1 ", " s1 ", true},
		{" s1 ", "s1", true},
		{"\ts1\n", "s1", true},
		{"s1", " s1 ", true},
		{"\u00a0s1\x1f", "s1", true}, // Python's whitespace, not only ASCII
		{" s1 ", "s2", false},
		{"s 1", "s1", false},
		{"", "s1", false},
		{" s1 ", "  ", true}, // a blank filter does not filter
	} {
		p := RunIndexParams{SessionID: c.filter}
		if got := p.Matches(&RunIndexRow{SessionID: c.stored}); got != c.want {
			t.Errorf("RunIndexParams{SessionID: %q}.Matches(row of session %q) = %v, want %v", c.filter, c.stored, got, c.want)
		}
	}
}

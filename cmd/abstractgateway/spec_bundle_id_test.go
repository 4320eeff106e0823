package main

import "testing"

// Spec §7.2: a bundle_id outside [A-Za-z0-9_-] is "rejected with a
// suggested sanitised id: other runs → -, repeated - collapsed, trimmed";
// a version may also hold '.'.
func TestSpec72_SuggestedBundleIDAndVersionRule(t *testing.T) {
	for in, want := range map[string]string{"my flow!": "my-flow", "a..b": "a-b", "--x  y--": "x-y", "a-–-b": "a-b", "ok_id-1": "ok_id-1"} {
		if got := suggestBundleID(in); got != want {
			t.Errorf("suggestBundleID(%q) = %q, want %q", in, got, want)
		}
	}
	if err := checkBundleID("-id", "a.b"); err == nil {
		t.Error(`bundle id "a.b" accepted`)
	}
	for v, ok := range map[string]bool{"0.0.1": true, "draft.1a-b_c": true, "1@2": false, "1 2": false} {
		if got := bundleVersionRule.MatchString(v); got != ok {
			t.Errorf("version %q accepted = %v, want %v", v, got, ok)
		}
	}
}

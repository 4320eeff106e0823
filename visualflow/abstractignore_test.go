package visualflow

import "testing"

// The ignore patterns are Python fnmatch globs (fnmatchcase); the
// expectations are Python 3's.
func TestIgnoreGlobMatchesLikePythonFnmatch(t *testing.T) {
	for _, tc := range []struct {
		pat, s string
		want   bool
	}{
		{"*.py", "a/b.py", true}, {"a?c", "abc", true}, {"a?c", "ac", false},
		{"[abc]x", "bx", true}, {"[!abc]x", "bx", false}, {"[!abc]x", "dx", true},
		{"[a-c]", "b", true}, {"[z-a]", "m", false}, {"[!z-a]", "m", true},
		{"[]]", "]", true}, {"[!]]", "a", true}, {"[!]]", "]", false},
		{"[a-]", "-", true}, {"[-a]", "-", true},
		{"[a-b-c]", "c", true}, {"[a-b-c]", "-", true}, {"[a-b-c]", "b", true}, {"[a-b-c]", "d", false},
		{"[a--z]", "z", true}, {"[a--z]", "m", false},
		{"[a", "[a", true}, {"[!]", "!", false}, {"[!]", "[!]", true}, {"x[!b-a]y", "xqy", true},
		{"**/x", "a/b/x", true}, {"**/x", "x", false}, {"A*", "abc", false},
		{`a\*`, `a\foo`, true}, {"*", "a\nb", true}, {"é?", "éè", true}, {"", "", true}, {"", "a", false},
		{"*a*b", "xxaxxbxxb", true}, {"*a*b", "xxaxxbxxc", false},
	} {
		if got := compileGlob(tc.pat).match(tc.s); got != tc.want {
			t.Errorf("fnmatchcase(%q, %q) = %v, want %v", tc.s, tc.pat, got, tc.want)
		}
	}
}

// Rule lines: "!" then a trailing "/" then a leading "/" are taken off,
// each followed by a strip; what is left empty is no rule.
func TestIgnoreRuleParsing(t *testing.T) {
	rules := parseIgnoreRules([]string{"  # c", "", "!", "/", "! /x/ ", "!a/b", "  y  "})
	type got struct {
		neg, dir, anch, slash bool
	}
	want := []got{{true, true, true, false}, {true, false, false, true}, {false, false, false, false}}
	if len(rules) != len(want) {
		t.Fatalf("%d rules, want %d", len(rules), len(want))
	}
	for i, r := range rules {
		if g := (got{r.negate, r.dirOnly, r.anchored, r.hasSlash}); g != want[i] {
			t.Errorf("rule %d = %+v, want %+v", i, g, want[i])
		}
	}
	if !rules[0].glob.match("x") || !rules[2].glob.match("y") {
		t.Error("patterns not stripped")
	}
}

package visualflow

import (
	"path/filepath"
	"testing"
)

// Only a regular .abstractignore file counts: a folder of that name is
// passed over and the search goes on upwards, so the parent's *.log rule
// still hides b.log (Python's is_file()). Stopping at the folder would
// apply no rules at all.
func TestAbstractIgnoreFolderOfThatNameIsSkipped(t *testing.T) {
	base := listTree(t, map[string]string{
		".abstractignore":      "*.log\n",
		"sub/.abstractignore/": "",
		"sub/a.txt":            "a",
		"sub/b.log":            "b",
	})
	sub := filepath.Join(base, "sub")
	got, _ := listRel(t, sub, map[string]any{"folder_path": sub})
	if len(got) != 1 || got[0] != "a.txt" {
		t.Fatalf("entries = %v, want [a.txt] (b.log hidden by the parent's .abstractignore)", got)
	}
}

// A folder outside the ignore root (a link's target) is matched by its
// absolute components, the folder itself included among the enclosing
// folders of a folder-only rule: "*/*/a/" matches "//other/a" (the parts
// "/", "other", "a" joined), though neither "other/a" nor "a" matches it,
// as in the reference (fnmatch's "*" crosses "/"). Leaving the folder out
// of its own enclosing folders misses that match.
func TestAbstractIgnoreFolderRuleMatchesOutsideFolderByAbsoluteParts(t *testing.T) {
	ig := &abstractIgnore{root: "/w/proj", rules: parseIgnoreRules([]string{"*/*/a/"})}
	if !ig.ignored("/other/a", true) {
		t.Error(`folder /other/a (outside /w/proj) not ignored by "*/*/a/"; the reference ignores it`)
	}
	if ig.ignored("/other/a", false) {
		t.Error(`file /other/a ignored by the folder-only rule "*/*/a/"`)
	}
}

// A one-character range ("a-a") is kept, as fnmatch drops only a range
// whose ends are reversed (strictly greater first end): "[a-a]" matches
// "a", "[b-a]" matches nothing (checked against Python's fnmatchcase).
func TestIgnoreGlobSingleCharacterRangeIsKept(t *testing.T) {
	for _, c := range []struct {
		pat, s string
		want   bool
	}{
		{"[a-a]", "a", true},
		{"[b-a]", "a", false},
		{"[b-a]", "b", false},
		{"x[c-cz]", "xc", true},
	} {
		if got := compileGlob(c.pat).match(c.s); got != c.want {
			t.Errorf("fnmatchcase(%q, %q) = %v, want %v", c.s, c.pat, got, c.want)
		}
	}
}

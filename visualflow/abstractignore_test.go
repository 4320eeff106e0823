package visualflow

import (
	"bytes"
	"encoding/json"
	"math/rand"
	"os/exec"
	"strings"
	"testing"
)

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

// ignoreReferencePy restates, for the python3 differential tests, the
// logic of AbstractCore's abstractcore/tools/abstractignore.py:
// fnmatch.fnmatchcase for globs; the rule parse and the is_ignored walk
// over rules (paths are given already resolved, so no resolve() here);
// and Path(name).suffix lowered for the file family suffix.
const ignoreReferencePy = `
import fnmatch, json, sys
from pathlib import PurePosixPath

def parse(lines):
    out = []
    for raw in lines:
        s = str(raw or "").strip()
        if not s or s.startswith("#"):
            continue
        neg = s.startswith("!")
        if neg:
            s = s[1:].strip()
        if not s:
            continue
        d = s.endswith("/")
        if d:
            s = s[:-1].strip()
        a = s.startswith("/")
        if a:
            s = s[1:].strip()
        if not s:
            continue
        out.append((s, neg, d, a))
    return out

def ignored(root, rules, p, is_dir):
    p = PurePosixPath(p)
    try:
        rel = p.relative_to(root)
        rel_s, parts = rel.as_posix(), list(rel.parts)
    except Exception:
        rel_s, parts = p.as_posix().lstrip("/"), list(p.parts)
    parts = [str(x) for x in parts if str(x)]
    name = parts[-1] if parts else p.name
    dparts = parts if is_dir else parts[:-1]
    res = False
    for (pat, neg, d, a) in rules:
        m = False
        if d:
            for i in range(1, len(dparts) + 1):
                if fnmatch.fnmatchcase("/".join(dparts[:i]), pat) or fnmatch.fnmatchcase(dparts[i-1], pat):
                    m = True
                    break
            if not m and is_dir:
                m = fnmatch.fnmatchcase(rel_s, pat) or fnmatch.fnmatchcase(name, pat)
        elif a or "/" in pat:
            m = fnmatch.fnmatchcase(rel_s, pat)
        else:
            m = fnmatch.fnmatchcase(name, pat)
        if m:
            res = not neg
    return res

req = json.loads(sys.stdin.read())
out = {"glob": [], "rules": [], "suffix": []}
for pat, s in req["glob"]:
    try:
        out["glob"].append(fnmatch.fnmatchcase(s, pat))
    except Exception as e:
        out["glob"].append("ERR " + type(e).__name__)
for case in req["rules"]:
    try:
        rules = parse(case["lines"])
        out["rules"].append(ignored(PurePosixPath(case["root"]), rules, case["path"], case["dir"]))
    except Exception as e:
        out["rules"].append("ERR " + type(e).__name__)
for name in req["suffix"]:
    out["suffix"].append(PurePosixPath(name).suffix.lower().lstrip("."))
print(json.dumps(out))
`

func runIgnoreReferencePy(t *testing.T, req any, out any) {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found: cannot compare with Python's fnmatch and pathlib")
	}
	in, _ := json.Marshal(req)
	cmd := exec.Command(py, "-c", ignoreReferencePy)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3: %v\n%s", err, stderr.String())
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("decode python output: %v\n%s", err, b)
	}
}

func randGlobString(r *rand.Rand, alphabet []string, maxLen int) string {
	n := r.Intn(maxLen + 1)
	var b strings.Builder
	for range n {
		b.WriteString(alphabet[r.Intn(len(alphabet))])
	}
	return b.String()
}

// Differential: random fnmatch patterns (classes, ranges, "!", "]", unclosed
// "[", "*" crossing "/", backslashes, non-ASCII) against random names.
func TestIgnoreGlobsMatchPythonFnmatchOnRandomPatterns(t *testing.T) {
	r := rand.New(rand.NewSource(20261203))
	patAlpha := []string{"a", "b", "z", "A", "0", "-", "-", "!", "]", "[", "[", "*", "?", "/", "^", `\`, ".", "é", "&", "~", "|"}
	strAlpha := []string{"a", "b", "z", "A", "0", "-", "!", "]", "[", "/", "^", `\`, ".", "é", "\n", "&", "m", "Z"}
	type pair [2]string
	var pairs []pair
	for range 6000 {
		pairs = append(pairs, pair{randGlobString(r, patAlpha, 9), randGlobString(r, strAlpha, 5)})
	}
	var got struct {
		Glob []any `json:"glob"`
	}
	runIgnoreReferencePy(t, map[string]any{"glob": pairs, "rules": []any{}, "suffix": []any{}}, &got)
	bad := 0
	for i, p := range pairs {
		ours := compileGlob(p[0]).match(p[1])
		if got.Glob[i] != ours {
			bad++
			if bad <= 15 {
				t.Errorf("fnmatchcase(%q, %q): python %v, ours %v", p[1], p[0], got.Glob[i], ours)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d/%d glob mismatches", bad, len(pairs))
	}
}

// Differential: random ignore files and paths (inside and outside the
// root, files and folders) through the rule parse and is_ignored.
func TestIgnoreRulesMatchReferenceOnRandomFiles(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	comps := []string{"a", "b", "node_modules", "x.d", "build", ".git", "src", "a b", "é", "dist"}
	patComps := []string{"a", "b", "*", "?", "node_modules", "*.d", "src", "[ab]", "x*", "é", "a b", "**"}
	var cases []map[string]any
	type goCase struct {
		root, path string
		dir        bool
		lines      []string
	}
	var gcs []goCase
	for range 3000 {
		var lines []string
		for range r.Intn(5) {
			var l string
			if r.Intn(4) == 0 {
				l += "!"
			}
			if r.Intn(4) == 0 {
				l += " "
			}
			if r.Intn(3) == 0 {
				l += "/"
			}
			n := 1 + r.Intn(3)
			for k := range n {
				if k > 0 {
					l += "/"
				}
				l += patComps[r.Intn(len(patComps))]
			}
			if r.Intn(3) == 0 {
				l += "/"
			}
			if r.Intn(6) == 0 {
				l = "# " + l
			}
			lines = append(lines, l)
		}
		root := "/w/proj"
		n := 1 + r.Intn(4)
		var ps []string
		for range n {
			ps = append(ps, comps[r.Intn(len(comps))])
		}
		path := root + "/" + strings.Join(ps, "/")
		if r.Intn(5) == 0 {
			path = "/other/" + strings.Join(ps, "/")
		}
		dir := r.Intn(2) == 0
		all := append(append([]string{}, defaultIgnoreLines...), lines...)
		cases = append(cases, map[string]any{"root": root, "path": path, "dir": dir, "lines": all})
		gcs = append(gcs, goCase{root, path, dir, lines})
	}
	var got struct {
		Rules []any `json:"rules"`
	}
	runIgnoreReferencePy(t, map[string]any{"glob": []any{}, "rules": cases, "suffix": []any{}}, &got)
	bad := 0
	for i, c := range gcs {
		ours := (&abstractIgnore{root: c.root, rules: parseIgnoreRules(append(append([]string{}, defaultIgnoreLines...), c.lines...))}).ignored(c.path, c.dir)
		if got.Rules[i] != ours {
			bad++
			if bad <= 15 {
				t.Errorf("lines %q path %q dir %v: python %v, ours %v", c.lines, c.path, c.dir, got.Rules[i], ours)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d/%d rule mismatches", bad, len(gcs))
	}
}

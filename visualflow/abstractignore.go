package visualflow

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/abstractframework/abstractgateway/internal/pyval"
)

// This file ports AbstractCore's .abstractignore matcher
// (abstractcore/tools/abstractignore.py), which list_folder_files applies
// (spec §6.10). It is gitignore-like but smaller, and the port keeps its
// exact subset:
//   - one file, the nearest .abstractignore found walking up from the
//     listed folder (to the filesystem root); its folder is the root that
//     paths are matched relative to (the listed folder when there is none);
//   - built-in rules come first (VCS and cache folders, node_modules, dist,
//     build, target, virtualenvs, .cursor, *.d runtime stores), so the file
//     can re-include them with "!";
//   - per line: blank lines and "#" comments skipped, "!" negates, a
//     trailing "/" matches folders only, a leading "/" anchors to the root;
//   - patterns are Python fnmatch globs, case-sensitive: "*" also crosses
//     "/" (so "**" is just "*"), "?" is one character, "[...]" a class
//     ("[!...]" negated); there is no backslash escaping;
//   - the last matching rule decides.
// No dependency implements these semantics (gitignore libraries differ on
// "*", anchoring and folder rules), hence the small matcher below.

// defaultIgnoreLines are the reference's built-in rules.
var defaultIgnoreLines = []string{
	".git/", ".hg/", ".svn/", "__pycache__/", ".pytest_cache/", ".mypy_cache/", ".ruff_cache/",
	"node_modules/", "dist/", "build/", "target/", ".venv/", "venv/", "env/", ".env/",
	".cursor/", "*.d/",
}

var defaultIgnoreRules = parseIgnoreRules(defaultIgnoreLines)

type ignoreRule struct {
	glob     globPattern
	hasSlash bool
	negate   bool
	dirOnly  bool
	anchored bool
}

// parseIgnoreRules reads rule lines as the reference: each stripped; "!"
// then a trailing "/" then a leading "/" removed in that order (each
// followed by a strip); lines left empty are dropped.
func parseIgnoreRules(lines []string) []ignoreRule {
	var rules []ignoreRule
	for _, line := range lines {
		line = pyval.Strip(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var r ignoreRule
		if rest, ok := strings.CutPrefix(line, "!"); ok {
			r.negate, line = true, pyval.Strip(rest)
		}
		if rest, ok := strings.CutSuffix(line, "/"); ok {
			r.dirOnly, line = true, pyval.Strip(rest)
		}
		if rest, ok := strings.CutPrefix(line, "/"); ok {
			r.anchored, line = true, pyval.Strip(rest)
		}
		if line == "" {
			continue
		}
		r.glob, r.hasSlash = compileGlob(line), strings.Contains(line, "/")
		rules = append(rules, r)
	}
	return rules
}

// abstractIgnore matches resolved paths against the rules, relative to
// root.
type abstractIgnore struct {
	root  string
	rules []ignoreRule
}

// loadAbstractIgnore builds the matcher for a listing of folder (a
// resolved path). An ignore file that cannot be read or is not UTF-8
// contributes no rules (the built-in ones still apply), as in Python.
func loadAbstractIgnore(folder string) *abstractIgnore {
	ig := &abstractIgnore{root: folder, rules: defaultIgnoreRules}
	for dir := folder; ; dir = filepath.Dir(dir) {
		p := filepath.Join(dir, ".abstractignore")
		if info, err := os.Stat(p); err == nil && info.Mode().IsRegular() {
			ig.root = dir
			if data, err := os.ReadFile(p); err == nil && utf8.Valid(data) {
				ig.rules = slices.Concat(defaultIgnoreRules, parseIgnoreRules(pySplitLines(string(data))))
			}
			return ig
		}
		if filepath.Dir(dir) == dir {
			return ig
		}
	}
}

// pySplitLines splits at Python's str.splitlines boundaries; empty lines
// are dropped (the rules skip them anyway).
func pySplitLines(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool {
		switch r {
		case '\n', '\r', '\v', '\f', 0x1c, 0x1d, 0x1e, 0x85, 0x2028, 0x2029:
			return true
		}
		return false
	})
}

// ignored reports whether the resolved path p is ignored. Its components
// relative to root are matched; a path outside root (a link leading out)
// is matched by its absolute form, whose first component is "/", as the
// reference does.
func (ig *abstractIgnore) ignored(p string, isDir bool) bool {
	var rel string
	var parts []string
	if r, ok := relBeneath(ig.root, p); ok {
		rel = r
		if r != "." {
			parts = strings.Split(r, "/")
		}
	} else {
		slash := filepath.ToSlash(p)
		rel = strings.TrimLeft(slash, "/")
		parts = append([]string{"/"}, strings.FieldsFunc(slash, func(r rune) bool { return r == '/' })...)
	}
	name := filepath.Base(p)
	if len(parts) > 0 {
		name = parts[len(parts)-1]
	}
	dirParts := parts
	if !isDir && len(parts) > 0 {
		dirParts = parts[:len(parts)-1]
	}
	ignored := false
	for _, r := range ig.rules {
		if r.matches(rel, name, dirParts, isDir) {
			ignored = !r.negate
		}
	}
	return ignored
}

// matches applies one rule. A folder rule matches when any enclosing
// folder (as a prefix path or by its own name) matches, or the path itself
// is a folder that does; it ignores the anchor, as the reference does.
// Another rule matches the whole relative path when anchored or holding a
// "/", else the name.
func (r ignoreRule) matches(rel, name string, dirParts []string, isDir bool) bool {
	if r.dirOnly {
		for i := range dirParts {
			if r.glob.match(strings.Join(dirParts[:i+1], "/")) || r.glob.match(dirParts[i]) {
				return true
			}
		}
		return isDir && (r.glob.match(rel) || r.glob.match(name))
	}
	if r.anchored || r.hasSlash {
		return r.glob.match(rel)
	}
	return r.glob.match(name)
}

// globPattern is a compiled Python fnmatch pattern (fnmatchcase).
type globPattern []globTok

type globTok struct {
	kind   byte // 0 literal, '*' any run, '?' any one, '[' class
	r      rune
	negate bool
	ranges [][2]rune
}

// compileGlob compiles pat as Python's fnmatch.translate reads it.
func compileGlob(pat string) globPattern {
	p := []rune(pat)
	var g globPattern
	for i := 0; i < len(p); {
		c := p[i]
		i++
		switch c {
		case '*':
			if len(g) == 0 || g[len(g)-1].kind != '*' {
				g = append(g, globTok{kind: '*'})
			}
		case '?':
			g = append(g, globTok{kind: '?'})
		case '[':
			tok, next, ok := compileClass(p, i)
			if !ok {
				g = append(g, globTok{r: '['})
				continue
			}
			g, i = append(g, tok), next
		default:
			g = append(g, globTok{r: c})
		}
	}
	return g
}

// compileClass reads the class starting after the "[" at p[i-1]; ok is
// false when it is not closed (the "[" is then literal). As fnmatch does:
// a "]" right after "[" or "[!" is a member; "-" makes ranges except in
// first or last place; a reversed range (z-a) drops both its ends; an
// emptied class matches nothing, a lone "!" any character.
func compileClass(p []rune, i int) (globTok, int, bool) {
	j := i
	if j < len(p) && p[j] == '!' {
		j++
	}
	if j < len(p) && p[j] == ']' {
		j++
	}
	for j < len(p) && p[j] != ']' {
		j++
	}
	if j >= len(p) {
		return globTok{}, i, false
	}
	// Split at the range hyphens as fnmatch does: the search starts one
	// past the first member and resumes two past each hyphen, so
	// "a-b-c" is the range a-b and the members "-" and "c".
	var chunks [][]rune
	if slices.Contains(p[i:j], '-') {
		start, k := i, i+1
		if p[i] == '!' {
			k = i + 2
		}
		for k < j {
			d := slices.Index(p[k:j], '-')
			if d < 0 {
				break
			}
			chunks = append(chunks, slices.Clone(p[start:k+d]))
			start, k = k+d+1, k+d+3
		}
		if start < j {
			chunks = append(chunks, slices.Clone(p[start:j]))
		} else {
			chunks[len(chunks)-1] = append(chunks[len(chunks)-1], '-')
		}
		for k := len(chunks) - 1; k > 0; k-- {
			prev, cur := chunks[k-1], chunks[k]
			if len(prev) > 0 && len(cur) > 0 && prev[len(prev)-1] > cur[0] {
				chunks[k-1] = append(prev[:len(prev)-1], cur[1:]...)
				chunks = slices.Delete(chunks, k, k+1)
			}
		}
	} else {
		chunks = [][]rune{slices.Clone(p[i:j])}
	}
	// Read the members back as the regex engine reads the joined text:
	// a member followed by a joining hyphen starts a range.
	type member struct {
		r      rune
		joiner bool
	}
	var ms []member
	for n, ch := range chunks {
		if n > 0 {
			ms = append(ms, member{r: '-', joiner: true})
		}
		for _, r := range ch {
			ms = append(ms, member{r: r})
		}
	}
	tok := globTok{kind: '['}
	if len(ms) > 0 && !ms[0].joiner && ms[0].r == '!' {
		tok.negate, ms = true, ms[1:]
	}
	for n := 0; n < len(ms); n++ {
		lo := ms[n].r
		if !ms[n].joiner && n+2 < len(ms) && ms[n+1].joiner {
			tok.ranges = append(tok.ranges, [2]rune{lo, ms[n+2].r})
			n += 2
			continue
		}
		tok.ranges = append(tok.ranges, [2]rune{lo, lo})
	}
	return tok, j + 1, true
}

func (t globTok) matchOne(r rune) bool {
	switch t.kind {
	case '?':
		return true
	case '[':
		in := false
		for _, rg := range t.ranges {
			if rg[0] <= r && r <= rg[1] {
				in = true
				break
			}
		}
		return in != t.negate
	}
	return t.r == r
}

// match reports whether the whole of s matches, backtracking to the last
// "*" on a mismatch (every other token consumes exactly one character).
func (g globPattern) match(s string) bool {
	rs := []rune(s)
	pi, si, starP, starS := 0, 0, -1, 0
	for si < len(rs) {
		switch {
		case pi < len(g) && g[pi].kind == '*':
			starP, starS = pi, si
			pi++
		case pi < len(g) && g[pi].matchOne(rs[si]):
			pi++
			si++
		case starP >= 0:
			starS++
			pi, si = starP+1, starS
		default:
			return false
		}
	}
	for pi < len(g) && g[pi].kind == '*' {
		pi++
	}
	return pi == len(g)
}

package pyval

import (
	"errors"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"
)

// GetPath resolves a dot/bracket path (variant a of Appendix B, used by
// get, string_template and array_dedup): segments separated by '.', with
// optional [n] indexes (a.b[0].c); a numeric segment also indexes arrays.
// Segments are trimmed and empty ones skipped. It returns false when the
// path is empty, a key is missing, an index is out of range or a value has
// the wrong type.
func GetPath(root any, path string) (any, bool) {
	toks := pathTokens(path)
	if len(toks) == 0 {
		return nil, false
	}
	cur := root
	for _, t := range toks {
		switch c := cur.(type) {
		case map[string]any:
			if t.isIndex {
				return nil, false
			}
			v, ok := c[t.key]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			idx, ok := t.index()
			if !ok || idx < 0 || idx >= len(c) {
				return nil, false
			}
			cur = c[idx]
		default:
			return nil, false
		}
	}
	return cur, true
}

type pathToken struct {
	key     string
	isIndex bool
	idx     int
}

func (t pathToken) index() (int, bool) {
	if t.isIndex {
		return t.idx, true
	}
	return parseIndex(t.key)
}

// pathTokens splits a path into runs of characters other than '.', '[',
// ']' and bracketed digit indexes.
func pathTokens(path string) []pathToken {
	p := Strip(path)
	var out []pathToken
	for i := 0; i < len(p); {
		switch p[i] {
		case '.', ']':
			i++
			continue
		case '[':
			// Python's \d: any decimal digit (Unicode category Nd).
			j := i + 1
			for j < len(p) {
				r, size := utf8.DecodeRuneInString(p[j:])
				if _, ok := decimalDigit(r); !ok {
					break
				}
				j += size
			}
			if j > i+1 && j < len(p) && p[j] == ']' {
				n, _ := parseIndex(p[i+1 : j])
				out = append(out, pathToken{isIndex: true, idx: n})
				i = j + 1
				continue
			}
			i++
			continue
		}
		j := i
		for j < len(p) && p[j] != '.' && p[j] != '[' && p[j] != ']' {
			j++
		}
		if k := Strip(p[i:j]); k != "" {
			out = append(out, pathToken{key: k})
		}
		i = j
	}
	return out
}

// parseIndex reads a string of decimal digits as Python's isdigit() and
// int() do on the keys of a path: any Unicode decimal digits (category
// Nd: "١" is 1, "２" is 2). A number past int's range is math.MaxInt: the
// reference's int is unbounded and such an index is out of range of any
// list. Digits that are not decimal (superscripts, for which isdigit holds
// but int fails) are no index.
func parseIndex(s string) (int, bool) {
	if s == "" {
		return 0, false
	}
	n := 0
	for _, r := range s {
		d, ok := decimalDigit(r)
		if !ok {
			return 0, false
		}
		if n > (math.MaxInt-d)/10 {
			n = math.MaxInt // saturated; the other digits must still be digits
			continue
		}
		n = n*10 + d
	}
	return n, true
}

// decimalDigit returns the value of a decimal digit of any script. Unicode
// lays every run of Nd digits out as whole blocks of ten from 0 to 9, so
// the value is the offset in the run modulo 10.
func decimalDigit(r rune) (int, bool) {
	if r >= '0' && r <= '9' {
		return int(r - '0'), true
	}
	if r < 0x80 || !unicode.Is(unicode.Nd, r) {
		return 0, false
	}
	for _, rg := range unicode.Nd.R16 {
		if r >= rune(rg.Lo) && r <= rune(rg.Hi) {
			return int(r-rune(rg.Lo)) % 10, true
		}
	}
	for _, rg := range unicode.Nd.R32 {
		if r >= rune(rg.Lo) && r <= rune(rg.Hi) {
			return int(r-rune(rg.Lo)) % 10, true
		}
	}
	return 0, false
}

// GetDotted resolves a '.'-separated path (variant b of Appendix B, used by
// break_object, get_var, var_decl and bool_var): numeric segments index
// arrays, no bracket syntax. Segments are taken verbatim, as the reference
// splits them: "user." looks up the key "" inside user, and "a . b" the
// keys "a " and " b". It returns false when the path is empty or does not
// resolve.
func GetDotted(root any, path string) (any, bool) {
	if path == "" {
		return nil, false
	}
	parts := strings.Split(path, ".")
	cur := root
	for _, p := range parts {
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[p]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			idx, ok := parseIndex(p)
			if !ok || idx >= len(c) {
				return nil, false
			}
			cur = c[idx]
		default:
			return nil, false
		}
	}
	return cur, true
}

// ErrEmptyPath is returned by SetDotted for an empty path.
var ErrEmptyPath = errors.New("empty path")

// SetDotted writes v at a '.'-separated path inside root (variant c of
// Appendix B, as outputKey and the set node write). Every segment counts,
// empty ones too ("a..b" writes a[""].b), as in the reference.
func SetDotted(root map[string]any, path string, v any) error {
	if Strip(path) == "" {
		return ErrEmptyPath
	}
	return SetIn(root, strings.Split(path, "."), v)
}

// VarPath splits the dotted name of a variable writer (set_var, set_vars,
// set_var_property) into its segments. Unlike SetDotted it drops empty
// segments, as the reference's variable adapter does: "a..b" is a.b and
// "user." is user. A name made only of dots has no segment (nil).
func VarPath(name string) []string {
	var parts []string
	for _, p := range strings.Split(name, ".") {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return parts
}

// SetIn writes v at the key path parts inside root. Objects only: missing
// or non-object intermediates are created or replaced by {}.
func SetIn(root map[string]any, parts []string, v any) error {
	if root == nil {
		return errors.New("set dotted path: nil root object")
	}
	if len(parts) == 0 {
		return ErrEmptyPath
	}
	cur := root
	for _, p := range parts[:len(parts)-1] {
		next, ok := cur[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			cur[p] = next
		}
		cur = next
	}
	cur[parts[len(parts)-1]] = v
	return nil
}

// GetIn follows the key path parts through objects only (no array
// indexing), as the variable writers read the object they update. It
// returns false when parts is empty, a key is missing or a value on the
// way is not an object.
func GetIn(root map[string]any, parts []string) (any, bool) {
	if len(parts) == 0 {
		return nil, false
	}
	var cur any = root
	for _, p := range parts {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[p]; !ok {
			return nil, false
		}
	}
	return cur, true
}

package pyval

import (
	"errors"
	"strconv"
	"strings"
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
	p := strings.TrimSpace(path)
	var out []pathToken
	for i := 0; i < len(p); {
		switch p[i] {
		case '.', ']':
			i++
			continue
		case '[':
			j := i + 1
			for j < len(p) && p[j] >= '0' && p[j] <= '9' {
				j++
			}
			if j > i+1 && j < len(p) && p[j] == ']' {
				if n, err := strconv.Atoi(p[i+1 : j]); err == nil {
					out = append(out, pathToken{isIndex: true, idx: n})
				}
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
		if k := strings.TrimSpace(p[i:j]); k != "" {
			out = append(out, pathToken{key: k})
		}
		i = j
	}
	return out
}

// parseIndex accepts only ASCII digit strings (Python str.isdigit on the
// JSON keys seen in practice).
func parseIndex(s string) (int, bool) {
	if s == "" {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

// GetDotted resolves a '.'-separated path (variant b of Appendix B, used by
// break_object, get_var, var_decl and bool_var): numeric segments index
// arrays, no bracket syntax. Empty segments are skipped. It returns false
// when the path is empty or does not resolve.
func GetDotted(root any, path string) (any, bool) {
	var parts []string
	for _, p := range strings.Split(strings.TrimSpace(path), ".") {
		if p = strings.TrimSpace(p); p != "" {
			parts = append(parts, p)
		}
	}
	if len(parts) == 0 {
		return nil, false
	}
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
// Appendix B, used by the variable writers, set and outputKey). Objects
// only: missing or non-object intermediates are created or replaced by {}.
func SetDotted(root map[string]any, path string, v any) error {
	if root == nil {
		return errors.New("set dotted path: nil root object")
	}
	if strings.TrimSpace(path) == "" {
		return ErrEmptyPath
	}
	parts := strings.Split(path, ".")
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

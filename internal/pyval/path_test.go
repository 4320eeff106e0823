package pyval

import (
	"testing"
)

// Expected values are what CPython 3.11 returns.

// Guards GetDotted's array bound: an index equal to the length does not
// resolve.
func TestGetDottedIndexAtLengthDoesNotResolve(t *testing.T) {
	t.Parallel()
	root := map[string]any{"a": []any{"x", "y"}}
	if v, ok := GetDotted(root, "a.2"); ok {
		t.Errorf("GetDotted(a.2) = %v, true; want not found", v)
	}
	if v, ok := GetDotted(root, "a.1"); !ok || v != "y" {
		t.Errorf("GetDotted(a.1) = %v, %v", v, ok)
	}
}

// Guards GetIn's promise that an empty key path resolves to nothing (not
// to the root object).
func TestGetInEmptyPathIsNotFound(t *testing.T) {
	t.Parallel()
	root := map[string]any{"a": map[string]any{"b": int64(1)}}
	if v, ok := GetIn(root, nil); ok {
		t.Errorf("GetIn(nil) = %v, true; want not found", v)
	}
	if v, ok := GetIn(root, []string{"a", "b"}); !ok || v != int64(1) {
		t.Errorf("GetIn(a.b) = %v, %v", v, ok)
	}
	if _, ok := GetIn(root, []string{"a", "b", "c"}); ok {
		t.Error("GetIn through a non-object resolved")
	}
}

// TestGetPathIndexPastIntRangeIsOutOfRange pins parseIndex's saturation:
// an index too large for an int (Python's int is unbounded) is out of
// range of every list, so the path is not found (spec §6.7: out-of-range
// → null). It must not wrap or read as index 0.
func TestGetPathIndexPastIntRangeIsOutOfRange(t *testing.T) {
	t.Parallel()
	root := map[string]any{"a": []any{"first", "second"}}
	for _, p := range []string{"a.99999999999999999999", "a[99999999999999999999]", "a.18446744073709551616"} {
		if got, ok := GetPath(root, p); ok {
			t.Errorf("GetPath(%q) = %v, true; want not found", p, got)
		}
	}
	if got, ok := GetPath(root, "a.1"); !ok || got != "second" {
		t.Errorf("GetPath(a.1) = %v, %v; want second", got, ok)
	}
}

// TestPathTokensMatchTheReferenceRegex pins pathTokens against the
// reference's _path_tokens (re ([^.\[\]]+)|\[(\d+)\] over the stripped
// path, keys stripped, empty keys dropped), as CPython 3.11 tokenises
// these paths. A bracket holding no digits is no index: "a[]" is the path
// "a", not a[0], and "a[-1]" is a key "-1", which no list resolves.
func TestPathTokensMatchTheReferenceRegex(t *testing.T) {
	t.Parallel()
	key := func(k string) pathToken { return pathToken{key: k} }
	idx := func(n int) pathToken { return pathToken{isIndex: true, idx: n} }
	cases := []struct {
		path string
		want []pathToken
	}{
		{"a[]", []pathToken{key("a")}},
		{"a[x]", []pathToken{key("a"), key("x")}},
		{"a[-1]", []pathToken{key("a"), key("-1")}},
		{"a[ 0 ]", []pathToken{key("a"), key("0")}},
		{"a[0]b", []pathToken{key("a"), idx(0), key("b")}},
		{"a[[0]]", []pathToken{key("a"), idx(0)}},
		{"a[0", []pathToken{key("a"), key("0")}},
		{"[]", nil},
		{"a.[1]", []pathToken{key("a"), idx(1)}},
	}
	for _, c := range cases {
		got := pathTokens(c.path)
		if len(got) != len(c.want) {
			t.Errorf("pathTokens(%q) = %+v; want %+v", c.path, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("pathTokens(%q) = %+v; want %+v", c.path, got, c.want)
				break
			}
		}
	}
	root := map[string]any{"a": []any{"first", "second"}}
	if got, ok := GetPath(root, "a[]"); !ok || len(asList(got)) != 2 {
		t.Errorf("GetPath(a[]) = %v, %v; want the whole list", got, ok)
	}
	if got, ok := GetPath(root, "a[-1]"); ok {
		t.Errorf("GetPath(a[-1]) = %v, true; want not found", got)
	}
}

func asList(v any) []any { l, _ := v.([]any); return l }

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

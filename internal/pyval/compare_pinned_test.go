package pyval

import (
	"math"
	"testing"
)

// TestEqualListsOfDifferentLengthsAreUnequal guarantees that Python list ==
// is false when the lengths differ, whichever side is longer (and does not
// panic on the shorter one).
func TestEqualListsOfDifferentLengthsAreUnequal(t *testing.T) {
	t.Parallel()
	long, short := []any{int64(1), int64(2)}, []any{int64(1)}
	if Equal(long, short) || Equal(short, long) {
		t.Errorf("Equal([1, 2], [1]) or Equal([1], [1, 2]) is true; Python's == gives False")
	}
}

// TestEqualNoneOnlyEqualsNone guarantees that None == x is true only for
// x None: None != "", None != [], None != {}.
func TestEqualNoneOnlyEqualsNone(t *testing.T) {
	t.Parallel()
	if !Equal(nil, nil) {
		t.Errorf("Equal(None, None) = false, want true")
	}
	for _, b := range []any{"", "None", []any{}, map[string]any{}} {
		if Equal(nil, b) {
			t.Errorf("Equal(None, %#v) = true; Python's == gives False", b)
		}
	}
}

// TestCompareIntWithNaNIsUnordered guarantees that an int against a float
// NaN, on either side, is unordered (ok=false) and unequal, as in Python
// (1 < nan, 1 > nan and 1 == nan are all False).
func TestCompareIntWithNaNIsUnordered(t *testing.T) {
	t.Parallel()
	nan := math.NaN()
	for _, pair := range [][2]any{{int64(1), nan}, {nan, int64(1)}} {
		if _, ok := Compare(pair[0], pair[1]); ok {
			t.Errorf("Compare(%v, %v) ok = true, want false (NaN is unordered)", pair[0], pair[1])
		}
		if Equal(pair[0], pair[1]) {
			t.Errorf("Equal(%v, %v) = true, want false", pair[0], pair[1])
		}
	}
}

// TestGetOrFallsBackToLastKeysValue guarantees Python's
// m.get(k1) or m.get(k2) semantics: when no value is truthy the result is
// the last key's value itself (0, "", …), not None.
func TestGetOrFallsBackToLastKeysValue(t *testing.T) {
	t.Parallel()
	m := map[string]any{"a": nil, "b": int64(0)}
	if got := GetOr(m, "a", "b"); got != int64(0) {
		t.Errorf("GetOr({a: None, b: 0}, a, b) = %#v, want 0", got)
	}
	m = map[string]any{"a": int64(0), "b": ""}
	if got := GetOr(m, "a", "b"); got != "" {
		t.Errorf("GetOr({a: 0, b: ''}, a, b) = %#v, want \"\"", got)
	}
}

// TestCompareListsSkipsEqualUnorderableElements guarantees Python's list
// ordering: equal leading elements are skipped by ==, even ones that have
// no order themselves ([None] < [None, 1] and [{}] < [{}, 2] are True).
func TestCompareListsSkipsEqualUnorderableElements(t *testing.T) {
	t.Parallel()
	for _, head := range []any{nil, map[string]any{"a": int64(1)}} {
		c, ok := Compare([]any{head}, []any{head, int64(1)})
		if !ok || c != -1 {
			t.Errorf("Compare([%v], [%v, 1]) = %d, %v; want -1, true", head, head, c, ok)
		}
	}
}

// TestNegativeNumbersAreTruthy guarantees Python truthiness of numbers:
// only zero is falsy, so -1 and -0.5 are true.
func TestNegativeNumbersAreTruthy(t *testing.T) {
	t.Parallel()
	for _, v := range []any{int64(-1), -1, -0.5} {
		if !Truthy(v) {
			t.Errorf("Truthy(%v) = false; Python's bool() gives True", v)
		}
	}
}

// TestIsRealNumberAcceptsFloats guarantees that a float is a real number
// (isinstance(x, (int, float)) and not bool).
func TestIsRealNumberAcceptsFloats(t *testing.T) {
	t.Parallel()
	if !IsRealNumber(1.5) || !IsRealNumber(int64(1)) || IsRealNumber(true) {
		t.Errorf("IsRealNumber: 1.5 → %v, 1 → %v, True → %v; want true, true, false",
			IsRealNumber(1.5), IsRealNumber(int64(1)), IsRealNumber(true))
	}
}

// TestCompareStringsIsLexicographic guarantees Python's str ordering: code
// point by code point, not by length ("b" > "aa").
func TestCompareStringsIsLexicographic(t *testing.T) {
	t.Parallel()
	if c, ok := Compare("b", "aa"); !ok || c != 1 {
		t.Errorf("Compare(\"b\", \"aa\") = %d, %v; want 1, true", c, ok)
	}
}

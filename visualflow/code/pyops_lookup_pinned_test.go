package code

import (
	"strings"
	"testing"
)

// A bool compared with 0.0 is compared as the int 0, as in Python
// (python3: False == 0.0 is True, False != 0.0 False): a float literal 0
// or 1 is not left to Starlark's comparison, which says a bool equals no
// number (plainCompare).
func TestBoolEqualsFloatZeroLiteral(t *testing.T) {
	got := evalOK(t, "[x == 0.0, x != 0.0, 0.0 == x, y == 1.0]", map[string]any{"x": false, "y": true})
	if jsonish(got) != jsonish([]any{true, false, true, true}) {
		t.Fatalf("got %v, want [true false true true] (python3)", got)
	}
}

// A dict equals another only with the same number of keys (python3:
// {'a': 1} == {'a': 1, 'b': 2} is False, != True): comparing the keys of
// one side alone would find them all in the larger dict.
func TestDictsOfDifferentSizesAreUnequal(t *testing.T) {
	got := evalOK(t, `[{"a": 1} == {"a": 1, "b": 2}, {"a": 1} != {"a": 1, "b": 2}]`, nil)
	if jsonish(got) != jsonish([]any{false, true}) {
		t.Fatalf("got %v, want [false true] (python3)", got)
	}
}

// Dicts are not ordered (python3: {} < {} raises TypeError "'<' not
// supported between instances of 'dict' and 'dict'"): only == and != go
// through the sandbox's dict equality.
func TestOrderingDictsFails(t *testing.T) {
	for _, expr := range []string{"x < y", "x >= y"} {
		v, _, err := Eval(t.Context(), expr, map[string]any{"x": map[string]any{}, "y": map[string]any{}}, Limits{})
		if err == nil {
			t.Errorf("%s = %v, want an error (python3: TypeError)", expr, v)
		}
	}
}

// A bool is found in a range as the int it equals (python3: True in
// range(3) is True, False in range(1, 3) False).
func TestBoolInRangeIsIntInRange(t *testing.T) {
	got := evalOK(t, "[x in range(3), y in range(1, 3), x not in range(3)]", map[string]any{"x": true, "y": false})
	if jsonish(got) != jsonish([]any{true, false, false}) {
		t.Fatalf("got %v, want [true false false] (python3)", got)
	}
}

// The keys 0, 0.0 and 1.0 find the bool keys they equal, as in python3:
// 0 in {False: 'a'} is True, {False: 'x'}.get(0.0) is 'x', {True: 'y'}.get(1.0)
// is 'y', 0 in set([False]) is True.
func TestZeroAndFloatKeysFindBoolKeys(t *testing.T) {
	got := evalOK(t, `[0 in {False: "a"}, {False: "x"}.get(0.0), {True: "y"}.get(1.0), 0 in set([False]), 0.0 in {False: 1}]`, nil)
	if jsonish(got) != jsonish([]any{true, "x", "y", true, true}) {
		t.Fatalf("got %v, want [true x y true true] (python3)", got)
	}
}

// max and min keep the first of equal items, as Python's (python3:
// max([(1, 'a'), (1, 'b')], key=lambda p: p[0]) is (1, 'a'); max(1, 1.0)
// is 1 and min(1.0, 1) is 1.0): a later item replaces the extremum only
// when strictly better.
func TestMaxMinKeepFirstOfEqualItems(t *testing.T) {
	got := evalOK(t, `[max([(1, "a"), (1, "b")], key=lambda p: p[0])[1], min([(1, "a"), (1, "b")], key=lambda p: p[0])[1], type(max(1, 1.0)), type(min(1.0, 1))]`, nil)
	if jsonish(got) != jsonish([]any{"a", "a", "int", "float"}) {
		t.Fatalf("got %v, want [a a int float] (python3)", got)
	}
}

// list.index honours its start 0 and its end bound, negative ones counted
// from the end (python3: [1, 2].index(1, 0) is 0, [1, 2, 3].index(2, 0,
// -1) is 1, [1, 2, 3].index(3, 0, -1) raises ValueError).
func TestListIndexHonoursStartZeroAndEnd(t *testing.T) {
	got := evalOK(t, "[[1, 2].index(1, 0), [1, 2, 3].index(2, 0, -1), [1, 2, 3].index(3, -1)]", nil)
	if jsonish(got) != jsonish([]any{int64(0), int64(1), int64(2)}) {
		t.Fatalf("got %v, want [0 1 2] (python3)", got)
	}
	if v, _, err := Eval(t.Context(), "[1, 2, 3].index(3, 0, -1)", nil, Limits{}); err == nil || !strings.Contains(err.Error(), "not in list") {
		t.Fatalf("[1, 2, 3].index(3, 0, -1) = %v, %v; want a not-in-list error (python3: ValueError)", v, err)
	}
}

// hash of an int at or past the modulus 2^61 - 1, either sign, is its
// remainder as python3 gives it: hash(2305843009213693951) and
// hash(-2305843009213693951) are 0, hash(2**61) is 1 and hash(-2**61) is
// -2 (not -1, CPython's error marker).
func TestHashOfIntsAtTheModulus(t *testing.T) {
	got := evalOK(t, "[hash(2305843009213693951), hash(-2305843009213693951), hash(2305843009213693952), hash(-2305843009213693952)]", nil)
	if jsonish(got) != jsonish([]any{int64(0), int64(0), int64(1), int64(-2)}) {
		t.Fatalf("got %v, want [0 0 1 -2] (python3)", got)
	}
}

// hash of a float that is not an int is not the hash of its truncation
// (python3: hash(1.5) is 1152921504606846977, not hash(1)); the sandbox
// extends hash to floats equal to an int only, so hash(1.5) is Starlark's
// error (docs/visualflow.md).
func TestHashOfNonIntegralFloatIsNotTruncated(t *testing.T) {
	if v, _, err := Eval(t.Context(), "hash(1.5)", nil, Limits{}); err == nil {
		t.Fatalf("hash(1.5) = %v, want Starlark's error, not hash(1)", v)
	}
}

// A float remainder that is zero takes a float divisor's sign (python3:
// 4.0 % -2.0 is -0.0, 0.0 % -1.5 is -0.0, -4.0 % 2.0 is 0.0).
func TestFloatModuloZeroHasFloatDivisorSign(t *testing.T) {
	got := evalOK(t, "[str(x % -2.0), str(0.0 % y), str(-x % 2.0)]", map[string]any{"x": 4.0, "y": -1.5})
	if jsonish(got) != jsonish([]any{"-0.0", "-0.0", "0.0"}) {
		t.Fatalf("got %v, want [-0.0 -0.0 0.0] (python3)", got)
	}
}

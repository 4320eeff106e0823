package code

import "testing"

// hash(-1) is -2, as in Python (CPython reserves -1 as an error marker),
// for the small-int fast path as for big ints.
func TestHashOfMinusOne(t *testing.T) {
	if got := evalOK(t, "[hash(-1), hash(-1.0), hash(-2)]", nil); jsonish(got) != jsonish([]any{int64(-2), int64(-2), int64(-2)}) {
		t.Fatalf("got %v, want [-2, -2, -2]", got)
	}
}

// sorted(reverse=True) keeps equal items in their original order, as
// Python's stable reverse sort does (it is not a reversed ascending sort).
func TestSortedReverseIsStable(t *testing.T) {
	got := evalOK(t, `[p[1] for p in sorted([(1, "a"), (2, "x"), (1, "b")], key=lambda p: p[0], reverse=True)]`, nil)
	if jsonish(got) != jsonish([]any{"x", "a", "b"}) {
		t.Fatalf("got %v, want [x a b]", got)
	}
}

// str() of a one-item tuple writes Python's trailing comma: "(1,)".
func TestReprOfSingletonTuple(t *testing.T) {
	if got := evalOK(t, "str((1,)) + repr(((),))", nil); got != "(1,)((),)" {
		t.Fatalf("got %q, want %q", got, "(1,)((),)")
	}
}

// str() of an empty set is "set()", as Python writes it ("{}" is a dict).
func TestReprOfEmptySet(t *testing.T) {
	if got := evalOK(t, "str(set()) + repr([set()])", nil); got != "set()[set()]" {
		t.Fatalf("got %q, want %q", got, "set()[set()]")
	}
}

// str() with no argument is the empty string, as in Python.
func TestStrWithoutArgument(t *testing.T) {
	if got := evalOK(t, "str()", nil); got != "" {
		t.Fatalf("got %q, want \"\"", got)
	}
}

// A sequence that is a prefix of another orders before it, as in Python:
// [1] < [1, 2] and (1, 2) > (1,).
func TestShorterPrefixSequenceOrdersFirst(t *testing.T) {
	got := evalOK(t, "[[1] < [1, 2], (1, 2) > (1,), [x] < [x, 0]]", map[string]any{"x": []any{}})
	if jsonish(got) != jsonish([]any{true, true, true}) {
		t.Fatalf("got %v, want [true true true]", got)
	}
}

// list.index clamps a start bound before the list's beginning to 0, as
// Python's slice bounds: [1, 2].index(1, -10) is 0.
func TestListIndexClampsNegativeStart(t *testing.T) {
	if got := evalOK(t, "[1, 2].index(1, -10)", nil); got != int64(0) {
		t.Fatalf("got %#v, want 0", got)
	}
}

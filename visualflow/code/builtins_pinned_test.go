package code

import (
	"strings"
	"testing"
	"time"
)

// sum's start is an int when it is a bool, as in Python (python3:
// sum([1, 2], True) is 4, sum([True], False) is 1); Starlark's True + 1
// fails.
func TestSumBoolStartCountsAsInt(t *testing.T) {
	got := evalOK(t, "[sum([1, 2], True), sum([True], False)]", nil)
	if jsonish(got) != jsonish([]any{int64(4), int64(1)}) {
		t.Fatalf("got %v, want [4 1] (python3)", got)
	}
}

// round of an int to tens or hundreds rounds to the nearest multiple,
// also when the int has as many digits as the multiple has zeros
// (python3: round(6, -1) is 10, round(-6, -1) -10, round(51, -2) 100,
// round(5, -1) 0, round(4, -1) 0).
func TestRoundIntToNegativeDigitsOfItsOwnLength(t *testing.T) {
	got := evalOK(t, "[round(6, -1), round(-6, -1), round(51, -2), round(5, -1), round(4, -1)]", nil)
	if jsonish(got) != jsonish([]any{int64(10), int64(-10), int64(100), int64(0), int64(0)}) {
		t.Fatalf("got %v, want [10 -10 100 0 0] (python3)", got)
	}
}

// max and min refuse default= with more than one positional argument
// (python3: max(1, 2, default=0) raises TypeError "Cannot specify a
// default for max() with multiple positional arguments").
func TestMaxDefaultWithSeveralArgumentsFails(t *testing.T) {
	for _, expr := range []string{"max(1, 2, default=0)", "min(1, 2, default=0)"} {
		v, _, err := Eval(t.Context(), expr, nil, Limits{})
		if err == nil || !strings.Contains(err.Error(), "cannot specify a default") {
			t.Errorf("%s = %v, %v; want the multiple-arguments error (python3: TypeError)", expr, v, err)
		}
	}
}

// list() of s.codepoints() counts two values an item, as list.extend
// does (each code point is a new string besides its slot): 200,000 code
// points under a 4 MiB limit (262,144 values) are refused before
// Starlark builds them.
func TestListOfCodepointsCountsTwoValuesAnItem(t *testing.T) {
	src := "def f(_input):\n    s = \"a\" * 200000\n    return len(list(s.codepoints()))\n"
	_, _, err := Run(t.Context(), src, "f", map[string]any{}, Limits{MaxMemory: 4 << 20, Timeout: 10 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "list() of 200000 items would exceed the memory limit") {
		t.Fatalf("err = %v, want the list() refusal", err)
	}
}

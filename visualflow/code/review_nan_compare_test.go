package code

import (
	"context"
	"math"
	"testing"
)

// Python's NaN is unequal to everything, itself included, and every
// ordering with it is false: `v != v` is the usual NaN test. Starlark
// orders floats totally (NaN equal to itself, above +Inf), which the
// sandbox's Python comparisons kept.
func TestReviewNaNComparesAsPython(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		expr string
		want any
	}{
		{`_input["x"] != _input["x"]`, true},
		{`_input["x"] == _input["x"]`, false},
		{`float("nan") == float("nan")`, false},
		{`_input["x"] > 1.0`, false},
		{`_input["x"] < 1.0`, false},
		{`_input["x"] >= _input["x"]`, false},
		{`_input["x"] in [1.0, 2.0]`, false},
		// Against number literals other than 0 and 1, which Starlark
		// compares without the sandbox's guard where it answers as Python.
		{`_input["x"] > 2.0`, false},
		{`_input["x"] >= 2`, false},
		{`2.0 < _input["x"]`, false},
		{`2 <= _input["x"]`, false},
		{`_input["x"] < 2.0`, false},
		{`2.0 > _input["x"]`, false},
		{`_input["x"] <= 12345678901234567890123`, false},
		{`_input["x"] > 12345678901234567890123`, false},
		{`_input["x"] == 2.0`, false},
		{`_input["x"] != 2`, true},
	} {
		checkNaNExpr(t, tc.expr, tc.want)
	}
}

// Items of containers keep Starlark's equality, which gives Python's
// answer for one shared NaN object ([x] == [x], x in [x]: Python's
// identity shortcut), and NaN against a string still fails as Starlark's
// mixed comparisons do.
func TestReviewNaNInContainersUnchanged(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		expr string
		want any
	}{
		{`[_input["x"]] == [_input["x"]]`, true},
		{`_input["x"] in [_input["x"]]`, true},
		{`_input["x"] == "a"`, false},
		{`_input["x"] != True`, true},
		{`_input["x"] == False`, false},
	} {
		checkNaNExpr(t, tc.expr, tc.want)
	}
}

// checkNaNExpr runs expr in a code node with _input["x"] a NaN and
// checks its value is want (Python's).
func checkNaNExpr(t *testing.T, expr string, want any) {
	t.Helper()
	src := "def transform(_input):\n    return " + expr + "\n"
	got, _, err := Run(context.Background(), src, "transform", map[string]any{"x": math.NaN()}, Limits{})
	if err != nil {
		t.Errorf("%s: %v", expr, err)
		return
	}
	if got != want {
		t.Errorf("%s = %#v, want %#v (Python)", expr, got, want)
	}
}

package code

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

// Tests added by mutation testing: each pins a behaviour promised by the
// package documentation, docs/visualflow.md or Python (which user code is
// written for) that no other test of this package checked.

// evalOK evaluates expr with names bound and fails the test on error.
func evalOK(t *testing.T, expr string, names map[string]any) any {
	t.Helper()
	v, _, err := Eval(context.Background(), expr, names, Limits{})
	if err != nil {
		t.Fatalf("Eval(%q): %v", expr, err)
	}
	return v
}

// Guards FunctionName: a keyword is not a usable function name, even
// though it matches the identifier pattern (docs/visualflow.md).
func TestFunctionNameReplacesKeywords(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"def": "transform", "return": "transform", "None": "transform", "load": "transform", "my_fn": "my_fn", "_x1": "_x1"} {
		if got := FunctionName(in); got != want {
			t.Errorf("FunctionName(%q) = %q, want %q", in, got, want)
		}
	}
}

// Guards BuildBody's empty body: a body of only whitespace is empty, so
// the function returns its input.
func TestBuildBodyBlankBodyReturnsInput(t *testing.T) {
	t.Parallel()
	src := BuildBody("transform", "  \n\t\n", []string{"a"})
	got, _, err := Run(context.Background(), src, "transform", map[string]any{"a": int64(1)}, Limits{})
	if err != nil {
		t.Fatalf("%v\n%s", err, src)
	}
	if m, ok := got.(map[string]any); !ok || m["a"] != int64(1) || len(m) != 1 {
		t.Fatalf("got %#v, want the input", got)
	}
}

// Guards BuildBody's handling of a body indented with tabs, as editors
// produce it: a tab counts as four spaces, so a block may mix a tab and
// four spaces.
func TestBuildBodyAcceptsTabIndentation(t *testing.T) {
	t.Parallel()
	src := BuildBody("transform", "if x > 1:\n\tif x > 2:\n\t\ty = 'big'\n\t    return y\nreturn 'small'", []string{"x"})
	got, _, err := Run(context.Background(), src, "transform", map[string]any{"x": int64(5)}, Limits{})
	if err != nil || got != "big" {
		t.Fatalf("got %#v, %v\n%s", got, err, src)
	}
}

// Guards the quoting of pin ids in the generated `_input.get("<pin id>")`:
// a pin id with a double quote, a backslash or a newline is read verbatim.
func TestBuildBodyQuotesOddPinIDs(t *testing.T) {
	t.Parallel()
	pins := []string{`say "hi"`, `back\slash`, "new\nline"}
	src := BuildBody("transform", "return [say__hi_, back_slash, new_line]", pins)
	in := map[string]any{`say "hi"`: "q", `back\slash`: "b", "new\nline": "n"}
	got, _, err := Run(context.Background(), src, "transform", in, Limits{})
	if err != nil {
		t.Fatalf("%v\n%s", err, src)
	}
	if l, ok := got.([]any); !ok || len(l) != 3 || l[0] != "q" || l[1] != "b" || l[2] != "n" {
		t.Fatalf("got %#v, want [q b n]", got)
	}
}

// Guards the builtins added to Starlark's universe with Python semantics:
// sum's start value, map returning the function's results, filter(None,
// …) keeping truthy items, isinstance(bool, int).
func TestPythonBuiltinsSemantics(t *testing.T) {
	t.Parallel()
	for expr, want := range map[string]string{
		`sum([1, 2], 10)`:                         "13",
		`sum([[1], [2]], [])`:                     "[1 2]",
		`sum([])`:                                 "0",
		`map(lambda v: v * 10, [1, 2])`:           "[10 20]",
		`filter(None, [0, 1, "", "a", [], None])`: "[1 a]",
		`filter(lambda v: v > 1, [1, 2, 3])`:      "[2 3]",
		`isinstance(True, int)`:                   "true",
		`isinstance(1, bool)`:                     "false",
		`isinstance(1.5, (int, float))`:           "true",
		`isinstance(1, float)`:                    "false",
		`isinstance([], list)`:                    "true",
		`isinstance({}, dict)`:                    "true",
	} {
		got := evalOK(t, expr, nil)
		if jsonish(got) != want {
			t.Errorf("%s = %s, want %s", expr, jsonish(got), want)
		}
	}
}

func jsonish(v any) string {
	if l, ok := v.([]any); ok {
		parts := make([]string, len(l))
		for i, e := range l {
			parts[i] = jsonish(e)
		}
		return "[" + strings.Join(parts, " ") + "]"
	}
	b, _ := json.Marshal(v)
	return strings.Trim(string(b), `"`)
}

// Guards round() without ndigits on NaN and infinities: Python raises
// (ValueError / OverflowError) instead of returning a number.
func TestRoundNonFiniteIsAnError(t *testing.T) {
	t.Parallel()
	for _, expr := range []string{`round(float("nan"))`, `round(float("inf"))`, `round(float("-inf"))`} {
		if v, _, err := Eval(context.Background(), expr, nil, Limits{}); err == nil {
			t.Errorf("%s = %v, want an error", expr, v)
		}
	}
}

// Guards Limits.MaxMemory = -1, which disables the memory watchdog: a run
// whose heap grows is not cancelled for it.
func TestNegativeMaxMemoryDisablesWatchdog(t *testing.T) {
	t.Parallel()
	src := "def transform(_input):\n    x = []\n    for i in range(300000):\n        x.append('abcdefghij' * 4)\n    return len(x)"
	got, _, err := Run(context.Background(), src, "transform", map[string]any{}, Limits{MaxMemory: -1, Timeout: 30 * time.Second})
	if err != nil || got != int64(300000) {
		t.Fatalf("got %v, %v; want 300000", got, err)
	}
}

// Guards cancellation through the context: a cancelled context stops a
// running program with a limit error well before its timeout.
func TestContextCancellationStopsRun(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, _, err := Run(ctx, "def transform(_input):\n    while True:\n        pass", "transform", map[string]any{},
		Limits{Timeout: 10 * time.Second, MaxSteps: 1 << 62})
	if err == nil || !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "context cancelled") {
		t.Fatalf("err = %v, want a limit error for the cancelled context", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("cancellation took %s", d)
	}
}

// Guards the package promise that ints beyond int64 come back as floats
// (not as an error).
func TestIntBeyondInt64ComesBackAsFloat(t *testing.T) {
	t.Parallel()
	if got := evalOK(t, "9223372036854775807 + 1", nil); got != 9.223372036854775808e18 {
		t.Fatalf("got %#v, want 9.223372036854776e+18", got)
	}
	if got := evalOK(t, "-9223372036854775808", nil); got != int64(-9223372036854775808) {
		t.Fatalf("got %#v, want MinInt64 as int64", got)
	}
}

// Guards the conversion of values nested well within JSON's usual depth:
// a list nested 100 levels deep crosses the boundary both ways.
func TestDeeplyNestedValuesCrossTheBoundary(t *testing.T) {
	t.Parallel()
	var v any = "leaf"
	for i := 0; i < 100; i++ {
		v = []any{v}
	}
	got := evalOK(t, "x", map[string]any{"x": v})
	for i := 0; i < 100; i++ {
		l, ok := got.([]any)
		if !ok || len(l) != 1 {
			t.Fatalf("level %d: %#v", i, got)
		}
		got = l[0]
	}
	if got != "leaf" {
		t.Fatalf("leaf = %#v", got)
	}
}

// Guards json.Number input: an integer literal is a Starlark int (so //
// and the result stay ints), a decimal one a float.
func TestJSONNumberInputKeepsIntOrFloat(t *testing.T) {
	t.Parallel()
	names := map[string]any{"i": json.Number("7"), "f": json.Number("7.0"), "e": json.Number("1e2")}
	if got := evalOK(t, "i // 2", names); got != int64(3) {
		t.Errorf("i // 2 = %#v, want int64 3", got)
	}
	if got := evalOK(t, "f // 2", names); got != 3.0 {
		t.Errorf("f // 2 = %#v, want 3.0", got)
	}
	if got := evalOK(t, "e", names); got != 100.0 {
		t.Errorf("e = %#v, want 100.0", got)
	}
}

// Guards Eval's binding of names: an input named like a builtin (as legacy
// function nodes bind every identifier-shaped input key) shadows it.
func TestEvalNamesShadowBuiltins(t *testing.T) {
	t.Parallel()
	if got := evalOK(t, "sum + map", map[string]any{"sum": int64(40), "map": int64(2)}); got != int64(42) {
		t.Fatalf("got %#v, want 42", got)
	}
}

// Guards FromStarlark's promise that dict keys that are not strings are
// converted with str().
func TestNonStringDictKeysUseStr(t *testing.T) {
	t.Parallel()
	got := evalOK(t, `{1: "a", None: "n", True: "t", 1.5: "f", "k": "s"}`, nil)
	want := map[string]any{"1": "a", "None": "n", "True": "t", "1.5": "f", "k": "s"}
	m, ok := got.(map[string]any)
	if !ok || len(m) != len(want) {
		t.Fatalf("got %#v, want %v", got, want)
	}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("key %q = %#v, want %q", k, m[k], v)
		}
	}
}

// Guards the default step budget of 10,000,000 (Limits doc comment): a
// runaway loop under zero Limits stops on steps, well before the timeout.
func TestDefaultStepBudgetIsTenMillion(t *testing.T) {
	t.Parallel()
	_, st, err := Run(context.Background(), "def transform(_input):\n    while True:\n        pass", "transform", map[string]any{},
		Limits{Timeout: 20 * time.Second})
	if err == nil || !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "exceeded 10000000 execution steps") {
		t.Fatalf("err = %v, want the 10,000,000 step limit", err)
	}
	if st.Steps < 10_000_000 || st.Steps > 10_100_000 {
		t.Fatalf("steps = %d", st.Steps)
	}
}

// isinstance(x, str) is True for a string, as in Python, although
// Starlark names the string type "string".
func TestIsinstanceOfStrRecognisesStrings(t *testing.T) {
	t.Parallel()
	if got := evalOK(t, `isinstance("a", str)`, nil); got != true {
		t.Errorf(`isinstance("a", str) = %#v, want true`, got)
	}
	if got := evalOK(t, `isinstance(1, str)`, nil); got != false {
		t.Errorf(`isinstance(1, str) = %#v, want false`, got)
	}
}

// round() of an int with ndigits returns an int, as in Python
// (round(15, -1) == 20, round(5, 1) == 5), and round(True) is 1.
func TestRoundOfIntWithNdigitsStaysInt(t *testing.T) {
	t.Parallel()
	for expr, want := range map[string]any{"round(15, -1)": int64(20), "round(25, -1)": int64(20), "round(5, 1)": int64(5), "round(True)": int64(1)} {
		v, _, err := Eval(context.Background(), expr, nil, Limits{})
		if err != nil || v != want {
			t.Errorf("%s = %#v (%T), %v; want %#v (%T)", expr, v, v, err, want, want)
		}
	}
}

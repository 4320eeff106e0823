package code

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

// str() and repr() of a container that holds itself. Python writes the back reference as [...] / {...}:
//
//	>>> l = [1]; l.append(l); str(l)
//	'[1, [...]]'
//	>>> d = {}; d['k'] = d; repr(d)
//	"{'k': {...}}"
//
// Without a cycle check in writePyRepr, user code in the sandbox overflows
// the goroutine stack: "fatal error: stack overflow", which no recover,
// step budget, timeout or memory watchdog stops, and the process dies.
//
// The call runs in a child process (with a small max stack, so the
// overflow is quick and cheap) because the failure is fatal.
func TestStrOfSelfContainingContainer(t *testing.T) {
	const src = "def f(x):\n" +
		"  l = [1]\n" +
		"  l.append(l)\n" +
		"  d = {}\n" +
		"  d['k'] = d\n" +
		"  return [str(l), repr(d)]\n"
	got, errText, child := codeInChild(t, "CODE_STR_CYCLE_CHILD", func() error {
		debug.SetMaxStack(32 << 20)
		return nil
	}, src, Limits{})
	if child {
		return
	}
	want := []any{"[1, [...]]", "{'k': {...}}"}
	if errText != "" || !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v (err %q), want %#v as Python writes them", got, errText, want)
	}
}

// int() and float() of a string accept what Python's accept (Starlark's
// refuse surrounding whitespace and underscores between digits): a code
// node doing float(x['price']) on "12.5\n" (text from an LLM or a file)
// must not fail.
//
//	>>> [int(" 3 "), float(" 2.5\n"), int("1_000"), float("1_000.5"), int("\t-7\n")]
//	[3, 2.5, 1000, 1000.5, -7]
func TestIntFloatOfStringsAsPython(t *testing.T) {
	got, _, err := Eval(context.Background(),
		`[int(" 3 "), float(" 2.5\n"), int("1_000"), float("1_000.5"), int("\t-7\n")]`,
		map[string]any{}, Limits{})
	if err != nil {
		t.Fatalf("Eval: %v (Python gives [3, 2.5, 1000, 1000.5, -7])", err)
	}
	want := []any{int64(3), 2.5, int64(1000), 1000.5, int64(-7)}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v, want %#v", got, want)
	}
}

// The sandbox's timeout and memory watchdog stop code through
// Thread.Cancel, which Starlark observes only between its own steps; the
// Go loops of our sum(), filter() and map() must look at it too, or one
// call over a huge range runs on for minutes. Each call below would take
// minutes without that; the bound is generous so that a slow machine
// never fails it.
func TestLoopingBuiltinsHonourTimeout(t *testing.T) {
	for _, expr := range []string{
		`sum(range(1000000000))`,
		`len(filter(None, range(1000000000)))`,
		`len(map(abs, range(1000000000)))`,
	} {
		start := time.Now()
		_, _, err := Eval(context.Background(), expr, map[string]any{}, Limits{Timeout: 20 * time.Millisecond})
		took := time.Since(start)
		if err == nil || !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "timeout") {
			t.Fatalf("%s: err = %v, want the timeout (ErrLimit)", expr, err)
		}
		if took > 5*time.Second {
			t.Errorf("%s: a 20ms timeout stopped it only after %v", expr, took)
		}
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

// Guards Eval's binding of names: an input named like a builtin (as legacy
// function nodes bind every identifier-shaped input key) shadows it.
func TestEvalNamesShadowBuiltins(t *testing.T) {
	t.Parallel()
	if got := evalOK(t, "sum + map", map[string]any{"sum": int64(40), "map": int64(2)}); got != int64(42) {
		t.Fatalf("got %#v, want 42", got)
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

// Python: str(1234567.0) == '1234567.0', str(1e6) == '1000000.0';
// Starlark's str uses Go's %g and gives '1.234567e+06', '1e+06'.
func TestStrOfFloatIsPythonRepr(t *testing.T) {
	got := runSource(t, "def f(x):\n  return [str(1234567.0), str(1e6), str([2500000.0]), 'n=' + str(x['p'])]",
		map[string]any{"p": 1999999.5})
	want := []any{"1234567.0", "1000000.0", "[2500000.0]", "n=1999999.5"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v, want %#v (Python str of floats)", got, want)
	}
}

// Python bools are ints: sum([True, False, True]) == 2 (counting idiom),
// sum([1.5, True]) == 2.5. round() already treats bools as ints; sum does not.
func TestSumOfBools(t *testing.T) {
	got := runSource(t, "def f(x):\n  return [sum([True, False, True]), sum([v > 1 for v in [1, 2, 3]]), sum([1.5, True])]", nil)
	want := []any{int64(2), int64(2), 2.5}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v, want %#v", got, want)
	}
}

// Python 3.8+: sum(iterable, /, start=0) takes start by keyword.
func TestSumStartKeyword(t *testing.T) {
	if got := runSource(t, "def f(x):\n  return sum([1, 2], start=10)", nil); got != int64(13) {
		t.Errorf("got %#v, want 13", got)
	}
}

// Python: map(function, iterable, *iterables) zips several iterables.
func TestMapSeveralIterables(t *testing.T) {
	got := runSource(t, "def f(x):\n  return list(map(lambda a, b: a + b, [1, 2], [10, 20, 30]))", nil)
	if want := []any{int64(11), int64(22)}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v, want %#v", got, want)
	}
}

// Python: round(1.7976931348623157e308, -308) raises OverflowError
// ("rounded value too large to represent"); here it returns +inf.
func TestRoundOverflowIsAnError(t *testing.T) {
	got, _, err := Run(context.Background(), "def f(x):\n  return round(1.7976931348623157e308, -308)", "f", nil, Limits{})
	if err == nil {
		t.Errorf("got %#v and no error, want an overflow error", got)
	}
}

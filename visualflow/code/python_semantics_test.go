package code

import (
	"context"
	"reflect"
	"testing"
)

// str.splitlines() splits as Python's does: at "\r\n" and at each of
// "\n", "\r", "\v", "\f", "\x1c"-"\x1e", U+0085, U+2028 and U+2029
// (Starlark's splits at "\n" only, so text with Windows line endings
// kept a "\r" at the end of every line), keepends keeping the breaks.
func TestSplitlinesSplitsAtPythonLineBreaks(t *testing.T) {
	got, _, err := Eval(context.Background(),
		`["a\r\nb\r\n".splitlines(), "a\rb".splitlines(), "a\r\nb".splitlines(True),
		  "a\x0bb\x0cc\x1cd\u0085e\u2028f\u2029g".splitlines(), "".splitlines(), "\n".splitlines(), "a\n\nb\r".splitlines(True)]`,
		map[string]any{}, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	want := []any{
		[]any{"a", "b"}, []any{"a", "b"}, []any{"a\r\n", "b"},
		[]any{"a", "b", "c", "d", "e", "f", "g"}, []any{}, []any{""}, []any{"a\n", "\n", "b\r"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("splitlines = %#v, want %#v (Python)", got, want)
	}
}

// A Python bool is an int: True == 1, 1 in [True] and {1: "a"}.get(True)
// are True, True and "a". A flag that came from JSON as true tested with
// `x["enabled"] == 1` must take the same branch as in Python.
func TestBoolEqualsIntAsPython(t *testing.T) {
	src := "def transform(_input):\n" +
		"    x = _input[\"cfg\"]\n" +
		"    return [x[\"enabled\"] == 1, 1 in [True], {1: \"a\"}.get(True), 0 == False, \"on\" if x[\"enabled\"] == 1 else \"off\"]\n"
	got, _, err := Run(context.Background(), src, "transform", map[string]any{"cfg": map[string]any{"enabled": true}}, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	want := []any{true, true, "a", true, "on"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v, want %#v (Python)", got, want)
	}
}

// The other places Python compares a bool as an int: dict lookups and
// updates, containers compared item by item, hash(), ordering, and the
// list methods that compare. (Ordering a bool against a number literal,
// True < 2, is left to Starlark, which fails: guardCompares keeps the
// comparisons with a literal fast.)
func TestBoolIsIntInLookupsAndContainers(t *testing.T) {
	got, _, err := Eval(context.Background(),
		`[{1: "a"}[True], True in {1: 2}, 1 in set([True]), hash(True) == hash(1), 1.0 == True, [True] == [1],
		  {True: 1} == {1: 1}, (0, 1) == (False, True), True < 1 + 1, [1, 2, 3].index(True), sorted([2, True, 0])]`,
		map[string]any{}, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	want := []any{"a", true, true, true, true, true, true, true, true, int64(0), []any{int64(0), true, int64(2)}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v, want %#v (Python)", got, want)
	}
	src := "def f(_input):\n    d = {1: \"a\"}\n    d[True] = \"b\"\n    return d\n"
	if got := runSource(t, src, map[string]any{}); !reflect.DeepEqual(got, map[string]any{"1": "b"}) {
		t.Errorf("d[True] = v on a dict with the key 1: %#v, want {1: 'b'} (Python)", got)
	}
}

// Python's float remainder takes the divisor's sign, a zero one too:
// -4.0 % 2 is 0.0 and 4.0 % -2 is -0.0 (Starlark kept the dividend's
// sign for a zero).
func TestFloatModuloZeroHasDivisorSign(t *testing.T) {
	got, _, err := Eval(context.Background(),
		`[str(-4.0 % 2), str(-3.0 % 3.0), str(4.0 % -2), str(0.0 % -2), str(-4 % 2.0), str(-7 % 2.0), 7 % 3, -7 % 3, "%d" % 5]`,
		map[string]any{}, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	want := []any{"0.0", "0.0", "-0.0", "-0.0", "0.0", "1.0", int64(1), int64(2), "5"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v, want %#v (Python)", got, want)
	}
	src := "def f(_input):\n    x = 4.0\n    x %= -2\n    return str(x)\n"
	if got := runSource(t, src, map[string]any{}); got != "-0.0" {
		t.Errorf("x %%= -2 with x = 4.0: %#v, want '-0.0' (Python)", got)
	}
}

// Module-level lists, dicts and sets can be updated by transform, as in
// Python (a module-level accumulator or cache). Each Run executes the
// module afresh, so nothing leaks from one run to the next.
func TestModuleGlobalsAreMutableInTransform(t *testing.T) {
	src := "seen = set()\n" +
		"out = []\n" +
		"def transform(_input):\n" +
		"    for x in _input[\"items\"]:\n" +
		"        if x not in seen:\n" +
		"            seen.add(x)\n" +
		"            out.append(x)\n" +
		"    return out\n"
	for run := 0; run < 2; run++ {
		got, _, err := Run(context.Background(), src, "transform", map[string]any{"items": []any{int64(1), int64(2), int64(1), int64(3)}}, Limits{})
		if err != nil {
			t.Fatalf("run %d: err = %v; Python returns [1, 2, 3]", run, err)
		}
		if want := []any{int64(1), int64(2), int64(3)}; !reflect.DeepEqual(got, want) {
			t.Fatalf("run %d: got %#v, want %#v", run, got, want)
		}
	}
}

// Lists holding the same list are equal without comparing its items, as
// Python's `is` shortcut makes them: at once, not 3e9 item comparisons.
func TestSharedListsCompareByIdentity(t *testing.T) {
	src := "def f(_input):\n" +
		"    base = list(range(1000000))\n" +
		"    x = []\n" +
		"    y = []\n" +
		"    for i in range(3000):\n" +
		"        x.append(base)\n" +
		"        y.append(base)\n" +
		"    return [x == y, x != y, base in x, x.index(base)]\n"
	if got := runSource(t, src, map[string]any{}); !reflect.DeepEqual(got, []any{true, false, true, int64(0)}) {
		t.Errorf("got %#v, want [True, False, True, 0]", got)
	}
}

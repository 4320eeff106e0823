package code

import (
	"encoding/json"
	"reflect"
	"testing"
)

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

// An int beyond int64 (json.Number, as LoadsJSON and the stores keep it)
// is a Python int in the reference: exact and of type int.
func TestBigIntInputStaysInt(t *testing.T) {
	got := runSource(t, "def f(x):\n  n = x['n']\n  return [type(n), isinstance(n, int), str(n), str(n - 123456789012345678901234567800)]",
		map[string]any{"n": json.Number("123456789012345678901234567890")})
	want := []any{"int", true, "123456789012345678901234567890", "90"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v, want %#v", got, want)
	}
}

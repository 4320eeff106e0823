package code

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
)

func runSource(t *testing.T, src string, input map[string]any) any {
	t.Helper()
	got, _, err := Run(context.Background(), src, "f", input, Limits{})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return got
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

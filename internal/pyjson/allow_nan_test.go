package pyjson

import (
	"math"
	"testing"
)

// TestAllowNaNWritesNonFiniteFloatsAsPython guarantees that Style.AllowNaN
// writes NaN and infinite floats as Python's json.dumps does by default
// (allow_nan=True: NaN, Infinity, -Infinity), and that without it they are
// refused with an error naming where they are, as allow_nan=False does.
func TestAllowNaNWritesNonFiniteFloatsAsPython(t *testing.T) {
	t.Parallel()
	v := map[string]any{"a": math.NaN(), "b": []any{math.Inf(1), float32(math.Inf(-1))}}
	got, err := Marshal(v, Style{Compact: true, AllowNaN: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"a":NaN,"b":[Infinity,-Infinity]}`; string(got) != want {
		t.Fatalf("Marshal = %s, want %s", got, want)
	}
	if _, err := Marshal(v, Style{Compact: true}); err == nil || err.Error() != "a is not JSON-serialisable: float NaN is not allowed" {
		t.Fatalf("Marshal without AllowNaN: %v; want the NaN at a refused", err)
	}
}

package pyval

import (
	"encoding/json"
	"math"
	"testing"
)

// TestCompareBigIntsByValue: ints past int64 are held as float64 for
// arithmetic; compared, they are exact, as in Python (values checked
// with CPython 3.11).
func TestCompareBigIntsByValue(t *testing.T) {
	n := func(s string) any { return json.Number(s) }
	cases := []struct {
		a, b any
		want int
	}{
		{n("9223372036854775808"), n("9223372036854775809"), -1},
		{n("18446744073709551617"), 1.8446744073709552e19, 1}, // 2**64+1 vs float(2**64)
		{n("18446744073709551616"), 1.8446744073709552e19, 0}, // 2**64 == float(2**64)
		{n("1000000000000000000000000000000"), math.Inf(1), -1},
		{math.Inf(-1), n("-1000000000000000000000000000000"), -1},
		{n("9223372036854775808"), int64(math.MaxInt64), 1},
	}
	for _, c := range cases {
		got, ok := Compare(c.a, c.b)
		if !ok || got != c.want {
			t.Errorf("Compare(%v, %v) = %d, %v; want %d", c.a, c.b, got, ok, c.want)
		}
	}
	if _, ok := Compare(n("9223372036854775808"), math.NaN()); ok {
		t.Error("a big int and NaN compared as ordered")
	}
}

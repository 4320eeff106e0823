package pyval

import (
	"encoding/json"
	"math"
	"testing"
)

// TestToIndexClampsIntsPastInt64: Python's int() has no bound, so a slice
// bound or a count past int64 is still an int; ToIndex clamps it, and
// refuses what int() refuses.
func TestToIndexClampsIntsPastInt64(t *testing.T) {
	for _, c := range []struct {
		in   any
		want int64
	}{
		{json.Number("9223372036854775808"), math.MaxInt64},
		{json.Number("-99999999999999999999"), math.MinInt64},
		{1e20, math.MaxInt64},
		{-1e20, math.MinInt64},
		{"12345678901234567890", math.MaxInt64},
		{" -1_000_000_000_000_000_000_000 ", math.MinInt64},
		{int64(7), 7},
		{"42", 42},
	} {
		got, err := ToIndex(c.in)
		if err != nil || got != c.want {
			t.Errorf("ToIndex(%#v) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
	for _, bad := range []any{"1e30", "--5", "abc", math.NaN(), math.Inf(1), nil} {
		if got, err := ToIndex(bad); err == nil {
			t.Errorf("ToIndex(%#v) = %d, want int()'s error", bad, got)
		}
	}
}

package pyval

import (
	"math"
	"testing"
)

func TestSaturatedIntTruncatesAndClamps(t *testing.T) {
	for _, c := range []struct {
		f    float64
		want int64
	}{
		{7.9, 7}, {-7.9, -7}, {0, 0},
		{1e20, math.MaxInt64}, {-1e20, math.MinInt64},
		{math.Inf(1), math.MaxInt64}, {math.Inf(-1), math.MinInt64},
		{math.MaxInt64, math.MaxInt64}, {math.MinInt64, math.MinInt64},
	} {
		if got := SaturatedInt(c.f); got != c.want {
			t.Errorf("SaturatedInt(%v) = %d, want %d", c.f, got, c.want)
		}
	}
}

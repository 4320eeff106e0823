package pyval

import (
	"math"
	"testing"
)

// Expected values are what CPython 3.11 returns.

// Guards FloorDiv on exact negative quotients: -4 // 2 == -2 (only an
// inexact quotient rounds down).
func TestFloorDivExactNegativeQuotient(t *testing.T) {
	t.Parallel()
	for _, tt := range [][3]int64{{-4, 2, -2}, {4, -2, -2}, {-5, 2, -3}, {5, -2, -3}, {-6, -3, 2}} {
		if got, err := FloorDiv(tt[0], tt[1]); err != nil || got != tt[2] {
			t.Errorf("FloorDiv(%d, %d) = %d, %v; want %d", tt[0], tt[1], got, err, tt[2])
		}
	}
}

// Guards the sign of a zero float result: Python's 0.0 % -1.0 and
// 4.0 % -2.0 are -0.0 (sign of the divisor), 0.0 // -1.0 is -0.0.
func TestFloatModAndFloorDivSignedZero(t *testing.T) {
	t.Parallel()
	negZero := func(f float64) bool { return f == 0 && math.Signbit(f) }
	posZero := func(f float64) bool { return f == 0 && !math.Signbit(f) }
	if got := FloatMod(0, -1); !negZero(got) {
		t.Errorf("0.0 %% -1.0 = %v, want -0.0", got)
	}
	if got := FloatMod(4, -2); !negZero(got) {
		t.Errorf("4.0 %% -2.0 = %v, want -0.0", got)
	}
	if got := FloatMod(-4, 2); !posZero(got) {
		t.Errorf("-4.0 %% 2.0 = %v, want 0.0", got)
	}
	if got := FloatFloorDiv(0, -1); !negZero(got) {
		t.Errorf("0.0 // -1.0 = %v, want -0.0", got)
	}
	if got := FloatFloorDiv(math.Copysign(0, -1), 1); !negZero(got) {
		t.Errorf("-0.0 // 1.0 = %v, want -0.0", got)
	}
	if got := FloatFloorDiv(0, 1); !posZero(got) {
		t.Errorf("0.0 // 1.0 = %v, want 0.0", got)
	}
}

// Guards Round with a very negative ndigits: the zero keeps the sign of
// the value (round(-5.0, -400) is -0.0).
func TestRoundHugeNegativeNdigitsKeepsSign(t *testing.T) {
	t.Parallel()
	if got := Round(-5, -400); got != 0 || !math.Signbit(got) {
		t.Errorf("round(-5.0, -400) = %v, want -0.0", got)
	}
	if got := Round(5, -400); got != 0 || math.Signbit(got) {
		t.Errorf("round(5.0, -400) = %v, want 0.0", got)
	}
}

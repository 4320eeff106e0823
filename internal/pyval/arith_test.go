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

// Pins FloatFloorDiv's final rounding step, CPython's "div - floor(div) >
// 0.5": with a quotient between 2**52 and 2**53 the intermediate
// (a - fmod(a, b)) / b can land exactly halfway between two integers, and
// CPython then keeps the floor. Rounding that half up (">=") gives a result
// one too large, an error no small operand shows.
func TestFloatFloorDivHalfwayQuotientKeepsTheFloor(t *testing.T) {
	t.Parallel()
	for _, tt := range [][3]float64{
		{-369541406419128.25, 0.1, -3695414064191284},
		{324968196847990.8, -0.1, -3249681968479908},
		{1.83205542861748e+16, 7.0, 2617222040882114},
	} {
		if got := FloatFloorDiv(tt[0], tt[1]); got != tt[2] {
			t.Errorf("FloatFloorDiv(%v, %v) = %v; want %v (CPython 3.11)", tt[0], tt[1], got, tt[2])
		}
	}
}

package pyval

import (
	"math"
	"testing"
)

// Expected values are what CPython 3.11 returns.

// TestFloatToIntErrorTextIsPythons pins the messages int() of a NaN or an
// infinite float gives, as users see them in a node's error (a substring
// bound or a round ndigits read from NaN): Python writes "NaN" and
// "infinity", not Go's "nan" or "+Inf".
func TestFloatToIntErrorTextIsPythons(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in   float64
		want string
	}{
		{math.NaN(), "cannot convert float NaN to integer"},
		{math.Inf(1), "cannot convert float infinity to integer"},
		{math.Inf(-1), "cannot convert float infinity to integer"},
	} {
		_, err := ToInt(tt.in)
		if err == nil || err.Error() != tt.want {
			t.Errorf("ToInt(%v) error = %v; want %q", tt.in, err, tt.want)
		}
	}
}

// TestNumbersFromMathematicalDigits pins int() and float() of the
// mathematical alphanumeric digits (U+1D7CE..U+1D7FF): one Unicode range
// holds five sets of ten digits, so a digit's value is its offset modulo
// 10. Python reads "𝟙𝟚" (double-struck) as 12 and "𝟣.𝟥" (sans-serif) as
// 1.3; taking the plain offset would misread every set but the first.
func TestNumbersFromMathematicalDigits(t *testing.T) {
	t.Parallel()
	if got, err := ToInt("\U0001D7D9\U0001D7DA"); err != nil || got != 12 {
		t.Errorf("ToInt(double-struck 12) = %v, %v; want 12", got, err)
	}
	if got, err := ToFloat("\U0001D7E3.\U0001D7E5"); err != nil || got != 1.3 {
		t.Errorf("ToFloat(sans-serif 1.3) = %v, %v; want 1.3", got, err)
	}
	if got, err := ToInt("\U0001D7FF"); err != nil || got != 9 {
		t.Errorf("ToInt(monospace 9) = %v, %v; want 9", got, err)
	}
}

// TestParseBigIntBaseLeadingZerosAndForeignPrefixes pins two rules of
// int(s, base) that only Python's base 0 or a prefix of another base
// shows: leading zeros are refused only when base 0 reads the text as
// decimal (int("010", 10) is 10, int("010", 0) an error), and a prefix
// counts only for its own base: int("0b1", 16) reads the hex digits
// 0, b, 1 (177) and int("0x10", 10) is an error.
func TestParseBigIntBaseLeadingZerosAndForeignPrefixes(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		s    string
		base int
		want int64
	}{
		{"010", 10, 10}, {"007", 8, 7}, {"00", 0, 0}, {"0_0", 0, 0},
		{"0b1", 16, 177}, {"0B1", 16, 177}, {"0x1f", 16, 31}, {"0o17", 0, 15},
	} {
		got, ok := ParseBigIntBase(tt.s, tt.base)
		if !ok || !got.IsInt64() || got.Int64() != tt.want {
			t.Errorf("ParseBigIntBase(%q, %d) = %v, %v; want %d", tt.s, tt.base, got, ok, tt.want)
		}
	}
	for _, tt := range []struct {
		s    string
		base int
	}{{"010", 0}, {"0x10", 10}, {"0o7", 16}, {"0b2", 2}} {
		if got, ok := ParseBigIntBase(tt.s, tt.base); ok {
			t.Errorf("ParseBigIntBase(%q, %d) = %v; want refused", tt.s, tt.base, got)
		}
	}
}

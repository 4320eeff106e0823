package pyval

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// TestToIntKeepsTheSignOfAString guarantees that int() of a signed base-10
// string keeps its sign, also past int64 (ParseBigInt).
func TestToIntKeepsTheSignOfAString(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int64{"-5": -5, " -1_000 ": -1000, "+7": 7} {
		if got, err := ToInt(in); err != nil || got != want {
			t.Errorf("ToInt(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	b, ok := ParseBigInt("-123456789012345678901234")
	if !ok || b.String() != "-123456789012345678901234" {
		t.Errorf("ParseBigInt(-123456789012345678901234) = %v, %v", b, ok)
	}
}

// TestFloatToIntAcceptsMinInt64 guarantees that int(-2.0**63) is
// -9223372036854775808, which fits an int64, as Python computes it.
func TestFloatToIntAcceptsMinInt64(t *testing.T) {
	t.Parallel()
	if got, err := FloatToInt(-9223372036854775808.0); err != nil || got != math.MinInt64 {
		t.Errorf("FloatToInt(-2**63) = %d, %v; want %d", got, err, int64(math.MinInt64))
	}
}

// TestToFloatRefusesUnderscoreAfterDot guarantees that float("1._5") is an
// error, as in Python: underscores only sit between digits.
func TestToFloatRefusesUnderscoreAfterDot(t *testing.T) {
	t.Parallel()
	if f, err := ToFloat("1._5"); err == nil {
		t.Errorf("ToFloat(\"1._5\") = %v, nil; Python raises ValueError", f)
	}
}

// TestToIndexClampsIntsPastFloatRange guarantees that an int too large even
// for a float64 (a 401-digit json.Number) clamps as an index, with its
// sign, as Python's exact int would slice ("abc"[0:10**400] == "abc").
func TestToIndexClampsIntsPastFloatRange(t *testing.T) {
	t.Parallel()
	huge := "1" + strings.Repeat("0", 400)
	if got, err := ToIndex(json.Number(huge)); err != nil || got != math.MaxInt64 {
		t.Errorf("ToIndex(10**400) = %d, %v; want MaxInt64", got, err)
	}
	if got, err := ToIndex(json.Number("-" + huge)); err != nil || got != math.MinInt64 {
		t.Errorf("ToIndex(-10**400) = %d, %v; want MinInt64", got, err)
	}
}

// TestToBigIntOfJSONNumberIsExact guarantees that int() of an int literal
// past int64 keeps every digit rather than going through a float64.
func TestToBigIntOfJSONNumberIsExact(t *testing.T) {
	t.Parallel()
	const digits = "123456789012345678901"
	b, err := ToBigInt(json.Number(digits))
	if err != nil || b.String() != digits {
		t.Errorf("ToBigInt(%s) = %v, %v; want the exact digits", digits, b, err)
	}
}

// TestIntModExactDivisionIsZero guarantees that Python's int % gives 0 when
// b divides a, whatever the signs (4 % -2 == 0, -4 % 2 == 0).
func TestIntModExactDivisionIsZero(t *testing.T) {
	t.Parallel()
	for _, c := range [][2]int64{{4, -2}, {-4, 2}, {-4, -2}} {
		if got, err := IntMod(c[0], c[1]); err != nil || got != 0 {
			t.Errorf("IntMod(%d, %d) = %d, %v; want 0", c[0], c[1], got, err)
		}
	}
}

// TestMaxInt64Uint64IsAnInt guarantees that a uint64 holding MaxInt64 is a
// Python int and prints as its digits, not as a float.
func TestMaxInt64Uint64IsAnInt(t *testing.T) {
	t.Parallel()
	v := uint64(math.MaxInt64)
	if !IsInt(v) || Str(v) != "9223372036854775807" {
		t.Errorf("uint64(MaxInt64): IsInt = %v, Str = %q; want true, 9223372036854775807", IsInt(v), Str(v))
	}
}

// TestToFloatTypeErrorNamesThePythonType guarantees Python's TypeError text
// for float() of a non-number, naming the argument's Python type.
func TestToFloatTypeErrorNamesThePythonType(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   any
		name string
	}{{[]any{}, "list"}, {nil, "NoneType"}, {map[string]any{}, "dict"}} {
		want := "float() argument must be a string or a real number, not '" + c.name + "'"
		if _, err := ToFloat(c.in); err == nil || err.Error() != want {
			t.Errorf("ToFloat(%#v) error = %v, want %q", c.in, err, want)
		}
	}
}

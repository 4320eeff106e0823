package pyval

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
)

// Python's float() of an int past the float64 range raises OverflowError
// ("int too large to convert to float"); a numeric string that large
// reads as inf, and a float literal past the range is inf too.
func TestToFloatOfIntBeyondFloatRangeFails(t *testing.T) {
	t.Parallel()
	for _, v := range []any{json.Number("1" + strings.Repeat("0", 400)), json.Number("-1" + strings.Repeat("0", 400))} {
		_, err := ToFloat(v)
		if !errors.Is(err, ErrIntTooLargeForFloat) || err.Error() != "int too large to convert to float" {
			t.Errorf("ToFloat(%s) error = %v, want Python's OverflowError text", v, err)
		}
	}
	for _, v := range []any{"1" + strings.Repeat("0", 400), json.Number("1e400")} {
		if f, err := ToFloat(v); err != nil || !math.IsInf(f, 1) {
			t.Errorf("ToFloat(%#v) = %v, %v; want +Inf", v, f, err)
		}
	}
	if f, err := ToFloat(json.Number("100000000000000000000")); err != nil || f != 1e20 {
		t.Errorf("ToFloat(10**20) = %v, %v", f, err)
	}
}

// int(float(x)) rounds an int to a float64 first, and Python keeps a
// result past int64 as an exact big int: ToIntViaFloat reports that as
// an error, IntViaFloat returns its digits as a json.Number.
func TestIntViaFloatRoundsThroughFloat64(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   any
		want int64
	}{
		{json.Number("9007199254740993"), 9007199254740992},
		{int64(-9007199254740993), -9007199254740992},
		{int64(4611686018427387905), 4611686018427387904},
		{"2.5", 2}, {true, 1}, {-2.9, -2},
	} {
		if got, err := ToIntViaFloat(tc.in); err != nil || got != tc.want {
			t.Errorf("ToIntViaFloat(%#v) = %v, %v; want %d", tc.in, got, err, tc.want)
		}
		if got, err := IntViaFloat(tc.in); err != nil || got != tc.want {
			t.Errorf("IntViaFloat(%#v) = %#v, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	for _, tc := range []struct {
		in   any
		want json.Number
	}{
		{1e20, "100000000000000000000"},
		{"1e20", "100000000000000000000"},
		{"-1e20", "-100000000000000000000"},
		{json.Number("100000000000000000001"), "100000000000000000000"},
		{int64(math.MaxInt64), "9223372036854775808"}, // float(2**63-1) == 2**63
	} {
		if got, err := IntViaFloat(tc.in); err != nil || got != tc.want {
			t.Errorf("IntViaFloat(%#v) = %#v, %v; want %s", tc.in, got, err, tc.want)
		}
		if _, err := ToIntViaFloat(tc.in); err == nil {
			t.Errorf("ToIntViaFloat(%#v): no error for a result past int64", tc.in)
		}
	}
	for _, in := range []any{math.Inf(1), "nan", json.Number("1" + strings.Repeat("0", 400)), "x", nil} {
		if got, err := IntViaFloat(in); err == nil {
			t.Errorf("IntViaFloat(%#v) = %#v, want an error", in, got)
		}
	}
}

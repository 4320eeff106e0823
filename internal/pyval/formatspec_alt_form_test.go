package pyval

import "testing"

// Expected values are what CPython 3.11 returns.

// TestFormatValueAlternateFormAddsADotOnlyWithoutFraction pins the '#'
// flag of the 'f' and '%' types: it keeps a decimal point only when the
// precision leaves no fraction digits (format(2.0, '#.0f') is '2.'); with
// fraction digits, or the default precision 6, nothing is appended
// (format(1.5, '#.2f') is '1.50', not '1.50.').
func TestFormatValueAlternateFormAddsADotOnlyWithoutFraction(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		v          any
		spec, want string
	}{
		{2.0, "#.0f", "2."},
		{0.5, "#.0%", "50.%"},
		{1.5, "#.2f", "1.50"},
		{1.0, "#f", "1.000000"},
		{0.125, "#.1%", "12.5%"},
		{2.5, "#.3F", "2.500"},
		{int64(3), "#.1f", "3.0"},
	} {
		if got, err := FormatValue(tt.v, tt.spec); err != nil || got != tt.want {
			t.Errorf("format(%v, %q) = %q, %v; want %q (CPython 3.11)", tt.v, tt.spec, got, err, tt.want)
		}
	}
}

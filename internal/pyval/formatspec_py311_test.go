package pyval

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"
)

// Format specs checked against CPython 3.11 (every want / wantErr is what
// format(value, spec) returns or raises there): zero padding that is
// grouped with the digits, the 'z' option, ints beyond int64 formatted
// from their digits, 'c' aligned as a number, int-only types refused on
// inf/nan, and the grouping/type checks of the spec parser.
func TestFormatValueMatchesPython311(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		v             any
		spec          string
		want, wantErr string
	}{
		{int64(42), "012,.2f", "0,000,042.00", ""},
		{int64(65), "05,", "0,065", ""},
		{int64(42), "04,", "0,042", ""},
		{int64(42), "03,", "042", ""},
		{int64(-42), "07,", "-00,042", ""},
		{int64(-1234), "+010_", "-0_001_234", ""},
		{int64(1234), "0=10,", "00,001,234", ""},
		{int64(1234), "0>10,", "000001,234", ""},
		{int64(1234), "^010,", "001,234000", ""},
		{int64(255), "#012_x", "0x0_0000_00ff", ""},
		{int64(255), "#012_X", "0X0_0000_00FF", ""},
		{int64(5), "#010_b", "0b000_0101", ""},
		{123.456, "015,", "000,000,123.456", ""},
		{1.0, "015,e", "0,001.000000e+00", ""},
		{1e-7, "015,", "000,000,001e-07", ""},
		{-1234.5, "012,.1f", "-0,001,234.5", ""},
		{0.5, "010,.1%", "000,050.0%", ""},
		{math.Inf(1), "010,", "0000000inf", ""},
		{-0.04, "z.1f", "0.0", ""},
		{math.Copysign(0, -1), "z", "0.0", ""},
		{math.Copysign(0, -1), ".1f", "-0.0", ""},
		{-0.04, ".1f", "-0.0", ""},
		{-0.0001, "z.1%", "0.0%", ""},
		{-0.0004, "z.1e", "-4.0e-04", ""},
		{-1e-300, "z.1g", "-1e-300", ""},
		{math.Copysign(0, -1), "z015,.1e", "0,000,000.0e+00", ""},
		{math.Inf(-1), "z", "-inf", ""},
		{-0.05, "z.1f", "-0.1", ""},
		{math.Copysign(0, -1), "+z", "+0.0", ""},
		{math.Copysign(0, -1), "z=+10", "-zzzzzz0.0", ""},
		{int64(0), "z", "", "Negative zero coercion (z) not allowed in integer format specifier"},
		{"abc", "z", "", "Negative zero coercion (z) not allowed in string format specifier"},
		{json.Number("123456789012345678901234"), ",", "123,456,789,012,345,678,901,234", ""},
		{json.Number("123456789012345678901234"), ">25", " 123456789012345678901234", ""},
		{json.Number("-123456789012345678901234"), "_", "-123_456_789_012_345_678_901_234", ""},
		{json.Number("123456789012345678901234"), "#x", "0x1a249b1f10a06c96aff2", ""},
		{json.Number("-123456789012345678901234"), "#_X", "-0X1A24_9B1F_10A0_6C96_AFF2", ""},
		{json.Number("123456789012345678901234"), "o", "32111154370412015445527762", ""},
		{json.Number("123456789012345678901234"), "_b", "1_1010_0010_0100_1001_1011_0001_1111_0001_0000_1010_0000_0110_1100_1001_0110_1010_1111_1111_0010", ""},
		{json.Number("123456789012345678901234"), "n", "123456789012345678901234", ""},
		{json.Number("123456789012345678901234"), "0=35,", "000,123,456,789,012,345,678,901,234", ""},
		{json.Number("123456789012345678901234"), "e", "1.234568e+23", ""},
		{json.Number("123456789012345678901234"), ".2f", "123456789012345685803008.00", ""},
		{json.Number("1180591620717411303424"), ".2f", "1180591620717411303424.00", ""},
		{json.Number("123456789012345678901234"), "%", "12345678901234568244756480.000000%", ""},
		{json.Number("1" + strings.Repeat("0", 400)), "e", "", "int too large to convert to float"},
		{json.Number("123456789012345678901234"), "c", "", "Python int too large to convert to C long"},
		{uint64(1 << 63), ",", "9,223,372,036,854,775,808", ""},
		{uint64(1 << 63), "#x", "0x8000000000000000", ""},
		{json.Number("123456789012345678901234"), ".3", "", "Precision not allowed in integer format specifier"},
		{int64(65), "5c", "    A", ""},
		{int64(65), "05c", "0000A", ""},
		{int64(65), "^5c", "  A  ", ""},
		{int64(65), "<5c", "A    ", ""},
		{int64(65), "c", "A", ""},
		{int64(65), "+c", "", "Sign not allowed with integer format specifier 'c'"},
		{int64(65), "#c", "", "Alternate form (#) not allowed with integer format specifier 'c'"},
		{int64(-1), "c", "", "%c arg not in range(0x110000)"},
		{int64(0x110000), "c", "", "%c arg not in range(0x110000)"},
		{int64(65), ",c", "", "Cannot specify ',' with 'c'."},
		{math.Inf(1), "d", "", "Unknown format code 'd' for object of type 'float'"},
		{math.NaN(), "x", "", "Unknown format code 'x' for object of type 'float'"},
		{math.Inf(-1), "b", "", "Unknown format code 'b' for object of type 'float'"},
		{math.Inf(1), "o", "", "Unknown format code 'o' for object of type 'float'"},
		{math.Inf(1), "X", "", "Unknown format code 'X' for object of type 'float'"},
		{math.Inf(1), "c", "", "Unknown format code 'c' for object of type 'float'"},
		{math.Inf(1), "n", "inf", ""},
		{math.NaN(), "5d", "", "Unknown format code 'd' for object of type 'float'"},
		{1.5, "d", "", "Unknown format code 'd' for object of type 'float'"},
		{1e16, "#", "1.e+16", ""},
		{1e-7, "#", "1.e-07", ""},
		{1.0, "#", "1.0", ""},
		{1e307, "%", "inf%", ""},
		{1e307, "010.1%", "000000inf%", ""},
		{-1e307, "+.2%", "-inf%", ""},
		{int64(255), ",x", "", "Cannot specify ',' with 'x'."},
		{int64(5), ",n", "", "Cannot specify ',' with 'n'."},
		{int64(5), "_n", "", "Cannot specify '_' with 'n'."},
		{5.0, ",n", "", "Cannot specify ',' with 'n'."},
		{"abc", ",", "", "Cannot specify ',' with 's'."},
		{"abc", "_x", "", "Unknown format code 'x' for object of type 'str'"},
		{int64(5), ",_", "", "Cannot specify both ',' and '_'."},
		{int64(5), "_,", "", "Cannot specify both ',' and '_'."},
		{int64(5), ",,", "", "Cannot specify ',' with ','."},
		{int64(5), "5x5", "", "Invalid format specifier '5x5' for object of type 'int'"},
		{1.0, "5x5", "", "Invalid format specifier '5x5' for object of type 'float'"},
		{true, "s", "", "Unknown format code 's' for object of type 'bool'"},
		{true, ">5", "    1", ""},
		{true, "c", "\u0001", ""},
		{int64(5), "\u00e9", "", "Unknown format code '\\xe9' for object of type 'int'"},
		{"a", " ", "", "Space not allowed in string format specifier"},
		{"a", "+", "", "Sign not allowed in string format specifier"},
		{nil, ".", "", "unsupported format string passed to NoneType.__format__"},
		{[]any{int64(1)}, ">3", "", "unsupported format string passed to list.__format__"},
		{int64(5), "1000000000000000000000", "", "Too many decimal digits in format string"},
	} {
		got, err := FormatValue(c.v, c.spec)
		switch {
		case c.wantErr != "":
			if err == nil || err.Error() != c.wantErr {
				t.Errorf("format(%v, %q) = %q, %v; want error %q", c.v, c.spec, got, err, c.wantErr)
			}
		case err != nil || got != c.want:
			t.Errorf("format(%v, %q) = %q, %v; want %q", c.v, c.spec, got, err, c.want)
		}
	}
}

// The zero padding and grouping rule of CPython's
// _PyUnicode_InsertThousandsGrouping, width by width: format(42, '0N,')
// for N = 1..9 and format(0xff, '#0N_x') for N = 1..12.
func TestFormatZeroPadGroupingWidths(t *testing.T) {
	t.Parallel()
	dec := []string{"42", "42", "042", "0,042", "0,042", "00,042", "000,042", "0,000,042", "0,000,042"}
	for i, want := range dec {
		spec := "0" + strconv.Itoa(i+1) + ","
		if got, err := FormatValue(int64(42), spec); err != nil || got != want {
			t.Errorf("format(42, %q) = %q, %v; want %q", spec, got, err, want)
		}
	}
	hex := []string{"0xff", "0xff", "0xff", "0xff", "0x0ff", "0x00ff", "0x0_00ff", "0x0_00ff", "0x00_00ff", "0x000_00ff", "0x0000_00ff", "0x0_0000_00ff"}
	for i, want := range hex {
		spec := "#0" + strconv.Itoa(i+1) + "_x"
		if got, err := FormatValue(int64(255), spec); err != nil || got != want {
			t.Errorf("format(255, %q) = %q, %v; want %q", spec, got, err, want)
		}
	}
}

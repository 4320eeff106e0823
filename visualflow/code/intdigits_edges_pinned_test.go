package code

import (
	"strings"
	"testing"
)

// The digit limit of int(s, base) counts what Python counts, at its
// edges (python3 3.11): a string longer than 4,300 characters of exactly
// 4,300 digits passes (int('1_' * 4299 + '1'), int(' ' + '1' * 4300 + ' ')),
// letters are digits in base 36 (int('z' * 4301, 36) fails with "value
// has 4301 digits"), and a 0o, 0b or 0x prefix after a sign makes base 0 a
// power of two, which has no limit (int('-0x' + 'f' * 5000, 0),
// int('0o' + '7' * 5000, 0)).
func TestIntStringDigitLimitEdges(t *testing.T) {
	for _, tc := range []struct{ expr, err string }{
		{`len(str(int("1_" * 4299 + "1")))`, ""},
		{`len(str(int(" " + "1" * 4300 + " ")))`, ""},
		{`int("1_" * 4300 + "1")`, "value has 4301 digits"},
		{`int("z" * 4301, 36)`, "value has 4301 digits"},
		{`int("-0x" + "f" * 5000, 0) < 0`, ""},
		{`int(" +0b" + "1" * 5000, 0) > 0`, ""},
		{`int("0o" + "7" * 5000, 0) > 0`, ""},
	} {
		_, _, err := Eval(t.Context(), tc.expr, map[string]any{}, Limits{})
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v, want no error (python3)", tc.expr, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: error %v, want %q (python3)", tc.expr, err, tc.err)
		}
	}
}

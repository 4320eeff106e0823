package pyval

import "testing"

// Python allows an underscore in a 0x/0o/0b literal only after the base
// prefix or between two digits, one at a time; ParseLiteral removed every
// underscore first, so it read "0x1f_", "0x__1f" and "0b1_" as numbers
// where ast.literal_eval raises SyntaxError. Expected values: CPython
// 3.11.7's ast.literal_eval.
func TestParseLiteralPrefixedIntUnderscores(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]any{
		"0x_1f":  int64(31),
		"0b_1":   int64(1),
		"0B1_0":  int64(2),
		"0X_F_F": int64(255),
		"0o_17":  int64(15),
	} {
		got, err := ParseLiteral(s)
		if err != nil || got != want {
			t.Errorf("ParseLiteral(%q) = %v, %v; Python reads %v", s, got, err, want)
		}
	}
	for _, s := range []string{"0x1f_", "0x__1f", "0x1__f", "0b1_", "0o7_", "0x_", "-0x1f_", "0x1f_ + 1j"} {
		if got, err := ParseLiteral(s); err == nil {
			t.Errorf("ParseLiteral(%q) = %v; Python raises SyntaxError", s, got)
		}
	}
}

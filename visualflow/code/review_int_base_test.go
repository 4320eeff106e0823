package code

import (
	"context"
	"strings"
	"testing"
)

// int(s, base) reads s with Python's syntax, as int(s) does: surrounding
// whitespace, underscores between digits (and after a base prefix), a
// prefix matching the base, and for base 0 the prefix choosing it.
// Starlark's own int(s, base) refused all of these but the prefix, so
// int(" 1f ", 16) or int("1_000", 10) failed a node Python runs.
func TestReviewIntWithBaseReadsPythonSyntax(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		expr string
		want int64
	}{
		{`int(" 12 ", 8)`, 10},
		{`int(" 1f ", 16)`, 31},
		{`int(" 0x1f ", 16)`, 31},
		{`int("0X1F", 16)`, 31},
		{`int("0x_1f", 16)`, 31},
		{`int("1_0", 0)`, 10},
		{`int(" 0b101 ", 0)`, 5},
		{`int("  -0x1f  ", 0)`, -31},
		{`int("+0o17", 0)`, 15},
		{`int("0_0", 0)`, 0},
		{`int("0", 0)`, 0},
		{`int("-1_0", 10)`, -10},
		{`int(" Z ", 36)`, 35},
		{`int("\t7\n", base=10)`, 7},
		{`int("٣", 16)`, 3},
		{`int("101", 2)`, 5},
	} {
		src := "def transform(_input):\n    return " + tc.expr + "\n"
		got, _, err := Run(context.Background(), src, "transform", map[string]any{}, Limits{})
		if err != nil {
			t.Errorf("%s: %v", tc.expr, err)
			continue
		}
		if got != tc.want {
			t.Errorf("%s = %#v, want %d", tc.expr, got, tc.want)
		}
	}
	for _, tc := range []struct{ expr, want string }{
		{`int("010", 0)`, "invalid literal for int() with base 0: '010'"},
		{`int("0x1f", 10)`, "invalid literal for int() with base 10: '0x1f'"},
		{`int("1__0", 10)`, "invalid literal for int() with base 10: '1__0'"},
		{`int("_1", 16)`, "invalid literal for int() with base 16: '_1'"},
		{`int("1_", 16)`, "invalid literal for int() with base 16: '1_'"},
		{`int("0x", 16)`, "invalid literal for int() with base 16: '0x'"},
		{`int("2", 2)`, "invalid literal for int() with base 2: '2'"},
		{`int("", 8)`, "invalid literal for int() with base 8: ''"},
		{`int("1", 37)`, "base must be"},
	} {
		src := "def transform(_input):\n    return " + tc.expr + "\n"
		_, _, err := Run(context.Background(), src, "transform", map[string]any{}, Limits{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want containing %q", tc.expr, err, tc.want)
		}
	}
}

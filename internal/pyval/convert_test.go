package pyval

import (
	"testing"
)

// Expected values are what CPython 3.11 returns.

// Guards the Python error message of int(str): the string is quoted as
// repr() does, so one containing a single quote uses double quotes.
func TestToIntErrorQuotesLikePythonRepr(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"a'b": `invalid literal for int() with base 10: "a'b"`,
		"ab":  `invalid literal for int() with base 10: 'ab'`,
		"2.5": `invalid literal for int() with base 10: '2.5'`,
	} {
		if _, err := ToInt(in); err == nil || err.Error() != want {
			t.Errorf("ToInt(%q) error = %v, want %s", in, err, want)
		}
	}
}

// Guards StrOrEmpty's `str(x or "")`: every falsy value, not only None,
// gives "".
func TestStrOrEmptyFalsyValuesAreEmpty(t *testing.T) {
	t.Parallel()
	for _, v := range []any{nil, false, int64(0), 0.0, []any{}, map[string]any{}, ""} {
		if got := StrOrEmpty(v); got != "" {
			t.Errorf("StrOrEmpty(%#v) = %q, want \"\"", v, got)
		}
	}
	for v, want := range map[any]string{int64(7): "7", true: "True", "s": "s", 1.5: "1.5"} {
		if got := StrOrEmpty(v); got != want {
			t.Errorf("StrOrEmpty(%#v) = %q, want %q", v, got, want)
		}
	}
}

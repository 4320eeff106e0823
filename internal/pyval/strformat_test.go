package pyval

import (
	"testing"
)

// Expected values are what CPython 3.11 returns.

// Guards the index bound of "{l[i]}" in FormatString: an index equal to
// the length is Python's IndexError, not a crash.
func TestFormatStringIndexAtLengthIsIndexError(t *testing.T) {
	t.Parallel()
	kw := map[string]any{"l": []any{"x"}, "s": "ab"}
	for tmpl, want := range map[string]string{
		"{l[1]}": "IndexError: list index out of range",
		"{s[2]}": "IndexError: string index out of range",
	} {
		if _, err := FormatString(tmpl, kw); err == nil || err.Error() != want {
			t.Errorf("FormatString(%q) error = %v, want %s", tmpl, err, want)
		}
	}
}

// str.format allows a replacement field inside a format spec only one
// level deep, as CPython does: "{a:{b:{c}}}" fails with "Max string
// recursion exceeded" whatever the values.
func TestFormatStringNestedSpecTwoLevelsDeepIsMaxRecursion(t *testing.T) {
	t.Parallel()
	kw := map[string]any{"a": int64(1), "b": "d", "c": ""}
	if got, err := FormatString("{a:{b}}", kw); err != nil || got != "1" {
		t.Errorf(`FormatString("{a:{b}}") = %q, %v; want "1"`, got, err)
	}
	got, err := FormatString("{a:{b:{c}}}", kw)
	if err == nil || err.Error() != "Max string recursion exceeded" {
		t.Errorf(`FormatString("{a:{b:{c}}}") = %q, %v; want error "Max string recursion exceeded"`, got, err)
	}
}

// Guards the recursion limit of nested format specs: three levels deep is
// refused with Python's message.
func TestFormatStringRefusesDeeplyNestedSpecs(t *testing.T) {
	t.Parallel()
	kw := map[string]any{"a": int64(1), "b": "d", "c": ""}
	got, err := FormatString("{a:{b:{c:{c}}}}", kw)
	if err == nil || err.Error() != "Max string recursion exceeded" {
		t.Errorf("FormatString = %q, %v; want error \"Max string recursion exceeded\"", got, err)
	}
}

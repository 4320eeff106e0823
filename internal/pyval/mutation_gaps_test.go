package pyval

import (
	"math"
	"strings"
	"testing"
)

// Tests added by mutation testing: each pins a behaviour promised by a doc
// comment (or by Python, which the package emulates) that no other test of
// this package checked. Expected values are what CPython 3.11 returns.

// Guards the clamp of an end index past the string's length (s[0:10] on a
// short string), which Python allows.
func TestSliceClampsEndPastLength(t *testing.T) {
	t.Parallel()
	end := func(i int64) *int64 { return &i }
	for _, tt := range []struct {
		s          string
		start, end int64
		want       string
	}{
		{"abc", 0, 4, "abc"}, {"abc", 0, 5, "abc"}, {"héllo", -3, 10, "llo"},
		{"日本", 1, math.MaxInt64, "本"}, {"abc", 4, 9, ""},
	} {
		if got := Slice(tt.s, tt.start, end(tt.end)); got != tt.want {
			t.Errorf("Slice(%q, %d, %d) = %q, want %q", tt.s, tt.start, tt.end, got, tt.want)
		}
	}
}

// Guards SplitN's maxsplit: 0 splits nothing ("a,b".split(",", 0) ==
// ["a,b"]), only a negative maxsplit means "no limit".
func TestSplitNMaxsplitZeroSplitsNothing(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		max  int
		want string
	}{
		{0, "[a,b,c]"}, {1, "[a b,c]"}, {-1, "[a b c]"}, {5, "[a b c]"},
	} {
		got := SplitN("a,b,c", ",", tt.max)
		if s := "[" + strings.Join(got, " ") + "]"; s != tt.want {
			t.Errorf("SplitN(maxsplit=%d) = %q, want %s", tt.max, got, tt.want)
		}
	}
}

// Guards Replace's count: a non-negative count limits the replacements
// ("aaa".replace("a", "b", 2) == "bba").
func TestReplaceHonoursCount(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		count int
		want  string
	}{{2, "bba"}, {0, "aaa"}, {-1, "bbb"}} {
		if got := Replace("aaa", "a", "b", tt.count); got != tt.want {
			t.Errorf("Replace(count=%d) = %q, want %q", tt.count, got, tt.want)
		}
	}
}

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

// Guards dict equality: a dict is not equal to a larger dict that contains
// all its items ({'a': 1} != {'a': 1, 'b': 2}).
func TestEqualDictsNeedSameKeys(t *testing.T) {
	t.Parallel()
	small := map[string]any{"a": int64(1)}
	big := map[string]any{"a": int64(1), "b": int64(2)}
	if Equal(small, big) || Equal(big, small) {
		t.Error("dicts with different key sets compare equal")
	}
	if !Equal(small, map[string]any{"a": 1.0}) {
		t.Error("{'a': 1} != {'a': 1.0}")
	}
}

// Guards FloorDiv on exact negative quotients: -4 // 2 == -2 (only an
// inexact quotient rounds down).
func TestFloorDivExactNegativeQuotient(t *testing.T) {
	t.Parallel()
	for _, tt := range [][3]int64{{-4, 2, -2}, {4, -2, -2}, {-5, 2, -3}, {5, -2, -3}, {-6, -3, 2}} {
		if got, err := FloorDiv(tt[0], tt[1]); err != nil || got != tt[2] {
			t.Errorf("FloorDiv(%d, %d) = %d, %v; want %d", tt[0], tt[1], got, err, tt[2])
		}
	}
}

// Guards the sign of a zero float result: Python's 0.0 % -1.0 and
// 4.0 % -2.0 are -0.0 (sign of the divisor), 0.0 // -1.0 is -0.0.
func TestFloatModAndFloorDivSignedZero(t *testing.T) {
	t.Parallel()
	negZero := func(f float64) bool { return f == 0 && math.Signbit(f) }
	posZero := func(f float64) bool { return f == 0 && !math.Signbit(f) }
	if got := FloatMod(0, -1); !negZero(got) {
		t.Errorf("0.0 %% -1.0 = %v, want -0.0", got)
	}
	if got := FloatMod(4, -2); !negZero(got) {
		t.Errorf("4.0 %% -2.0 = %v, want -0.0", got)
	}
	if got := FloatMod(-4, 2); !posZero(got) {
		t.Errorf("-4.0 %% 2.0 = %v, want 0.0", got)
	}
	if got := FloatFloorDiv(0, -1); !negZero(got) {
		t.Errorf("0.0 // -1.0 = %v, want -0.0", got)
	}
	if got := FloatFloorDiv(math.Copysign(0, -1), 1); !negZero(got) {
		t.Errorf("-0.0 // 1.0 = %v, want -0.0", got)
	}
	if got := FloatFloorDiv(0, 1); !posZero(got) {
		t.Errorf("0.0 // 1.0 = %v, want 0.0", got)
	}
}

// Guards Round with a very negative ndigits: the zero keeps the sign of
// the value (round(-5.0, -400) is -0.0).
func TestRoundHugeNegativeNdigitsKeepsSign(t *testing.T) {
	t.Parallel()
	if got := Round(-5, -400); got != 0 || !math.Signbit(got) {
		t.Errorf("round(-5.0, -400) = %v, want -0.0", got)
	}
	if got := Round(5, -400); got != 0 || math.Signbit(got) {
		t.Errorf("round(5.0, -400) = %v, want 0.0", got)
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

// Guards json.dumps' short escapes for control characters: \b and \f, and
// \u00XX for the others.
func TestDumpsControlCharacterEscapes(t *testing.T) {
	t.Parallel()
	got, err := Dumps("\b\f\x01\x1f", Spaced)
	if want := `"\b\f\u0001\u001f"`; err != nil || got != want {
		t.Errorf("Dumps = %s, %v; want %s", got, err, want)
	}
}

// Guards the default item separator when pretty-printing: "," for any
// Indent > 0 (json.dumps(..., indent=1)), so lines carry no trailing space.
func TestDumpsIndentOneUsesCommaItemSeparator(t *testing.T) {
	t.Parallel()
	got, err := Dumps([]any{int64(1), map[string]any{"a": int64(2)}}, DumpOptions{Indent: 1})
	if want := "[\n 1,\n {\n  \"a\": 2\n }\n]"; err != nil || got != want {
		t.Errorf("Dumps(indent=1) = %q, %v; want %q", got, err, want)
	}
}

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

// Guards GetDotted's array bound: an index equal to the length does not
// resolve.
func TestGetDottedIndexAtLengthDoesNotResolve(t *testing.T) {
	t.Parallel()
	root := map[string]any{"a": []any{"x", "y"}}
	if v, ok := GetDotted(root, "a.2"); ok {
		t.Errorf("GetDotted(a.2) = %v, true; want not found", v)
	}
	if v, ok := GetDotted(root, "a.1"); !ok || v != "y" {
		t.Errorf("GetDotted(a.1) = %v, %v", v, ok)
	}
}

// Guards GetIn's promise that an empty key path resolves to nothing (not
// to the root object).
func TestGetInEmptyPathIsNotFound(t *testing.T) {
	t.Parallel()
	root := map[string]any{"a": map[string]any{"b": int64(1)}}
	if v, ok := GetIn(root, nil); ok {
		t.Errorf("GetIn(nil) = %v, true; want not found", v)
	}
	if v, ok := GetIn(root, []string{"a", "b"}); !ok || v != int64(1) {
		t.Errorf("GetIn(a.b) = %v, %v", v, ok)
	}
	if _, ok := GetIn(root, []string{"a", "b", "c"}); ok {
		t.Error("GetIn through a non-object resolved")
	}
}

// Guards DeepCopy of nil containers: a copy of a nil list or map is nil
// too (json.Marshal writes null, not [] or {}).
func TestDeepCopyKeepsNilContainersNil(t *testing.T) {
	t.Parallel()
	if got := DeepCopy([]any(nil)).([]any); got != nil {
		t.Errorf("DeepCopy(nil list) = %#v, want nil", got)
	}
	if got := DeepCopy(map[string]any(nil)).(map[string]any); got != nil {
		t.Errorf("DeepCopy(nil map) = %#v, want nil", got)
	}
}

// Guards the Go integer kinds the package promises to accept: a uint64
// past MaxInt64 is a large positive number, not a wrapped negative one.
func TestLargeUint64ComparesAsPositive(t *testing.T) {
	t.Parallel()
	u := uint64(1) << 63
	if c, ok := Compare(u, int64(math.MaxInt64)); !ok || c != 1 {
		t.Errorf("Compare(2**63, 2**63-1) = %d, %v; want 1", c, ok)
	}
	if c, ok := Compare(uint(math.MaxUint), int64(0)); !ok || c != 1 {
		t.Errorf("Compare(uint max, 0) = %d, %v; want 1", c, ok)
	}
	if !Truthy(u) || !IsNumber(u) {
		t.Error("2**63 as uint64 is not a truthy number")
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

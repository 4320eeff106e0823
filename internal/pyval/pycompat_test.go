package pyval

import (
	"math"
	"testing"
)

// Python value semantics settled against CPython 3.11 (the expected values
// are what CPython returns).

func TestUpperSpecialCasing(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"ǰ": "J\u030c",            // not a single code point
		"ΐ": "\u0399\u0308\u0301", // decomposed: not U+03AA U+0301
		"ß": "SS", "ﬃ": "FFI", "ᾳ": "ΑΙ", "ŉ": "ʼN", "և": "ԵՒ", "abc": "ABC", "ǅ": "Ǆ",
	} {
		if got := Upper(in); got != want {
			t.Errorf("Upper(%q) = %+q, want %+q", in, got, want)
		}
	}
}

func TestNumbersFromUnicodeDigits(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]float64{"١٢": 12, "１２": 12, "\u2003 1٢.5 \u3000": 12.5, "-١e٢": -100} {
		if got, err := ToFloat(in); err != nil || got != want {
			t.Errorf("ToFloat(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if got, err := ToInt("１٢"); err != nil || got != 12 {
		t.Errorf("ToInt(\"１٢\") = %v, %v; want 12", got, err)
	}
	for _, in := range []string{"1²", "½", "12€"} { // digits that are not decimal, other symbols
		if _, err := ToFloat(in); err == nil {
			t.Errorf("ToFloat(%q): no error", in)
		}
	}
}

func TestFloatPowInfiniteExponent(t *testing.T) {
	t.Parallel()
	if got, err := FloatPow(0, math.Inf(-1)); err != nil || !math.IsInf(got, 1) {
		t.Errorf("0.0 ** -inf = %v, %v; want inf", got, err)
	}
	if _, err := FloatPow(0, -1); err == nil {
		t.Error("0.0 ** -1: no error")
	}
}

func TestFormatStringPython(t *testing.T) {
	t.Parallel()
	kw := map[string]any{"s": "abc", "d": map[string]any{"0": "a", "k": "v"}, "l": []any{"x"}, "e": "é😀",
		"x": 12.345, "y": 1234.5678, "z": 3.0, "h": 100.0, "q": 0.5, "n": int64(5)}
	for tmpl, want := range map[string]string{
		"{s[1]}{s[0]}": "ba", "{d[k]}": "v", "{l[0]}": "x", "{e!a}": `'\xe9\U0001f600'`,
		"{s:05}": "abc00", "{s:>05}": "00abc", "{n:<05}": "50000", "{n:05}": "00005", "{n:x<5}": "5xxxx",
		"{x:.2}": "1.2e+01", "{y:.4}": "1.235e+03", "{z:.1}": "3e+00", "{h:.3}": "1e+02",
		"{q:.1}": "0.5", "{h:.4}": "100.0", "{z:#.1}": "3.e+00",
	} {
		if got, err := FormatString(tmpl, kw); err != nil || got != want {
			t.Errorf("FormatString(%q) = %q, %v; want %q", tmpl, got, err, want)
		}
	}
	for _, tmpl := range []string{"{d[0]}", "{s[3]}", "{s[x]}", "{l[x]}", "{s:#5}", "{s:=5}"} {
		if got, err := FormatString(tmpl, kw); err == nil {
			t.Errorf("FormatString(%q) = %q, want an error", tmpl, got)
		}
	}
}

func TestVariablePaths(t *testing.T) {
	t.Parallel()
	vars := map[string]any{"user": map[string]any{"name": "bob", "": "empty"}, "user ": "spaced"}
	for path, want := range map[string]any{"user.": "empty", "user .x": nil, "user..name": nil, "user.name": "bob", "user ": "spaced"} {
		if got, _ := GetDotted(vars, path); got != want {
			t.Errorf("GetDotted(%q) = %v, want %v", path, got, want)
		}
	}
	if got := VarPath("a..b."); len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Errorf("VarPath(a..b.) = %q", got)
	}
	if got := VarPath("."); got != nil {
		t.Errorf("VarPath(.) = %q, want none", got)
	}
	m := map[string]any{"a": []any{int64(1)}}
	if err := SetIn(m, VarPath("a.b"), int64(2)); err != nil || !Equal(m, map[string]any{"a": map[string]any{"b": int64(2)}}) {
		t.Errorf("SetIn = %v, %v", Repr(m), err)
	}
	if _, ok := GetIn(map[string]any{"a": []any{int64(1)}}, []string{"a", "0"}); ok {
		t.Error("GetIn indexed an array")
	}
}

func TestParseLiteralPythonValues(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]any{
		"{'a': 1}  # note":         map[string]any{"a": int64(1)},
		"{1, 2, 1.0}":              "{1, 2}",
		"set()":                    "set()",
		"b'x'":                     "b'x'",
		`b"it's\xff"`:              `b"it's\xff"`,
		"1+2j":                     "(1+2j)",
		"-2j":                      "(-0-2j)",
		"[1.5-2.5j, 1e3j]":         []any{"(1.5-2.5j)", "1000j"},
		"{(1, 'a'): (2,)}":         map[string]any{"(1, 'a')": []any{int64(2)}},
		"{1: 'a', True: 'b'}":      map[string]any{"1": "b"},
		"{'s': {(1,), 2j}}":        map[string]any{"s": "{(1,), 2j}"},
		"[1, # one\n 2]":           []any{int64(1), int64(2)},
		"{'a', 'a'}":               "{'a'}",
		"('x', b'' b'y', 'z' 'w')": []any{"x", "b'y'", "zw"},
	} {
		got, err := ParseLiteral(in)
		if err != nil || !Equal(got, want) {
			t.Errorf("ParseLiteral(%q) = %s, %v; want %s", in, Repr(got), err, Repr(want))
		}
	}
	for _, in := range []string{"{[1]: 2}", "{[1]}", "1+2", "1j+2", "True+1j", "b'é'", "b'a' 'b'", "--1j + 1"} {
		if got, err := ParseLiteral(in); err == nil {
			t.Errorf("ParseLiteral(%q) = %s, want an error", in, Repr(got))
		}
	}
}

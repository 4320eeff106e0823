package pyval

import (
	"encoding/json"
	"math"
	"testing"
)

func TestFormatFloat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   float64
		want string
	}{
		{3, "3.0"}, {0.1, "0.1"}, {1e20, "1e+20"}, {1e-5, "1e-05"}, {1e16, "1e+16"},
		{1.5e20, "1.5e+20"}, {1e15, "1000000000000000.0"}, {0.0001, "0.0001"},
		{123456789.125, "123456789.125"}, {math.Inf(1), "inf"}, {math.Inf(-1), "-inf"},
		{math.NaN(), "nan"}, {math.Copysign(0, -1), "-0.0"}, {-2.5, "-2.5"},
		{1.7976931348623157e308, "1.7976931348623157e+308"}, {5e-324, "5e-324"},
		{0.30000000000000004, "0.30000000000000004"}, {1234567890123456.7, "1234567890123456.8"},
	}
	for _, tt := range tests {
		if got := FormatFloat(tt.in); got != tt.want {
			t.Errorf("FormatFloat(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestStr(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   any
		want string
	}{
		{nil, "None"}, {true, "True"}, {false, "False"}, {int64(-3), "-3"}, {7, "7"},
		{json.Number("5"), "5"}, {json.Number("5.0"), "5.0"}, {json.Number("1e3"), "1000.0"},
		{2.0, "2.0"}, {"héllo", "héllo"},
		{[]any{"a", int64(1)}, "['a', 1]"},
		{map[string]any{"k": true}, "{'k': True}"},
		{map[string]any{"b": nil, "a": []any{1.5, "x"}}, "{'a': [1.5, 'x'], 'b': None}"},
		{[]any{"it's"}, `["it's"]`},
		{[]any{`a'b"c`}, `['a\'b"c']`},
		{[]any{"line\nbreak\\"}, `['line\nbreak\\']`},
		{[]any{"\x01é\u00a0"}, `['\x01é\xa0']`},
		{[]any{}, "[]"}, {map[string]any{}, "{}"},
	}
	for _, tt := range tests {
		if got := Str(tt.in); got != tt.want {
			t.Errorf("Str(%#v) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := Repr("x"); got != "'x'" {
		t.Errorf("Repr(x) = %q", got)
	}
}

func TestTruthyAndCoerce(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in              any
		truthy, coerced bool
		triOK           bool
	}{
		{nil, false, false, false}, {false, false, false, true}, {true, true, true, true},
		{int64(0), false, false, true}, {0.0, false, false, true}, {json.Number("0"), false, false, true},
		{json.Number("2"), true, true, true}, {"", false, false, true}, {"false", true, false, true},
		{" Yes ", true, true, true}, {"on", true, true, true}, {"maybe", true, false, false},
		{[]any{}, false, false, false}, {[]any{nil}, true, false, false},
		{map[string]any{}, false, false, false}, {map[string]any{"a": 1}, true, false, false},
		{math.NaN(), true, true, true},
	}
	for _, tt := range tests {
		if got := Truthy(tt.in); got != tt.truthy {
			t.Errorf("Truthy(%#v) = %v", tt.in, got)
		}
		if got := CoerceBool(tt.in); got != tt.coerced {
			t.Errorf("CoerceBool(%#v) = %v", tt.in, got)
		}
		if _, ok := CoerceBoolTri(tt.in); ok != tt.triOK {
			t.Errorf("CoerceBoolTri(%#v) ok = %v", tt.in, ok)
		}
	}
}

func TestToFloatToInt(t *testing.T) {
	t.Parallel()
	floats := []struct {
		in      any
		want    float64
		wantErr bool
	}{
		{int64(2), 2, false}, {true, 1, false}, {" 2 ", 2, false}, {"1e3", 1000, false},
		{"1_000.5", 1000.5, false}, {"-.5", -0.5, false}, {"5.", 5, false}, {"inf", math.Inf(1), false},
		{"-Infinity", math.Inf(-1), false}, {"abc", 0, true}, {nil, 0, true}, {"1__0", 0, true},
		{"0x10", 0, true}, {"", 0, true}, {[]any{}, 0, true}, {json.Number("2.5"), 2.5, false},
	}
	for _, tt := range floats {
		got, err := ToFloat(tt.in)
		if (err != nil) != tt.wantErr || (err == nil && got != tt.want) {
			t.Errorf("ToFloat(%#v) = %v, %v", tt.in, got, err)
		}
	}
	if _, err := ToFloat("abc"); err == nil || err.Error() != "could not convert string to float: 'abc'" {
		t.Errorf("ToFloat error text = %v", err)
	}
	ints := []struct {
		in      any
		want    int64
		wantErr bool
	}{
		{2.9, 2, false}, {-2.9, -2, false}, {" 12 ", 12, false}, {"1_000", 1000, false}, {"2.5", 0, true},
		{true, 1, false}, {nil, 0, true}, {math.Inf(1), 0, true}, {json.Number("7"), 7, false},
	}
	for _, tt := range ints {
		got, err := ToInt(tt.in)
		if (err != nil) != tt.wantErr || (err == nil && got != tt.want) {
			t.Errorf("ToInt(%#v) = %v, %v", tt.in, got, err)
		}
	}
	if got, err := ToIntViaFloat("2.5"); err != nil || got != 2 {
		t.Errorf("ToIntViaFloat(2.5) = %v, %v", got, err)
	}
}

func TestEqualCompare(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a, b  any
		eq    bool
		cmp   int
		cmpOK bool
	}{
		{int64(1), 1.0, true, 0, true},
		{true, int64(1), true, 0, true},
		{false, 0.0, true, 0, true},
		{json.Number("1"), 1, true, 0, true},
		{"1", int64(1), false, 0, false},
		{nil, nil, true, 0, false},
		{nil, false, false, 0, false},
		{"a", "b", false, -1, true},
		{"é", "z", false, 1, true},
		{[]any{int64(1), "a"}, []any{1.0, "a"}, true, 0, true},
		{[]any{int64(1)}, []any{int64(1), int64(2)}, false, -1, true},
		{[]any{int64(1), "a"}, []any{int64(1), int64(2)}, false, 0, false},
		{map[string]any{"a": int64(1)}, map[string]any{"a": 1.0}, true, 0, false},
		{map[string]any{"a": int64(1)}, map[string]any{"b": 1.0}, false, 0, false},
		{int64(9007199254740993), float64(9007199254740992), false, 1, true},
		{math.NaN(), math.NaN(), false, 0, false},
		{"abc", int64(0), false, 0, false},
	}
	for _, tt := range tests {
		if got := Equal(tt.a, tt.b); got != tt.eq {
			t.Errorf("Equal(%#v, %#v) = %v", tt.a, tt.b, got)
		}
		c, ok := Compare(tt.a, tt.b)
		if ok != tt.cmpOK || (ok && c != tt.cmp) {
			t.Errorf("Compare(%#v, %#v) = %d, %v", tt.a, tt.b, c, ok)
		}
	}
}

func TestRoundAndMod(t *testing.T) {
	t.Parallel()
	rounds := []struct {
		v    float64
		n    int
		want float64
	}{
		{2.675, 2, 2.67}, {0.5, 0, 0}, {1.5, 0, 2}, {2.5, 0, 2}, {-2.5, 0, -2}, {-0.5, 0, 0},
		{1234.5, -2, 1200}, {1250, -2, 1200}, {1350, -2, 1400}, {9.99, 1, 10}, {0.125, 2, 0.12},
		{0.375, 2, 0.38}, {1e300, 2, 1e300}, {5.0, -1, 0}, {15.0, -1, 20}, {3.14159, 3, 3.142},
	}
	for _, tt := range rounds {
		if got := Round(tt.v, tt.n); got != tt.want {
			t.Errorf("Round(%v, %d) = %v, want %v", tt.v, tt.n, got, tt.want)
		}
	}
	if got := Round(-0.4, 0); !math.Signbit(got) || got != 0 {
		t.Errorf("Round(-0.4) = %v, want -0.0", got)
	}
	mods := []struct{ a, b, want float64 }{
		{-1, 3, 2}, {1, -3, -2}, {5.5, 2, 1.5}, {-5.5, 2, 0.5}, {6, 3, 0}, {-1, math.Inf(1), math.Inf(1)},
	}
	for _, tt := range mods {
		if got := FloatMod(tt.a, tt.b); got != tt.want {
			t.Errorf("FloatMod(%v, %v) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
	if got := FloatMod(-6, 3); !(got == 0 && !math.Signbit(got)) {
		t.Errorf("FloatMod(-6, 3) = %v", got)
	}
	if q, _ := FloorDiv(-7, 2); q != -4 {
		t.Errorf("FloorDiv(-7,2) = %d", q)
	}
	if m, _ := IntMod(-7, 2); m != 1 {
		t.Errorf("IntMod(-7,2) = %d", m)
	}
	if _, err := IntMod(1, 0); err == nil {
		t.Error("IntMod by zero: no error")
	}
	if got := FloatFloorDiv(-7, 2); got != -4 {
		t.Errorf("FloatFloorDiv(-7,2) = %v", got)
	}
	if _, err := FloatPow(0, -1); err == nil {
		t.Error("FloatPow(0,-1): no error")
	}
	if _, err := FloatPow(-8, 0.5); err == nil {
		t.Error("FloatPow(-8,0.5): no error")
	}
	if got, err := FloatPow(-2, 3); err != nil || got != -8 {
		t.Errorf("FloatPow(-2,3) = %v, %v", got, err)
	}
}

func TestStrings(t *testing.T) {
	t.Parallel()
	end := func(i int64) *int64 { return &i }
	slices := []struct {
		s     string
		start int64
		end   *int64
		want  string
	}{
		{"héllo wörld", 1, end(4), "éll"}, {"héllo", -3, nil, "llo"}, {"abc", 5, nil, ""},
		{"abc", -10, end(2), "ab"}, {"日本語テキスト", 2, end(-1), "語テキス"}, {"abc", 2, end(1), ""},
	}
	for _, tt := range slices {
		if got := Slice(tt.s, tt.start, tt.end); got != tt.want {
			t.Errorf("Slice(%q, %d) = %q, want %q", tt.s, tt.start, got, tt.want)
		}
	}
	if Len("héllo") != 5 {
		t.Error("Len")
	}
	if got := Upper("straße"); got != "STRASSE" {
		t.Errorf("Upper = %q", got)
	}
	if got := Strip("\u00a0 x \u2003\n"); got != "x" {
		t.Errorf("Strip = %q", got)
	}
	if got := DecodeEscapes(`a\nb\tc`); got != "a\nb\tc" {
		t.Errorf("DecodeEscapes = %q", got)
	}
}

func TestPaths(t *testing.T) {
	t.Parallel()
	root := map[string]any{"a": map[string]any{"b": []any{map[string]any{"c": int64(5)}, "x"}}, "n": nil}
	getPath := []struct {
		path string
		want any
		ok   bool
	}{
		{"a.b[0].c", int64(5), true}, {"a.b.0.c", int64(5), true}, {"a.b[1]", "x", true},
		{"a.b[2]", nil, false}, {"a.zz", nil, false}, {"", nil, false}, {"n", nil, true},
		{" a . b [1] ", "x", true},
	}
	for _, tt := range getPath {
		got, ok := GetPath(root, tt.path)
		if ok != tt.ok || !Equal(got, tt.want) {
			t.Errorf("GetPath(%q) = %v, %v", tt.path, got, ok)
		}
	}
	if got, ok := GetDotted(root, "a.b.0.c"); !ok || got != int64(5) {
		t.Errorf("GetDotted = %v, %v", got, ok)
	}
	if _, ok := GetDotted(root, "a.b[0]"); ok {
		t.Error("GetDotted must not accept brackets")
	}
	m := map[string]any{"x": "scalar"}
	if err := SetDotted(m, "x.y.z", int64(1)); err != nil {
		t.Fatal(err)
	}
	if got, _ := GetDotted(m, "x.y.z"); got != int64(1) {
		t.Errorf("SetDotted result %v", m)
	}
	if err := SetDotted(m, " ", 1); err == nil {
		t.Error("SetDotted empty path: no error")
	}
}

func TestDeepCopyNormalize(t *testing.T) {
	t.Parallel()
	src := map[string]any{"a": []any{map[string]any{"b": json.Number("1")}}}
	cp := DeepCopy(src).(map[string]any)
	cp["a"].([]any)[0].(map[string]any)["b"] = "changed"
	if src["a"].([]any)[0].(map[string]any)["b"] != json.Number("1") {
		t.Error("DeepCopy shares nested map")
	}
	n := Normalize(src).(map[string]any)
	if v := n["a"].([]any)[0].(map[string]any)["b"]; v != int64(1) {
		t.Errorf("Normalize int = %#v", v)
	}
	if v := Normalize(json.Number("1.0")); v != 1.0 {
		t.Errorf("Normalize float = %#v", v)
	}
	if v := Normalize(3); v != int64(3) {
		t.Errorf("Normalize int kind = %#v", v)
	}
}

// Lower against CPython 3.11's str.lower(): a capital sigma ending a word
// (Final_Sigma, case-ignorable characters skipped) becomes ς. Lower used
// to give σ everywhere, so a search for "οδος" missed "ΟΔΟΣ".
func TestLowerMatchesPython(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"ΟΔΟΣ":      "οδος",
		"ΟΔΟΣ ΟΔΟΣ": "οδος οδος",
		"Σ":         "σ",
		"ΑΣ":        "ας",
		"ΑΣΑ":       "ασα",
		"ΑΣ.":       "ας.",
		"Α\u0301Σ":  "α\u0301ς",
		"ΑΣ\u0301":  "ας\u0301",
		"ΑΣ\u0301Α": "ασ\u0301α",
		"ΑΣ'Α":      "ασ'α",
		"1Σ":        "1σ",
		"ΑΣ1":       "ας1",
		"İSTANBUL":  "i\u0307stanbul",
		"ΑΣ-Β":      "ας-β",
		".Σ.":       ".σ.",
		"AΣ\u00adb": "aσ\u00adb",
	} {
		if got := Lower(in); got != want {
			t.Errorf("Lower(%q) = %q, want %q (Python)", in, got, want)
		}
	}
}

// Integers beyond int64 keep their digits, as Python's ints do: LoadsJSON
// read them as floats, so parse_json then stringify_json turned
// 12345678901234567890 into 1.2345678901234567e+19, and str() of such a
// number read from a store (json.Number) printed the float.
func TestBigIntegersKeepTheirDigits(t *testing.T) {
	t.Parallel()
	for _, lit := range []string{"9223372036854775808", "-9223372036854775809", "123456789012345678901234567890"} {
		v, err := LoadsJSON(`{"id": ` + lit + `}`)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := Dumps(v, Compact); got != `{"id":`+lit+`}` {
			t.Errorf("Dumps(LoadsJSON(%s)) = %s", lit, got)
		}
		n := json.Number(lit)
		if got := Str(n); got != lit {
			t.Errorf("Str(%s) = %s", lit, got)
		}
		if got := Repr([]any{n}); got != "["+lit+"]" {
			t.Errorf("Repr([%s]) = %s", lit, got)
		}
		if got := TypeName(n); got != "int" {
			t.Errorf("TypeName(%s) = %s, want int", lit, got)
		}
		if got := Normalize(n); got != n {
			t.Errorf("Normalize(%s) = %#v, want the json.Number kept", lit, got)
		}
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

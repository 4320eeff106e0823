package pyjson

import (
	"reflect"
	"strings"
	"testing"
)

// Tests added by a second round of mutation testing (area "durable"): each
// guards a promise of the package doc or a doc comment (Python's json
// module, byte for byte) that no test checked.

// Python's json.dumps writes \b and \f with their short escapes (its
// ESCAPE_DCT), other control characters as \u00XX, in every style: a
// record holding them hashes as Python hashes it only with the same
// spelling.
func TestControlCharactersUsePythonsShortEscapes(t *testing.T) {
	t.Parallel()
	for _, st := range []Style{Line, Canonical, CanonicalASCII} {
		b, err := Marshal("a\b\f\x1f", st)
		if err != nil {
			t.Fatal(err)
		}
		if want := `"a\b\f\u001f"`; string(b) != want {
			t.Errorf("style %+v: Marshal(\"a\\b\\f\\x1f\") = %s; want %s (json.dumps)", st, b, want)
		}
	}
}

// repr(float) pads a one-digit exponent to two digits whatever its value:
// 1e-09, not 1e-9 (canonical text, hash chain).
func TestFormatFloatPadsEverySingleDigitExponent(t *testing.T) {
	t.Parallel()
	for f, want := range map[float64]string{
		1e-9: "1e-09", 2.5e-9: "2.5e-09", 1e-6: "1e-06", 1e-10: "1e-10", 1e+300: "1e+300",
	} {
		if got := FormatFloat(f); got != want {
			t.Errorf("FormatFloat(%v) = %q; want %q (Python repr)", f, got, want)
		}
	}
}

// A nil pointer is written as null, as encoding/json (which the package
// doc defers to for other Go values) writes it, not as an object.
func TestNilPointerIsNull(t *testing.T) {
	t.Parallel()
	type rec struct{ A int }
	for _, v := range []any{(*int)(nil), (*rec)(nil), (*map[string]any)(nil)} {
		b, err := Marshal(map[string]any{"p": v}, Line)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != `{"p": null}` {
			t.Errorf("Marshal of a nil %T = %s; want {\"p\": null}", v, b)
		}
	}
}

// A lone surrogate becomes U+FFFD without eating what follows: when the
// escape after a high surrogate does not complete a pair, that escape is
// still read (Python reads "\ud800\u0041" as '\ud800A').
func TestLoneSurrogateKeepsTheNextEscape(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`"\ud800\u0041"`:  "\uFFFDA",
		`"x\ud800\u00e9"`: "x\uFFFDé",
		`"\ud800\ud800"`:  "\uFFFD\uFFFD",
	} {
		v, err := Decode([]byte(in))
		if err != nil {
			t.Fatalf("Decode(%s): %v", in, err)
		}
		if v != want {
			t.Errorf("Decode(%s) = %q; want %q", in, v, want)
		}
	}
}

// Control characters are refused inside a string whether or not it holds
// escapes (json.loads in strict mode: "Invalid control character").
func TestControlCharacterRefusedAfterAnEscape(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"\"\\n\x1f\"", "\"\\t\x00\"", "\"\x1f\""} {
		if v, err := Decode([]byte(in)); err == nil {
			t.Errorf("Decode(%q) = %q; want a control character error", in, v)
		}
	}
}

// DecodeObjectFunc parses one JSON object: data after it is an error, as
// for Decode. A JSONL line two writers concatenated must fail here, so
// that its reader recovers both records (DecodeStream) instead of keeping
// the first and losing the second.
func TestDecodeObjectFuncRefusesTrailingData(t *testing.T) {
	t.Parallel()
	for _, in := range []string{`{"a": 1}{"a": 2}`, `{"a": 1} x`, `{} 5`} {
		err := DecodeObjectFunc([]byte(in), func(string, any) error { return nil })
		if err == nil || !strings.Contains(err.Error(), "unexpected data after the JSON value") {
			t.Errorf("DecodeObjectFunc(%s) = %v; want an error about data after the value", in, err)
		}
		err = DecodeObjectFuncString(in, func(string, any) error { return nil })
		if err == nil {
			t.Errorf("DecodeObjectFuncString(%s) succeeded; want an error", in)
		}
	}
	if err := DecodeObjectFunc([]byte(" {\"a\": 1} \n"), func(string, any) error { return nil }); err != nil {
		t.Errorf("surrounding whitespace refused: %v", err)
	}
}

// Clone returns a deep copy: equal to its source, empty arrays included
// (an empty list must not come back as a nil slice, which IsNormalized
// refuses and reflect.DeepEqual tells apart).
func TestCloneKeepsEmptyArrays(t *testing.T) {
	t.Parallel()
	v := map[string]any{"a": []any{}, "b": []any{[]any{}, map[string]any{"c": []any{}}}}
	c := Clone(v)
	if !reflect.DeepEqual(c, v) {
		t.Errorf("Clone(%#v) = %#v; want an equal copy", v, c)
	}
	if !IsNormalized(c) {
		t.Errorf("Clone of a normalised value is not normalised: %#v", c)
	}
	if a, ok := Clone([]any{}).([]any); !ok || a == nil {
		t.Errorf("Clone([]any{}) = %#v; want an empty non-nil array", a)
	}
}

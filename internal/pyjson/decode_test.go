package pyjson

import (
	"encoding/json"
	"strings"
	"testing"
)

// Small integers decode to the same json.Number as any other literal,
// from a table (no allocation per number); everything else, leading
// zeros included, takes the usual path.
func TestDecode_SmallNumbers(t *testing.T) { // not parallel: it counts allocations
	for _, lit := range []string{"0", "7", "42", "999", "1000", "-1", "-0", "1.5", "1e3", "12345"} {
		v, err := Decode([]byte(lit))
		if err != nil || v != json.Number(lit) {
			t.Errorf("Decode(%s) = %#v, %v; want json.Number(%q)", lit, v, err, lit)
		}
	}
	for _, bad := range []string{"01", "00", "007"} {
		if v, err := Decode([]byte(bad)); err == nil {
			t.Errorf("Decode(%s) = %#v; want an error (leading zero)", bad, v)
		}
	}
	small := testing.AllocsPerRun(100, func() { _, _ = Decode([]byte(`[0, 1, 2, 3, 4, 5, 6, 7, 80, 999]`)) })
	large := testing.AllocsPerRun(100, func() { _, _ = Decode([]byte(`[1000, 1001, 1002, 1003, 1004, 1005, 1006, 1007, 1080, 1999]`)) })
	if small+10 > large {
		t.Errorf("decoding ten small integers took %.0f allocations, ten large ones %.0f; want 10 fewer", small, large)
	}
}

// DecodeStream returns the values read before invalid data and the error,
// so a caller recovering a JSONL line does not take garbage for its end.
func TestDecodeStreamReportsInvalidData(t *testing.T) {
	t.Parallel()
	out, err := DecodeStream([]byte(`{"a": 1}{"b": 2} {"c": `))
	if err == nil {
		t.Fatalf("DecodeStream of a truncated value = %v, nil; want an error", out)
	}
	if len(out) != 2 {
		t.Errorf("DecodeStream kept %d values before the error; want 2", len(out))
	}
	out, err = DecodeStream([]byte(`{"a": 1} {"b": 2}`))
	if err != nil || len(out) != 2 {
		t.Errorf("DecodeStream of two objects = %v, %v", out, err)
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

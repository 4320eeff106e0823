package pyjson

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// A syntax error names the offset CPython's json.loads reports for the
// same text (JSONDecodeError.pos, CPython 3.11), where the two agree on
// the offending token: an invalid number is reported at its first
// character, not past what the scanner took for it, so "[1, -]" points
// at the "-" as Python's "Expecting value: ... (char 4)" does.
func TestSyntaxErrorOffsetIsCPythons(t *testing.T) {
	t.Parallel()
	for in, pos := range map[string]int{ // json.loads(in) -> JSONDecodeError.pos
		"[1, -]":          4,
		"[1 2]":           3,
		`{"a" 1}`:         5,
		`{"a":1 "b":2}`:   7,
		"[tru]":           1,
		"[1,]":            3,
		`{"a":1,}`:        7,
		"  x":             2,
		"{1:2}":           1,
		"[\"a\x01\"]":     3,
		"[1] 2":           4,
		"[NaN, Nan]":      6,
		"[0, -, 1]":       4,
		`{"k": [7, -x]}`:  10,
		"[\"ok\", -\"\"]": 7,
	} {
		_, err := Decode([]byte(in))
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("Decode(%q) = %v; want a *SyntaxError", in, err)
			continue
		}
		if se.Offset != pos {
			t.Errorf("Decode(%q): offset %d (%s); CPython's json.loads reports char %d", in, se.Offset, se.Msg, pos)
		}
	}
}

// A \u escape cut short at the end of the input is an error, not an
// index past the data: json.loads('"\\u123') raises "Invalid \uXXXX
// escape" and json.loads('"\\ud800\\') "Unterminated string" (CPython
// 3.11). A truncated JSONL line or artifact must fail as invalid JSON,
// not panic its reader.
func TestTruncatedUnicodeEscapeIsAnError(t *testing.T) {
	t.Parallel()
	for _, in := range []string{`"\u123`, `"\u12`, `"\ud800\`, `"\ud800\u12`, `"\ud800\u123`, `["\u004`} {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("Decode(%q) panicked: %v", in, r)
				}
			}()
			// No spare capacity past the text: a read beyond it panics
			// rather than finding what a larger buffer holds there.
			data := []byte(in)
			data = data[:len(data):len(data)]
			var se *SyntaxError
			if v, err := Decode(data); !errors.As(err, &se) {
				t.Errorf("Decode(%q) = %q, %v; want a syntax error (CPython raises JSONDecodeError)", in, v, err)
			}
		}()
	}
}

// A number whose exponent has no digits is not JSON: json.loads("1e")
// raises "Extra data", json.loads("[1E+]") "Expecting ',' delimiter"
// (CPython 3.11). Taken as a json.Number it would be written back as is,
// a document neither Python nor Decode reads; the encoder refuses such a
// literal from a Go caller too.
func TestExponentWithoutDigitsIsRefused(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"1e", "[1E+]", "-1e-", "[1.5e]", `{"n": 2e+}`} {
		if v, err := Decode([]byte(in)); err == nil {
			t.Errorf("Decode(%s) = %#v; want an error, as json.loads raises", in, v)
		}
	}
	for _, lit := range []string{"1e", "1E+", "-1e-"} {
		if b, err := Marshal(map[string]any{"n": json.Number(lit)}, Line); err == nil {
			t.Errorf("Marshal of json.Number(%q) = %s; want refused as an invalid literal", lit, b)
		}
	}
}

// DecodeObjectFunc (ledger records, run states) checks a document as
// Decode does: members separated by commas, the same nesting limit (its
// members are one level down), and an empty input reported as such.
func TestDecodeObjectFuncChecksLikeDecode(t *testing.T) {
	t.Parallel()
	ignore := func(string, any) error { return nil }
	for _, in := range []string{`{"a": 1 "b": 2}`, `{"a": 1 x}`} {
		if err := DecodeObjectFunc([]byte(in), ignore); err == nil || !strings.Contains(err.Error(), "expected ',' or '}'") {
			t.Errorf("DecodeObjectFunc(%s) = %v; want a missing-comma error (json.loads: \"Expecting ',' delimiter\")", in, err)
		}
		if err := DecodeObjectFuncString(in, ignore); err == nil {
			t.Errorf("DecodeObjectFuncString(%s) succeeded; want a missing-comma error", in)
		}
	}
	for _, in := range []string{"", " \n"} {
		if err := DecodeObjectFunc([]byte(in), ignore); err == nil || !strings.Contains(err.Error(), "unexpected end of input") {
			t.Errorf("DecodeObjectFunc(%q) = %v; want unexpected end of input", in, err)
		}
	}
	// The member's value at the decoder's limit is read, one level more
	// is refused: the same documents Decode reads and refuses.
	member := func(levels int) string {
		return `{"k": ` + strings.Repeat("[", levels) + "1" + strings.Repeat("]", levels) + "}"
	}
	atLimit, past := member(maxDecodeDepth-1), member(maxDecodeDepth)
	if _, err := Decode([]byte(atLimit)); err != nil {
		t.Fatalf("Decode at the limit: %v", err)
	}
	if err := DecodeObjectFunc([]byte(atLimit), ignore); err != nil {
		t.Errorf("DecodeObjectFunc at the limit: %v; Decode reads it", err)
	}
	if _, err := Decode([]byte(past)); err == nil {
		t.Fatal("Decode one level past the limit succeeded")
	}
	if err := DecodeObjectFunc([]byte(past), ignore); err == nil || !strings.Contains(err.Error(), "nesting too deep") {
		t.Errorf("DecodeObjectFunc one level past the limit = %v; want nesting too deep, as Decode", err)
	}
}

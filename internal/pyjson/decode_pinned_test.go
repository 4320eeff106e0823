package pyjson

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestDecodeObjectRefusesOtherKinds guarantees that DecodeObject of a JSON
// value that is not an object is an error naming the kind found.
func TestDecodeObjectRefusesOtherKinds(t *testing.T) {
	t.Parallel()
	for in, kind := range map[string]string{"true": "boolean", "[]": "array", "1": "number", "null": "null"} {
		m, err := DecodeObject([]byte(in))
		if err == nil || !strings.Contains(err.Error(), kind) {
			t.Errorf("DecodeObject(%s) = %v, %v; want an error naming %s", in, m, err, kind)
		}
	}
}

// TestDecodeRepairsInvalidUTF8WithoutEscapes guarantees that a decoded
// string is valid UTF-8 (bytes that are not are U+FFFD, as the encoder
// writes them) whether or not the string holds an escape.
func TestDecodeRepairsInvalidUTF8WithoutEscapes(t *testing.T) {
	t.Parallel()
	for _, doc := range []string{"\"a\xffb\"", "\"a\xffb\\n\""} {
		v, err := Decode([]byte(doc))
		s, _ := v.(string)
		if err != nil || !utf8.ValidString(s) || !strings.HasPrefix(s, "a\uFFFDb") {
			t.Errorf("Decode(%q) = %q, %v; want valid UTF-8 starting a\\uFFFDb", doc, s, err)
		}
	}
}

// TestNilTypedMapEncodesAsInAStruct guarantees that a nil map with string
// keys of a type other than map[string]any is written as encoding/json
// writes the same value as a struct field (null), so a value does not
// change form between standing alone and sitting in a struct.
func TestNilTypedMapEncodesAsInAStruct(t *testing.T) {
	t.Parallel()
	var m map[string]int
	alone, err := Marshal(m, Canonical)
	if err != nil {
		t.Fatal(err)
	}
	inStruct, err := Marshal(struct{ M map[string]int }{}, Canonical)
	if err != nil {
		t.Fatal(err)
	}
	var field map[string]json.RawMessage
	if err := json.Unmarshal(inStruct, &field); err != nil {
		t.Fatal(err)
	}
	if string(alone) != string(field["M"]) {
		t.Errorf("nil map[string]int alone = %s, as a struct field = %s; want the same", alone, field["M"])
	}
}

// TestIndentOnePrettyPrints guarantees that Indent 1 pretty-prints like
// Python's json.dumps(indent=1): a newline and one space per level.
func TestIndentOnePrettyPrints(t *testing.T) {
	t.Parallel()
	b, err := Marshal(map[string]any{"a": []any{json.Number("1")}}, Style{Indent: 1})
	if want := "{\n \"a\": [\n  1\n ]\n}"; err != nil || string(b) != want {
		t.Errorf("Marshal indent=1 = %q, %v; want %q", b, err, want)
	}
}

// KindOf names every Go number kind "number": a field error over a value
// a Go caller built (an int, a uint64) reads like one over a decoded
// json.Number.
func TestKindOfNamesGoNumbersNumber(t *testing.T) {
	t.Parallel()
	for _, v := range []any{json.Number("1"), 1.5, float32(1), 1, int64(1), int32(1), uint(1), uint64(1)} {
		if got := KindOf(v); got != "number" {
			t.Errorf("KindOf(%T) = %q; want number", v, got)
		}
	}
}

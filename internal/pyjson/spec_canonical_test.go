package pyjson_test

import (
	"encoding/json"
	"testing"

	"github.com/abstractframework/abstractgateway/internal/pyjson"
)

// Spec §8.4: canonical JSON reproduces Python's json.dumps(sort_keys=True,
// separators=(",", ":")) byte for byte: keys sorted by code point, short
// escapes for \" \\ \n \r \t \b \f, other controls as lower-case \u00XX,
// "/" and U+007F not escaped, < > & and U+2028/U+2029 raw, floats in repr
// form, true/false/null. The expected text is CPython 3.11's
// (ensure_ascii=False, as the hash chain writes it), fixed here so that it
// is checked without python3 (the differential tests skip then).
func TestSpecCanonicalMatchesPythonDumps(t *testing.T) {
	v := map[string]any{
		"b": json.Number("1"),
		"a": map[string]any{"\U0001F600": 1, "\uffff": 2, "Z": 3, "é": 4},
		"s": "<&> \u2028\u2029 / \x7f \"\\\n\r\t\b\f\x00",
		"f": []any{1.0, 0.5, 1e-05, 1e16, 1.5e20, 123.0, 1e-4},
		"t": true,
		"n": nil,
	}
	got, err := pyjson.Marshal(v, pyjson.Canonical)
	if err != nil {
		t.Fatal(err)
	}
	want := "{\"a\":{\"Z\":3,\"é\":4,\"\uffff\":2,\"\U0001F600\":1},\"b\":1," +
		"\"f\":[1.0,0.5,1e-05,1e+16,1.5e+20,123.0,0.0001],\"n\":null," +
		"\"s\":\"<&> \u2028\u2029 / \x7f \\\"\\\\\\n\\r\\t\\b\\f\\u0000\",\"t\":true}"
	if string(got) != want {
		t.Errorf("canonical\n got %q\nwant %q", got, want)
	}
}

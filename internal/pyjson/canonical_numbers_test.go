package pyjson

import (
	"encoding/json"
	"testing"
)

// The canonical encoder wrote a json.Number's literal verbatim,
// but Python re-encodes the number it parsed (json.loads then repr), so a
// literal not already in repr form hashes differently. Expected outputs are
// json.dumps(json.loads(lit), sort_keys=True, separators=(",", ":"),
// ensure_ascii=False) from CPython 3.11.
func TestNumberLiteralsCanonicalLikePython(t *testing.T) {
	for lit, want := range map[string]string{
		"1e-7":                "1e-07",
		"1E5":                 "100000.0",
		"1e5":                 "100000.0",
		"-0":                  "0",
		"1.50":                "1.5",
		"1e400":               "Infinity",
		"-1e400":              "-Infinity",
		"1e-400":              "0.0",
		"0.1e1":               "1.0",
		"1E+16":               "1e+16",
		"1e16":                "1e+16",
		"1.0E+2":              "100.0",
		"-0e0":                "-0.0",
		"5E-324":              "5e-324",
		"10000000000000000.0": "1e+16",
	} {
		got, err := Marshal(json.Number(lit), Canonical)
		if err != nil || string(got) != want {
			t.Errorf("json.Number(%q): got %s (err %v), Python writes %s", lit, got, err, want)
		}
	}
}

// A Go-typed float container goes through encoding/json, which
// writes 1e-7 as "1e-7"; the literal is kept, Python writes 1e-07.
func TestTypedFloatCanonicalLikePython(t *testing.T) {
	got, err := Marshal(map[string]float64{"p": 1e-7}, Canonical)
	if want := `{"p":1e-07}`; err != nil || string(got) != want {
		t.Errorf("got %s (err %v), Python writes %s", got, err, want)
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

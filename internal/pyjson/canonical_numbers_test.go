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

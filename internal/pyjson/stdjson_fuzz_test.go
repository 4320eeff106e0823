package pyjson_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/internal/pyjson"
)

// fzSameNumber reports whether two number literals denote the same value:
// equal integers, or equal float64 values (Python reads a literal with a
// fraction or exponent as a float, and re-encodes it in repr form).
func fzSameNumber(a, b string) bool {
	if a == b {
		return true
	}
	isInt := func(s string) bool {
		return !strings.ContainsAny(s, ".eE") && !strings.Contains(s, "Infinity") && s != "NaN"
	}
	if isInt(a) && isInt(b) {
		x, ok1 := new(big.Int).SetString(a, 10)
		y, ok2 := new(big.Int).SetString(b, 10)
		return ok1 && ok2 && x.Cmp(y) == 0
	}
	f := func(s string) float64 {
		switch s {
		case "Infinity":
			return math.Inf(1)
		case "-Infinity":
			return math.Inf(-1)
		}
		v, _ := strconv.ParseFloat(s, 64) // ±Inf on overflow, as Python reads it
		return v
	}
	x, y := f(a), f(b)
	if isInt(a) != isInt(b) {
		return false // an int and a float stay apart (1 vs 1.0)
	}
	return x == y && math.Signbit(x) == math.Signbit(y)
}

// fzEqual compares two generic JSON trees; numbers are json.Number
// literals compared with exact (same text) or by value.
func fzEqual(a, b any, exact bool, path string) error {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return fmt.Errorf("%s: %T(%d) vs %T", path, a, len(x), b)
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok {
				return fmt.Errorf("%s: key %q missing", path, k)
			}
			if err := fzEqual(v, w, exact, path+"."+strconv.Quote(k)); err != nil {
				return err
			}
		}
		return nil
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return fmt.Errorf("%s: %T(%d) vs %T", path, a, len(x), b)
		}
		for i := range x {
			if err := fzEqual(x[i], y[i], exact, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		return nil
	case json.Number:
		y, ok := b.(json.Number)
		if !ok || (exact && x != y) || (!exact && !fzSameNumber(string(x), string(y))) {
			return fmt.Errorf("%s: number %v vs %#v", path, x, b)
		}
		return nil
	default:
		if a != b {
			return fmt.Errorf("%s: %#v vs %#v", path, a, b)
		}
		return nil
	}
}

func fzStdDecode(data []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if len(bytes.TrimLeft(data[d.InputOffset():], " \t\r\n")) != 0 {
		return nil, fmt.Errorf("trailing data")
	}
	return v, nil
}

// FuzzDecodeAgreesWithEncodingJSON: for any text encoding/json accepts,
// Decode accepts it too and reads the same tree (strings byte for byte,
// invalid UTF-8 and lone surrogates as U+FFFD as encoding/json does them,
// number literals as written, the last of repeated keys); Decode accepts
// nothing else than the Python extensions (NaN, Infinity, -Infinity) and
// rejects with an error giving an offset within the input. The Line and
// Canonical encodings of what Decode read are JSON that encoding/json reads
// back to an equal tree (numbers equal by value), unless they hold the
// Python-only literals.
func FuzzDecodeAgreesWithEncodingJSON(f *testing.F) {
	for _, s := range []string{
		`{"a": [1, 2.5, "x\u00e9"], "b": null}`, `{"a":1,"a":2}`, `"\ud800\u0041\udc00\ud83d\ude00"`,
		"\"\xff\xfe bad utf8\"", `[1e400, -0, 0.0, 1E+2, 12345678901234567890123]`, `[NaN, Infinity, -Infinity]`,
		`{"<&>": "\u2028\u2029\u007f/"}`, " \t\n\r[]\r\n", `[1,]`, `{"a" 1}`, `01`, `-`, `"\x"`, "\"a\x00\"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		want, stdErr := fzStdDecode(data)
		got, err := pyjson.Decode(data)
		if stdErr == nil && err != nil {
			t.Fatalf("Decode refuses what encoding/json reads: %v\n%q", err, data)
		}
		if err != nil {
			var se *pyjson.SyntaxError
			if !errors.As(err, &se) || se.Offset < 0 || se.Offset > len(data) {
				t.Fatalf("error %v (%T) gives no offset within the %d-byte input", err, err, len(data))
			}
			return
		}
		if stdErr != nil {
			if !bytes.Contains(data, []byte("NaN")) && !bytes.Contains(data, []byte("Infinity")) {
				t.Fatalf("Decode reads what encoding/json refuses (%v): %q", stdErr, data)
			}
			return
		}
		if err := fzEqual(want, got, true, "$"); err != nil {
			t.Fatalf("Decode and encoding/json read differently: %v\n%q", err, data)
		}
		for _, st := range []pyjson.Style{pyjson.Line, pyjson.Canonical, pyjson.CanonicalASCII} {
			b, err := pyjson.Marshal(got, st)
			if err != nil {
				return // e.g. an integer of more digits than Python reads
			}
			back, err := fzStdDecode(b)
			if err != nil {
				if bytes.Contains(b, []byte("Infinity")) || bytes.Contains(b, []byte("NaN")) {
					continue
				}
				t.Fatalf("encoding of a decoded value is not JSON: %v\n%s", err, b)
			}
			if err := fzEqual(got, back, false, "$"); err != nil {
				t.Fatalf("encoding does not read back equal: %v\n in %q\nout %s", err, data, b)
			}
		}
	})
}

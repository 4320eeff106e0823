package pyjson_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/internal/pyjson"
)

// Differential of Go-built values (not decoded ones): the value is sent to
// python3 in a tagged form that keeps float vs int vs str apart, Python
// rebuilds it and json.dumps it under the options a style stands for.
const encodeDiffScript = `
import base64, json, struct, sys

def build(t):
    k = t[0]
    if k == "n": return None
    if k == "b": return t[1]
    if k == "i": return int(t[1])
    if k == "f": return struct.unpack("<d", bytes.fromhex(t[1]))[0]
    if k == "s": return base64.b64decode(t[1]).decode("utf-8")
    if k == "l": return [build(x) for x in t[1]]
    if k == "d": return {base64.b64decode(kk).decode("utf-8"): build(v) for kk, v in t[1]}
    raise ValueError(k)

out = []
for tagged, opts in json.loads(sys.stdin.read()):
    v = build(tagged)
    kw = {}
    if opts.get("sort_keys"): kw["sort_keys"] = True
    if not opts.get("ascii"): kw["ensure_ascii"] = False
    if opts.get("indent"): kw["indent"] = opts["indent"]
    if opts.get("compact"): kw["separators"] = (",", ":")
    try:
        s = json.dumps(v, **kw)
        out.append(base64.b64encode(s.encode("utf-8")).decode("ascii"))
    except Exception as e:
        out.append("ERR " + type(e).__name__ + ": " + str(e)[:80])
sys.stdout.write(json.dumps(out))
`

func pyTagged(v any) any {
	switch x := v.(type) {
	case nil:
		return []any{"n"}
	case bool:
		return []any{"b", x}
	case int64:
		return []any{"i", strconv.FormatInt(x, 10)}
	case uint64:
		return []any{"i", strconv.FormatUint(x, 10)}
	case json.Number:
		return []any{"i", string(x)}
	case float64:
		var b [8]byte
		u := math.Float64bits(x)
		for i := range 8 {
			b[i] = byte(u >> (8 * i))
		}
		return []any{"f", fmt.Sprintf("%x", b[:])}
	case string:
		return []any{"s", base64.StdEncoding.EncodeToString([]byte(x))}
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = pyTagged(e)
		}
		return []any{"l", out}
	case map[string]any:
		var kv []any
		for _, k := range pyjson.SortedKeys(x) {
			kv = append(kv, []any{base64.StdEncoding.EncodeToString([]byte(k)), pyTagged(x[k])})
		}
		if kv == nil {
			kv = []any{}
		}
		return []any{"d", kv}
	}
	panic(fmt.Sprintf("untaggable %T", v))
}

type valueGen struct{ r *rand.Rand }

func (g valueGen) str(n int) string {
	var b strings.Builder
	for range g.r.IntN(n + 1) {
		var r rune
		switch g.r.IntN(8) {
		case 0:
			r = g.r.Int32N(0x80)
		case 1:
			r = []rune{0x7f, 0x2028, 0x2029, 0xfeff, 0xffff, 0xfffd, 0x10000, 0x10ffff, '<', '>', '&', '/', '"', '\\'}[g.r.IntN(14)]
		case 2:
			r = 0x80 + g.r.Int32N(0x780)
		case 3:
			r = 0xe000 + g.r.Int32N(0x2000)
		case 4:
			r = 0x10000 + g.r.Int32N(0x100000)
		default:
			r = 0x20 + g.r.Int32N(0x5f)
		}
		b.WriteRune(r)
	}
	return b.String()
}

func (g valueGen) float() float64 {
	switch g.r.IntN(4) {
	case 0:
		return []float64{1e16, 1e-7, math.Copysign(0, -1), 5e-324, math.MaxFloat64, -math.MaxFloat64, 1 << 53, 1<<53 + 2, 0.1, 1e15, 9999999999999998, 123456789012345678, 1e-4, 1e-5, 2.5e-308, math.SmallestNonzeroFloat64 * 3}[g.r.IntN(16)]
	case 1:
		return g.r.NormFloat64() * math.Pow(10, float64(g.r.IntN(60)-30))
	default:
		for {
			f := math.Float64frombits(g.r.Uint64())
			if !math.IsNaN(f) && !math.IsInf(f, 0) {
				return f
			}
		}
	}
}

func (g valueGen) value(depth int) any {
	k := g.r.IntN(10)
	if depth > 5 {
		k = g.r.IntN(6)
	}
	switch k {
	case 0:
		return []any{nil, true, false}[g.r.IntN(3)]
	case 1:
		return []any{int64(math.MaxInt64), int64(math.MinInt64), uint64(math.MaxUint64), int64(1<<53 + 1), g.r.Int64() >> g.r.IntN(64), json.Number("123456789012345678901234567890"), json.Number("-18446744073709551617")}[g.r.IntN(7)]
	case 2, 3:
		return g.float()
	case 4, 5:
		return g.str(10)
	case 6, 7:
		a := make([]any, g.r.IntN(4))
		for i := range a {
			a[i] = g.value(depth + 1)
		}
		return a
	default:
		m := map[string]any{}
		for range g.r.IntN(5) {
			m[g.str(4)] = g.value(depth + 1)
		}
		return m
	}
}

// TestEncodeMatchesPythonOnGeneratedValues compares Go-built values (floats,
// ints, strings with every kind of code point, non-ASCII keys, empty
// containers) written in every style the code uses with Python's dumps.
func TestEncodeMatchesPythonOnGeneratedValues(t *testing.T) {
	styles := []struct {
		st   pyjson.Style
		opts map[string]any
	}{
		{pyjson.Canonical, map[string]any{"sort_keys": true, "compact": true}},
		{pyjson.CanonicalASCII, map[string]any{"sort_keys": true, "compact": true, "ascii": true}},
		{pyjson.Line, map[string]any{"sort_keys": true}},
		{pyjson.Pretty, map[string]any{"sort_keys": true, "indent": 2}},
		{pyjson.Style{SortKeys: true, Indent: 2, PyNumbers: true}, map[string]any{"sort_keys": true, "indent": 2}},
		{pyjson.Style{Compact: true}, map[string]any{"sort_keys": true, "compact": true}},
		{pyjson.Style{ASCII: true}, map[string]any{"sort_keys": true, "ascii": true}},
		{pyjson.Style{ASCII: true, Indent: 4}, map[string]any{"sort_keys": true, "ascii": true, "indent": 4}},
	}
	g := valueGen{rand.New(rand.NewPCG(7, 99))}
	var values []any
	values = append(values, map[string]any{"\uffff": 1.0, "\U00010000": 2.0, "\u00e9": int64(3), "z": []any{}, "": map[string]any{}},
		[]any{[]any{}, map[string]any{}, []any{[]any{}}}, "</script>&<>\u2028\u2029\x7f\x00\x1f")
	for range 1500 {
		values = append(values, g.value(0))
	}
	var req []any
	for _, v := range values {
		for _, s := range styles {
			req = append(req, []any{pyTagged(v), s.opts})
		}
	}
	var got []string
	runPython(t, encodeDiffScript, req, &got)
	n := 0
	for i, v := range values {
		for j, s := range styles {
			res := got[i*len(styles)+j]
			b, err := pyjson.Marshal(v, s.st)
			if strings.HasPrefix(res, "ERR") {
				if err == nil {
					t.Errorf("style %+v: we write %q, Python: %s", s.st, b, res)
				}
				continue
			}
			want, _ := base64.StdEncoding.DecodeString(res)
			if err != nil || !bytes.Equal(b, want) {
				n++
				if n < 20 {
					t.Errorf("style %+v:\n got %q (%v)\nwant %q", s.st, b, err, want)
				}
			}
		}
	}
}

// TestDecodeLiteralsMatchPython: decoding odd number literals
// and re-encoding canonically, compared with json.dumps(json.loads(t)).
func TestDecodeLiteralsMatchPython(t *testing.T) {
	texts := []string{
		"1e-99999999999999999999", "1e99999999999999999999", "0e99999999999999999999", "-0e-99999999999999999999",
		"1" + strings.Repeat("0", 400) + ".0", "0." + strings.Repeat("0", 400) + "1", "2.4703282292062328e-324",
		"2.4703282292062327e-324", "1.7976931348623158e308", "1.7976931348623159e308", "9007199254740993.0",
		"[1e-99999999999999999999999999999999999999]", "1E-7", "123456789012345678901234567890e0",
		`{"a":1,"a":{"b":2},"a":[3]}`, `[-0, -0.0, 0.0e-0]`,
	}
	script := `
import json, sys
out = []
for t in json.loads(sys.stdin.read()):
    try: out.append(json.dumps(json.loads(t), sort_keys=True, separators=(",", ":"), ensure_ascii=False))
    except Exception as e: out.append("ERR " + type(e).__name__)
print(json.dumps(out))
`
	var got []string
	runPython(t, script, texts, &got)
	for i, text := range texts {
		v, err := pyjson.Decode([]byte(text))
		if strings.HasPrefix(got[i], "ERR") {
			if err == nil {
				t.Errorf("%.40q: we accept, Python %s", text, got[i])
			}
			continue
		}
		if err != nil {
			t.Errorf("%.40q: %v", text, err)
			continue
		}
		b, err := pyjson.Marshal(v, pyjson.Canonical)
		if err != nil || string(b) != got[i] {
			t.Errorf("%.40q: got %.60q (%v), Python %.60q", text, b, err, got[i])
		}
	}
}

// pyMaxIntDigits is CPython's default int_max_str_digits (3.11+, also in
// 3.10.7+/3.9.14+ security releases): int(str) and str(int), so
// json.loads and json.dumps, refuse an integer of more digits with
// ValueError("Exceeds the limit (4300 digits) for integer string
// conversion").
const pyMaxIntDigits = 4300

// TestEncoderRefusesIntegerPythonCannotRead: a json.Number of more than
// 4300 integer digits (from a Go caller, a *big.Int through encoding/json,
// or decoded) is refused by Check and every style, as NaN is: Python's
// json.dumps cannot write such an int (str(int) raises ValueError) and
// json.loads cannot read the text back. It used to be written, so a run
// file, ledger line or hash-chain text Python then failed to load.
func TestEncoderRefusesIntegerPythonCannotRead(t *testing.T) {
	v := map[string]any{"n": json.Number(strings.Repeat("1", pyMaxIntDigits+1))}
	if err := pyjson.Check(v, "vars"); err == nil {
		t.Errorf("Check accepts a %d-digit integer that Python's json cannot read or write", pyMaxIntDigits+1)
	}
	for _, st := range []pyjson.Style{pyjson.Line, pyjson.Canonical} {
		if b, err := pyjson.Marshal(v, st); err == nil {
			t.Errorf("style %+v writes %d bytes holding a %d-digit integer; Python's json.loads raises ValueError on it", st, len(b), pyMaxIntDigits+1)
		}
	}
}

package code_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/visualflow/code"
)

// code_fuzz_test.go: fuzz targets for the code node's sandbox: fuzzed
// source with a fixed input, and fixed sources with fuzzed JSON input.

const fuzzTimeout = 300 * time.Millisecond

// fuzzLimits are small limits, so that one input cannot hold the fuzzer
// for long.
var fuzzLimits = code.Limits{Timeout: fuzzTimeout, MaxSteps: 200_000, MaxMemory: 64 << 20}

// slack is how much past its timeout a run may end before the target
// calls it a hang: far more than the watchdog's few ms, so that a loaded
// machine (or the race detector) never fails a seed; a run that ignores
// its timeout still shows.
const slack = 30 * time.Second

// onlyNonFinite reports whether encoding v fails only because of NaN or
// infinite floats: the runtime refuses those with an error naming their
// path (docs/compatibility.md, "NaN and ±Infinity"), and a result int past
// int64 comes back as a float (docs/visualflow.md), infinite past 1e308.
func onlyNonFinite(v any) bool {
	_, err := pyjson.Marshal(v, pyjson.Style{AllowNaN: true})
	return err == nil
}

// checkResult asserts that a result is JSON as the stores write it
// (pyjson.Line), unless it holds a non-finite float, and that its text
// decodes to a value that encodes to the same text.
func checkResult(t *testing.T, v any) {
	t.Helper()
	text, err := pyjson.Marshal(v, pyjson.Line)
	if err != nil {
		var pe *pyjson.Error
		if onlyNonFinite(v) {
			return
		}
		if !errors.As(err, &pe) {
			t.Fatalf("result %#v does not encode: %v", v, err)
		}
		t.Fatalf("result does not encode as the stores write it: %v", err)
	}
	back, err := pyjson.Decode(text)
	if err != nil {
		t.Fatalf("the result's text does not decode: %v\n%s", err, text)
	}
	again, err := pyjson.Marshal(back, pyjson.Line)
	if err != nil || !bytes.Equal(again, text) {
		t.Fatalf("the result's text is not stable (err %v):\n%s\n%s", err, text, again)
	}
}

// checkError asserts that an error says something, is not absurdly long
// (messages are stored with the run) and, when a limit stopped the code,
// says so.
func checkError(t *testing.T, err error, elapsed time.Duration) {
	t.Helper()
	msg := err.Error()
	if strings.TrimSpace(msg) == "" {
		t.Fatal("empty error")
	}
	if len(msg) > 8<<10 {
		t.Fatalf("error of %d bytes (messages are capped at 4 KiB): %.200q", len(msg), msg)
	}
	if !utf8Valid(msg) {
		t.Fatalf("error is not valid UTF-8: %q", msg)
	}
	_ = elapsed
}

func utf8Valid(s string) bool { return utf8.ValidString(s) }

func fixedInput() map[string]any {
	return map[string]any{
		"a": json.Number("1"), "b": "x", "f": json.Number("2.5"),
		"items": []any{json.Number("1"), json.Number("2"), json.Number("3")},
		"obj":   map[string]any{"k": true, "n": nil},
	}
}

// runTimed runs src under fuzzLimits and asserts it ends in time.
func runTimed(t *testing.T, src string, input any) (any, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	v, _, err := code.Run(ctx, src, "transform", input, fuzzLimits)
	if d := time.Since(start); d > fuzzTimeout+slack {
		t.Fatalf("run took %v, timeout %v:\n%s", d, fuzzTimeout, src)
	}
	return v, err
}

// FuzzCodeRunSource: any source text, run with a fixed small input, either
// returns a result that is JSON as the stores write it (and re-encodes
// stably) or an error that is non-empty, valid UTF-8 and capped; never a
// panic, never much past the timeout. With asBody, the text is a code
// node's codeBody, wrapped by BuildBody as the node does.
func FuzzCodeRunSource(f *testing.F) {
	seeds := []string{
		"def transform(x):\n    return x\n",
		"def transform(x):\n    return {'s': str(x), 'n': len(x), 'k': sorted(x.keys())}\n",
		"def transform(x):\n    return [i * i for i in x['items']]\n",
		"def transform(x):\n    return x['a'] / 0\n",
		"def transform(x):\n    while True:\n        pass\n",
		"def transform(x):\n    return 'ab' * 1000000000\n",
		"def transform(x):\n    return 10 ** 400\n",
		"def transform(x):\n    return float('nan')\n",
		"def transform(x):\n    return {1: 2, (1, 2): [3], None: set([1])}\n",
		"def transform(x):\n    l = []\n    for i in range(100):\n        l = [l]\n    return l\n",
		"def transform(x):\n    l = [1]\n    for i in range(40):\n        l = [l, l]\n    return l\n",
		"def transform(x):\n    return '%s-%d' % (x['b'], x['a'])\n",
		"def transform(x):\n    return '{}'.format(x) + x['b'].upper().replace('X', 'y' * 3)\n",
		"def transform(x):\n    return fail('boom' * 10000)\n",
		"def transform(x):\n    return transform(x)\n",
		"def transform(x):\n    return range(10)\n",
		"def transform(x):\n    return lambda y: y\n",
		"def transform(x):\n    return '\\xff'\n",
		"def transform(x):\n    return b'\\xff'\n",
		"def transform(x):\n    return int('9' * 5000)\n",
		"def transform(x):\n    return [x] * 100000\n",
		"transform = 3\n",
		"def transform(:\n",
		"load('x', 'y')\n",
		"return a + 1",
		"if a:\n    return {'v': b}\nreturn None",
		"\treturn  x",
	}
	for _, s := range seeds {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, src string, asBody bool) {
		if len(src) > 4096 {
			return
		}
		input := any(fixedInput())
		if asBody {
			src = code.BuildBody("transform", src, []string{"a", "b"})
		}
		v, err := runTimed(t, src, input)
		if err != nil {
			checkError(t, err, 0)
			return
		}
		checkResult(t, v)
	})
}

// Sources run on fuzzed input: identity (what comes in goes out), and
// transforms that walk the input.
var inputSources = []string{
	"def transform(x):\n    return x\n",
	"def transform(x):\n    return {'s': str(x), 'r': repr(x), 't': type(x), 'b': bool(x)}\n",
	"def transform(x):\n" +
		"    def walk(v, d):\n" +
		"        if d > 50:\n" +
		"            return None\n" +
		"        if type(v) == 'dict':\n" +
		"            return {str(k) + '!': walk(w, d + 1) for k, w in v.items()}\n" +
		"        if type(v) == 'list':\n" +
		"            return [walk(w, d + 1) for w in reversed(v)]\n" +
		"        if type(v) in ('int', 'float'):\n" +
		"            return v * 2\n" +
		"        if type(v) == 'string':\n" +
		"            return v.upper() + v[::-1]\n" +
		"        return v\n" +
		"    return walk(x, 0)\n",
	"def transform(x):\n    return sorted([str(k) for k in x]) if type(x) in ('dict', 'list', 'string') else x\n",
}

// FuzzCodeRunInput: fixed sources on fuzzed JSON input. The input either
// cannot be converted (an error naming the conversion) or the run returns
// a result that is JSON as the stores write it, or an error; never a
// panic, never much past the timeout. The identity transform gives back
// what it got: its result encodes as the input does (ints past int64
// compared as floats, as results beyond int64 come back as floats).
func FuzzCodeRunInput(f *testing.F) {
	for i := range inputSources {
		f.Add(uint8(i), []byte(`{"a": 1, "b": "x", "items": [1, 2.5, null, true], "o": {"k": {}}}`))
		f.Add(uint8(i), []byte(`[1e308, -0.0, 1E-7, 123456789012345678901234567890, "\u00e9\ud83d\ude00"]`))
		f.Add(uint8(i), []byte(`"text"`))
		f.Add(uint8(i), []byte(`{"n": NaN, "i": Infinity, "m": -Infinity, "big": 1e400}`))
		f.Add(uint8(i), []byte(`[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]`))
		f.Add(uint8(i), []byte(`{"": "", "\u0000": "\ud800"}`))
	}
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		if len(data) > 1<<14 {
			return
		}
		input, err := pyjson.Decode(data)
		if err != nil {
			return
		}
		src := inputSources[int(which)%len(inputSources)]
		v, err := runTimed(t, src, input)
		if err != nil {
			checkError(t, err, 0)
			return
		}
		checkResult(t, v)
		if int(which)%len(inputSources) == 0 {
			if !sameJSON(input, v) {
				t.Fatalf("identity changed the input:\n in  %#v\n out %#v", input, v)
			}
		}
	})
}

// sameJSON compares an input value (json.Number numbers) with a result
// value (int64 / float64 numbers) as JSON values.
func sameJSON(in, out any) bool {
	switch x := in.(type) {
	case json.Number:
		return sameNumber(x, out)
	case []any:
		y, ok := out.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameJSON(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := out.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !sameJSON(v, w) {
				return false
			}
		}
		return true
	case nil, bool, string:
		return in == out
	}
	return false
}

func sameNumber(n json.Number, out any) bool {
	s := string(n)
	if i, err := n.Int64(); err == nil {
		return out == any(i)
	}
	if !strings.ContainsAny(s, ".eE") && !strings.Contains(s, "Inf") && s != "NaN" {
		b, ok := new(big.Int).SetString(s, 10)
		if !ok {
			return false
		}
		f, _ := new(big.Float).SetInt(b).Float64()
		return out == any(f)
	}
	f, err := n.Float64()
	g, ok := out.(float64)
	if !ok {
		return false
	}
	if math.IsNaN(f) {
		return math.IsNaN(g)
	}
	_ = err
	return f == g
}

// FuzzCodeBodyParam: a code node's pin id, whatever its text, becomes a
// local of the generated function (BuildBody) holding the pin's value:
// the body `return <Ident(pin)>` gives back the value given for the pin.
func FuzzCodeBodyParam(f *testing.F) {
	for _, p := range []string{"a", "my pin", "1x", "def", "load", "", "a\"b", `a\b`, "a\nb", "a\rb", "é", "\x00", "_input", "transform", "a\u2028b"} {
		f.Add(p, "v")
	}
	f.Fuzz(func(t *testing.T, pin, value string) {
		if len(pin) > 256 || len(value) > 256 || !utf8.ValidString(pin) {
			// Pin ids come from flow JSON, whose decoder gives valid UTF-8
			// (a lone surrogate escape becomes U+FFFD).
			return
		}
		name := code.Ident(pin)
		src := code.BuildBody("transform", "return "+name, []string{pin})
		v, err := runTimed(t, src, map[string]any{pin: value})
		if err != nil {
			t.Fatalf("pin %q (local %s): %v\n%s", pin, name, err, src)
		}
		if v != value {
			t.Fatalf("pin %q (local %s) = %#v, want %q\n%s", pin, name, v, value, src)
		}
	})
}

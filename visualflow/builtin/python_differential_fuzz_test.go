package builtin

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os/exec"
	"regexp"
	"testing"
	"unicode/utf8"

	"github.com/abstractframework/abstractgateway/internal/pyjson"
)

// FuzzBuiltinPythonDifferential extends python_differential_test.go to
// fuzzed inputs: for the builtins whose Python semantics that test models
// (format, power, compare, round, substring; reference visual/builtins.py,
// spec visualflow.md §6), it evaluates the same pin values with python3
// (a persistent co-process) and asserts that Go and Python agree on
// success vs exception and, on success, on the JSON text of the result.
//
// Python sees the pin map as pyjson re-encodes what Go decoded (so lone
// surrogates are U+FFFD on both sides) with object keys sorted
// (docs/compatibility.md: Go keeps no insertion order; str() of a dict
// lists keys sorted). Inputs that would only test documented divergences
// or blow up memory are skipped: NaN (Python's json module shares one NaN
// object, so [NaN] == [NaN] by identity), format widths of 5+ digits.

const pyDiffScript = `
import json, sys, signal

def hook(pairs):
    return dict(sorted(pairs, key=lambda kv: kv[0]))

def alarm(*a):
    raise TimeoutError("timeout")
signal.signal(signal.SIGALRM, alarm)

def ev(op, i):
    if op == "format":
        t = str(i.get("template", ""))
        v = i.get("values", {})
        if not isinstance(v, dict):
            return t
        return t.format(**v)
    if op == "power":
        return float(i.get("base", 0)) ** float(i.get("exp", 1))
    if op == "round":
        return round(float(i.get("value", 0)), int(i.get("decimals", 0)))
    if op == "substring":
        t = str(i.get("text", ""))
        s = int(i.get("start", 0))
        e = i.get("end")
        if e is not None:
            e = int(e)
        return t[s:e]
    if op == "compare":
        a, b = i.get("a"), i.get("b")
        o = str(i.get("op", "=="))
        if o == "==":
            return a == b
        if o == "!=":
            return a != b
        try:
            if o == "<": return a < b
            if o == "<=": return a <= b
            if o == ">": return a > b
            if o == ">=": return a >= b
        except TypeError:
            return False
        raise ValueError("Unknown comparison operator: " + o)
    if op == "uppercase":
        return str(i.get("text", "")).upper()
    if op == "lowercase":
        return str(i.get("text", "")).lower()
    if op == "trim":
        return str(i.get("text", "")).strip()
    if op == "length":
        return len(str(i.get("text", "")))
    if op == "contains":
        p = i.get("pattern")
        if p is None or p == "":
            return False
        t = i.get("text")
        return str(p) in ("" if t is None else str(t))
    raise ValueError("bad op " + op)

for line in sys.stdin:
    req = json.loads(line, object_pairs_hook=hook)
    try:
        signal.alarm(5)
        try:
            r = ev(req["op"], req["in"])
        finally:
            signal.alarm(0)
        out = {"ok": True, "r": json.dumps(r, ensure_ascii=True)}
    except TimeoutError:
        out = {"ok": False, "skip": True, "e": "timeout"}
    except (MemoryError, RecursionError) as e:
        out = {"ok": False, "skip": True, "e": type(e).__name__}
    except Exception as e:
        out = {"ok": False, "e": type(e).__name__ + ": " + str(e)}
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()
`

type pyCoproc struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

func startPyCoproc(f *testing.F) *pyCoproc {
	path, err := exec.LookPath("python3")
	if err != nil {
		f.Skip("python3 not available")
	}
	// The expectations are CPython 3.11's (the 'z' option, its messages).
	if err := exec.Command(path, "-c", "import sys; sys.exit(sys.version_info < (3, 11))").Run(); err != nil {
		f.Skipf("python3 older than 3.11 (%v)", err)
	}
	cmd := exec.Command(path, "-c", pyDiffScript)
	in, err := cmd.StdinPipe()
	if err != nil {
		f.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		f.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		f.Skipf("python3: %v", err)
	}
	p := &pyCoproc{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<16)}
	f.Cleanup(func() {
		_ = in.Close()
		_ = cmd.Wait()
	})
	return p
}

type pyAnswer struct {
	OK   bool   `json:"ok"`
	R    string `json:"r"`
	E    string `json:"e"`
	Skip bool   `json:"skip"`
}

func (p *pyCoproc) eval(t *testing.T, op string, in map[string]any) pyAnswer {
	t.Helper()
	req, err := pyjson.Marshal(map[string]any{"op": op, "in": in}, pyjson.Style{Compact: true, ASCII: true})
	if err != nil {
		t.Skip()
	}
	if _, err := p.in.Write(append(req, '\n')); err != nil {
		t.Fatalf("python3 co-process: %v", err)
	}
	line, err := p.out.ReadBytes('\n')
	if err != nil {
		t.Fatalf("python3 co-process: %v", err)
	}
	var a pyAnswer
	if err := json.Unmarshal(line, &a); err != nil {
		t.Fatalf("python3 answer %q: %v", line, err)
	}
	return a
}

// bigWidth and nestedSpec keep format specs small: a width or precision
// of 5+ digits, written or made by a nested field ("{x:{n}}"), makes both
// Go and Python allocate that much (gigabytes on a shared machine).
var (
	bigWidth   = regexp.MustCompile(`[0-9]{5,}`)
	nestedSpec = regexp.MustCompile(`:[^{}]*\{`)
)

func hugeSpec(tmpl string) bool { return bigWidth.MatchString(tmpl) || nestedSpec.MatchString(tmpl) }

func FuzzBuiltinPythonDifferential(f *testing.F) {
	ops := []string{"format", "power", "compare", "round", "substring"}
	seed := func(op, in string) {
		for i, o := range ops {
			if o == op {
				f.Add(uint8(i), []byte(in))
			}
		}
	}
	seed("format", `{"template": "{n:012,.2f}|{s!r:>6}|{b}|{x}", "values": {"n": 42, "s": "é", "b": true, "x": [1, null, 2.5]}}`)
	seed("format", `{"template": "{x:.2}|{y:e}|{z:%}", "values": {"x": 12.345, "y": 0.0001, "z": 0.5}}`)
	seed("format", `{"template": "{d[a]}{l[1]}{{}}", "values": {"d": {"a": "A"}, "l": [0, 1]}}`)
	seed("format", `{"template": "{n:#x} {n:_b} {n:c}", "values": {"n": 255}}`)
	seed("format", `{"template": "{}", "values": {}}`)
	seed("format", `{"template": "{n:^+9.3g}", "values": {"n": -1e-7}}`)
	seed("power", `{"base": 1.05, "exp": 30}`)
	seed("power", `{"base": -8, "exp": 0.5}`)
	seed("power", `{"base": 0, "exp": -1}`)
	seed("power", `{"base": "1e3", "exp": " 2 "}`)
	seed("compare", `{"a": [1, "a"], "b": [1, 2], "op": "<"}`)
	seed("compare", `{"a": 9223372036854775808, "b": 9223372036854775809, "op": ">="}`)
	seed("compare", `{"a": {"a": 1}, "b": {"a": 1.0}, "op": "=="}`)
	seed("compare", `{"a": true, "b": 1, "op": "<="}`)
	seed("compare", `{"a": "é", "b": "e", "op": ">"}`)
	seed("round", `{"value": 2.675, "decimals": 2}`)
	seed("round", `{"value": 123456.7, "decimals": -3}`)
	seed("round", `{"value": "1e308", "decimals": -308}`)
	seed("substring", `{"text": "héllo wörld", "start": -5, "end": "8"}`)
	seed("substring", `{"text": ["a", 1], "start": 1.9, "end": null}`)
	seed("substring", `{"text": null, "start": true}`)
	py := startPyCoproc(f)
	f.Fuzz(func(t *testing.T, opi uint8, inJSON []byte) {
		if len(inJSON) > 4000 || bytes.Contains(inJSON, []byte("NaN")) {
			t.Skip()
		}
		op := ops[int(opi)%len(ops)]
		in, err := pyjson.DecodeObject(inJSON)
		if err != nil {
			t.Skip()
		}
		if op == "format" {
			if tmpl, _ := in["template"].(string); hugeSpec(tmpl) {
				t.Skip()
			}
		}
		fn, _ := Lookup(op)
		got, gerr := callWithDeadline(t, op, fn, &Env{}, in)
		want := py.eval(t, op, in)
		if want.Skip {
			t.Skip()
		}
		inText, _ := pyjson.Marshal(in, pyjson.Style{SortKeys: true, ASCII: true})
		switch {
		case gerr != nil && want.OK:
			t.Fatalf("%s(%s): Go fails with %q, Python returns %s", op, inText, gerr, want.R)
		case gerr == nil && !want.OK:
			g, _ := pyjson.Marshal(got, pyjson.Style{ASCII: true, AllowNaN: true})
			t.Fatalf("%s(%s): Go returns %s, Python raises %s", op, inText, g, want.E)
		case gerr == nil:
			g, err := pyjson.Marshal(got, pyjson.Style{ASCII: true, AllowNaN: true})
			if err != nil {
				t.Fatalf("%s: encoding Go result %#v: %v", op, got, err)
			}
			if string(g) != want.R {
				t.Fatalf("%s(%s):\n  Go     %s\n  Python %s", op, inText, g, want.R)
			}
		}
	})
}

// FuzzStringNodesPython drives the string builtins whose Python semantics
// python_strip_lower_test.go and python_differential_test.go model
// (uppercase = str.upper, lowercase = str.lower, trim = str.strip, length
// = len, substring = slicing, contains = in) with fuzzed strings and ints
// built directly (not through JSON, so the fuzzer mutates the text
// itself), and asserts Go and python3 give the same result, and that
// valid UTF-8 in gives valid UTF-8 out.
func FuzzStringNodesPython(f *testing.F) {
	ops := []string{"uppercase", "lowercase", "trim", "length", "substring", "contains"}
	for i := range ops {
		f.Add(uint8(i), "  Straße İstanbul ǅ ﬁ \x1c\u0085", "ß", int64(1), int64(-2))
	}
	f.Add(uint8(4), "héllo wörld 🫨", "", int64(-100), int64(3))
	f.Add(uint8(5), "ŉ abc ΐ", "b", int64(0), int64(0))
	py := startPyCoproc(f)
	f.Fuzz(func(t *testing.T, opi uint8, text, arg string, a, b int64) {
		if !utf8.ValidString(text) || !utf8.ValidString(arg) || len(text) > 2000 {
			t.Skip()
		}
		op := ops[int(opi)%len(ops)]
		in := map[string]any{"text": text}
		switch op {
		case "substring":
			in["start"] = a
			if b%3 != 0 {
				in["end"] = b
			}
		case "contains":
			in["pattern"] = arg
		}
		fn, _ := Lookup(op)
		got, gerr := callWithDeadline(t, op, fn, &Env{}, in)
		if gerr != nil {
			t.Fatalf("%s(%q): unexpected error %v", op, in, gerr)
		}
		if s, ok := got.(string); ok && !utf8.ValidString(s) {
			t.Fatalf("%s(%q) = %q: invalid UTF-8", op, in, s)
		}
		want := py.eval(t, op, in)
		if want.Skip {
			t.Skip()
		}
		if !want.OK {
			t.Fatalf("%s(%q): Go returns %#v, Python raises %s", op, in, got, want.E)
		}
		g, err := pyjson.Marshal(got, pyjson.Style{ASCII: true})
		if err != nil {
			t.Fatal(err)
		}
		if string(g) != want.R {
			t.Fatalf("%s(%q):\n  Go     %s\n  Python %s", op, in, g, want.R)
		}
	})
}

// FuzzFormatPython is the format differential with the template fuzzed as
// raw text (so the fuzzer mutates the format mini-language directly) and
// values of every JSON kind built from fuzzed primitives: Go's format
// node must agree with Python's str.format(**values) on success vs
// exception and on the text.
func FuzzFormatPython(f *testing.F) {
	for _, tmpl := range []string{
		"{n:012,.2f}|{s!r:>6}|{b}|{l}", "{x:.2}|{x:e}|{x:%}|{x:g}", "{d[k]}{l[1]}{{}}", "{n:#x} {n:_b} {n:c} {n:o}",
		"{}", "{x:^+9.3g}", "{s:*^7.2}", "{b:d}{b:5}", "{z}{z!s:>4}", "{n:=+08_d}", "{x:z.1f}", "{s!a}", "{d}", "{l[0]:>3}",
	} {
		f.Add(tmpl, "é\u00a0x", int64(255), 12.345, true)
	}
	py := startPyCoproc(f)
	f.Fuzz(func(t *testing.T, tmpl, s string, n int64, x float64, b bool) {
		if !utf8.ValidString(tmpl) || !utf8.ValidString(s) || len(tmpl) > 300 || hugeSpec(tmpl) {
			t.Skip()
		}
		if x != x || x > 1e308 || x < -1e308 {
			t.Skip()
		}
		in := map[string]any{"template": tmpl, "values": map[string]any{
			"s": s, "n": n, "x": x, "b": b, "z": nil, "l": []any{n, s, x}, "d": map[string]any{"k": s, "n": n},
		}}
		fn, _ := Lookup("format")
		got, gerr := callWithDeadline(t, "format", fn, &Env{}, in)
		want := py.eval(t, "format", in)
		if want.Skip {
			t.Skip()
		}
		switch {
		case gerr != nil && want.OK:
			t.Fatalf("format(%q, s=%q n=%d x=%v b=%v): Go fails with %q, Python returns %s", tmpl, s, n, x, b, gerr, want.R)
		case gerr == nil && !want.OK:
			t.Fatalf("format(%q, s=%q n=%d x=%v b=%v): Go returns %q, Python raises %s", tmpl, s, n, x, b, got, want.E)
		case gerr == nil:
			g, _ := pyjson.Marshal(got, pyjson.Style{ASCII: true})
			if string(g) != want.R {
				t.Fatalf("format(%q, s=%q n=%d x=%v b=%v):\n  Go     %s\n  Python %s", tmpl, s, n, x, b, g, want.R)
			}
		}
	})
}

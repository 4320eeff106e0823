package pyjson

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"strings"
	"testing"
)

func TestFormatFloat(t *testing.T) {
	t.Parallel()
	cases := map[float64]string{
		1.0: "1.0", 0.5: "0.5", 1e-05: "1e-05", 1e16: "1e+16", 1.5e20: "1.5e+20",
		123456789012345.0: "123456789012345.0", 1234567890123456.0: "1234567890123456.0",
		0.0001: "0.0001", -2.5: "-2.5", 0.1: "0.1", 100.0: "100.0", 1e22: "1e+22",
		3.14159: "3.14159", 1.7976931348623157e308: "1.7976931348623157e+308",
	}
	for f, want := range cases {
		if got := FormatFloat(f); got != want {
			t.Errorf("FormatFloat(%v) = %q, want %q", f, got, want)
		}
	}
}

func TestCanonicalHashVector(t *testing.T) {
	t.Parallel()
	// Test vector from the runtime spec §4.6 (verified against Python).
	rec := map[string]any{
		"actor_id": nil, "attempt": json.Number("1"), "effect": nil,
		"ended_at": "2026-01-01T00:00:01+00:00", "error": nil, "idempotency_key": nil,
		"node_id": "n1", "prev_hash": nil,
		"result": map[string]any{"a": json.Number("1"), "f": 1.0, "s": "é"},
		"run_id": "run-1", "session_id": nil, "started_at": "2026-01-01T00:00:00+00:00",
		"status": "completed", "step_id": "step-1",
	}
	b, err := Marshal(rec, Canonical)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"actor_id":null,"attempt":1,"effect":null,"ended_at":"2026-01-01T00:00:01+00:00","error":null,"idempotency_key":null,"node_id":"n1","prev_hash":null,"result":{"a":1,"f":1.0,"s":"é"},"run_id":"run-1","session_id":null,"started_at":"2026-01-01T00:00:00+00:00","status":"completed","step_id":"step-1"}`
	if string(b) != want {
		t.Fatalf("canonical text\n got %s\nwant %s", b, want)
	}
	sum := sha256.Sum256(b)
	if got := hex.EncodeToString(sum[:]); got != "cc9743e483c6fca726cb88113c81606fd1dbbe5393ed5348d9a541d8b11e4f42" {
		t.Fatalf("hash = %s", got)
	}
}

func TestASCIIEscapes(t *testing.T) {
	t.Parallel()
	b, err := Marshal(map[string]any{"p": "Café ☕? 😀 <&> \u2028 \x01 /"}, CanonicalASCII)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"p":"Caf\u00e9 \u2615? \ud83d\ude00 <&> \u2028 \u0001 /"}`
	if string(b) != want {
		t.Fatalf("got %s want %s", b, want)
	}
}

func TestLineAndPrettyStyles(t *testing.T) {
	t.Parallel()
	v := map[string]any{"b": []any{json.Number("1"), "x"}, "a": map[string]any{}, "c": []any{}}
	b, _ := Marshal(v, Line)
	if string(b) != `{"a": {}, "b": [1, "x"], "c": []}` {
		t.Fatalf("line: %s", b)
	}
	b, _ = Marshal(v, Pretty)
	want := "{\n  \"a\": {},\n  \"b\": [\n    1,\n    \"x\"\n  ],\n  \"c\": []\n}"
	if string(b) != want {
		t.Fatalf("pretty:\n%s", b)
	}
}

func TestCheckRefusesBadValues(t *testing.T) {
	t.Parallel()
	cyc := map[string]any{}
	cyc["self"] = map[string]any{"back": cyc}
	cases := []struct {
		v    any
		path string
	}{
		{map[string]any{"a": math.NaN()}, "vars.a"},
		{map[string]any{"a": []any{1, math.Inf(1)}}, "vars.a[1]"},
		{map[string]any{"ch": make(chan int)}, "vars.ch"},
		{map[string]any{"f": func() {}}, "vars.f"},
		{cyc, "vars.self.back"},
	}
	for _, c := range cases {
		err := Check(c.v, "vars")
		if err == nil || !strings.Contains(err.Error(), c.path+" is not JSON-serialisable") {
			t.Errorf("Check(%v) = %v, want error naming %s", c.path, err, c.path)
		}
	}
}

func TestDecodeRoundTrip(t *testing.T) {
	t.Parallel()
	in := `{"a": [1, 1.0, -2.5e-7, true, false, null, "\u00e9\ud83d\ude00\n\"x\""], "b": {"c": {}}, "n": NaN}`
	v, err := Decode([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	out, err := Marshal(v, Line)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"a": [1, 1.0, -2.5e-7, true, false, null, "é😀\n\"x\""], "b": {"c": {}}, "n": NaN}`
	if string(out) != want {
		t.Fatalf("got %s\nwant %s", out, want)
	}
	for _, bad := range []string{`{"a":}`, `[1,]`, `{"a":1} x`, `"abc`, `01`, `{"a" 1}`} {
		if _, err := Decode([]byte(bad)); err == nil {
			t.Errorf("Decode(%q) succeeded", bad)
		}
	}
}

func TestDecodeStreamRecoversConcatenated(t *testing.T) {
	t.Parallel()
	vs, err := DecodeStream([]byte(`{"a": 1}{"b": 2} {"c": 3}`))
	if err != nil || len(vs) != 3 {
		t.Fatalf("got %v, %v", vs, err)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"a": [1, 2.5, "x\u00e9"], "b": null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := Decode(data)
		if err != nil {
			return
		}
		b, err := Marshal(v, Canonical)
		if err != nil {
			return // NaN literals and similar are refused by design
		}
		v2, err := Decode(b)
		if err != nil {
			t.Fatalf("re-decode of %s: %v", b, err)
		}
		b2, _ := Marshal(v2, Canonical)
		if string(b) != string(b2) {
			t.Fatalf("not stable: %s vs %s", b, b2)
		}
	})
}

// The ASCII style keeps only ' '..'~' raw, as Python's ensure_ascii
// encoder does: DEL was written raw, so an idempotency key over a payload
// holding U+007F differed from Python's and a completed effect Python ran
// was not found after a hand-off. Key as compute_idempotency_key gives it
// (CPython 3.11) for ask_user at node "ask" of "run-1".
func TestCanonicalASCIIEscapesDEL(t *testing.T) {
	t.Parallel()
	v, err := Decode([]byte(`{"prompt": "del\u007f"}`))
	if err != nil {
		t.Fatal(err)
	}
	got, err := Marshal(v, CanonicalASCII)
	if want := `{"prompt":"del\u007f"}`; err != nil || string(got) != want {
		t.Errorf("CanonicalASCII = %q, %v; want %q", got, err, want)
	}
	if got, _ := Marshal(v, Canonical); string(got) != "{\"prompt\":\"del\x7f\"}" {
		t.Errorf("Canonical (ensure_ascii off) = %q, want DEL raw", got)
	}
	material, _ := Marshal(Ordered{{"effect_payload", v}, {"effect_type", "ask_user"}, {"node_id", "ask"}, {"run_id", "run-1"}}, CanonicalASCII)
	sum := sha256.Sum256(material)
	if got := hex.EncodeToString(sum[:16]); got != "f0336b8ffaee37490977f2f1534ba1f2" {
		t.Errorf("idempotency key = %s, want Python's f0336b8ffaee37490977f2f1534ba1f2", got)
	}
}

// Floats inside typed slices and maps went through encoding/json, which
// writes 1.0 as 1 (an int for every reader) and 1e20 as
// 100000000000000000000; they are now written as Python writes floats.
func TestTypedContainersKeepFloats(t *testing.T) {
	t.Parallel()
	v := map[string]any{
		"slice": []float64{0.5, 1, 1e-7, 1e20, 1e16},
		"map":   map[string]float64{"two": 2},
		"f32":   []float32{1.5, 2, 0.1},
		"bytes": []byte("hi"),
		"ints":  [2]int{1, 2},
	}
	// json.dumps of the same values in Python, bytes aside (base64 here).
	want := `{"bytes": "aGk=", "f32": [1.5, 2.0, 0.1], "ints": [1, 2], "map": {"two": 2.0}, "slice": [0.5, 1.0, 1e-07, 1e+20, 1e+16]}`
	if got, err := Marshal(v, Line); err != nil || string(got) != want {
		t.Errorf("Line = %s, %v\nwant %s", got, err, want)
	}
}

// Ordered is "written in the given order, or sorted when the style sorts
// keys": the canonical text (the hash chain hashes a record's ordered
// object) has its keys sorted, nested ones included.
func TestCanonicalSortsOrderedMembers(t *testing.T) {
	t.Parallel()
	v := Ordered{{Key: "run_id", Value: "r"}, {Key: "effect", Value: Ordered{{Key: "type", Value: "x"}, {Key: "payload", Value: map[string]any{}}}}, {Key: "attempt", Value: 1}}
	b, err := Marshal(v, Canonical)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"attempt":1,"effect":{"payload":{},"type":"x"},"run_id":"r"}`; string(b) != want {
		t.Errorf("Canonical of Ordered = %s; want %s", b, want)
	}
	if b, _ := Marshal(v, Line); string(b) != `{"run_id": "r", "effect": {"type": "x", "payload": {}}, "attempt": 1}` {
		t.Errorf("Line of Ordered = %s; want the given order", b)
	}
}

package pyjson

import (
	"errors"
	"strings"
	"testing"
)

// Tests added by mutation testing of the pyjson package: each guards a
// promise (doc comment, package doc) that no test checked.

// AppendString with ascii writes every non-ASCII code point as \uXXXX;
// invalid UTF-8 becomes U+FFFD, which in the ASCII style (idempotency key
// text) must be the escape \ufffd, not the raw three bytes.
func TestAppendStringASCIIEscapesInvalidUTF8(t *testing.T) {
	t.Parallel()
	got := string(AppendString(nil, "a\xffb", true))
	if got != `"a\ufffdb"` {
		t.Errorf("AppendString(ascii) of invalid UTF-8 = %q; want %q", got, `"a\ufffdb"`)
	}
	b, err := Marshal(map[string]any{"k": "x\xfe"}, CanonicalASCII)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range b {
		if c >= 0x80 {
			t.Fatalf("CanonicalASCII text holds non-ASCII bytes: %q", b)
		}
	}
	if got := string(AppendString(nil, "a\xffb", false)); got != "\"a\uFFFDb\"" {
		t.Errorf("AppendString of invalid UTF-8 = %q; want U+FFFD raw", got)
	}
}

// Check names the path of the offending value: a bad member of an object
// whose other members are fine is reported at root.key, whatever the order
// the members are visited in (map order varies from call to call).
func TestCheckNamesTheBadMemberAmongGoodOnes(t *testing.T) {
	t.Parallel()
	m := map[string]any{"bad": map[string]any{"x": nanValue()}}
	for _, k := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"} {
		m[k] = map[string]any{"ok": int64(1)}
	}
	for range 30 {
		err := Check(m, "vars")
		var je *Error
		if !errors.As(err, &je) || je.Path != "vars.bad.x" {
			t.Fatalf("Check = %v; want the path vars.bad.x", err)
		}
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

type namedMap map[string]any

type namedSlice []any

// Check and the encoder report a cycle (not a nesting error MaxDepth levels
// later) for a value that contains itself through a named map or slice
// type, which the encoder reads member by member.
func TestCycleThroughNamedTypesIsReported(t *testing.T) {
	t.Parallel()
	m := namedMap{"a": int64(1)}
	m["self"] = m
	s := namedSlice{int64(1), nil}
	s[1] = s
	for name, v := range map[string]any{"map": m, "slice": s} {
		err := Check(v, "v")
		if err == nil || !strings.Contains(err.Error(), "cycle") {
			t.Errorf("Check(%s containing itself) = %v; want a cycle error", name, err)
		}
		if _, err := Marshal(v, Line); err == nil || !strings.Contains(err.Error(), "cycle") {
			t.Errorf("Marshal(%s containing itself) = %v; want a cycle error", name, err)
		}
	}
}

// The decoder reads a document nested past the encoder's MaxDepth (one
// another writer nested deeper still loads) and refuses one nested one
// level past its own limit (TestEncoderDecoderDepthAgree checks that all
// the encoder writes reads back).
func TestDecodeRefusesOneLevelPastDecodeLimit(t *testing.T) {
	t.Parallel()
	doc := func(arrays int) []byte {
		return []byte(strings.Repeat("[", arrays) + "1" + strings.Repeat("]", arrays))
	}
	if _, err := Decode(doc(MaxDepth + 1)); err != nil {
		t.Fatalf("Decode with the scalar at MaxDepth+1: %v", err)
	}
	if _, err := Decode(doc(maxDecodeDepth)); err != nil {
		t.Fatalf("Decode with the scalar at maxDecodeDepth: %v", err)
	}
	if _, err := Decode(doc(maxDecodeDepth + 1)); err == nil || !strings.Contains(err.Error(), "nesting too deep") {
		t.Errorf("Decode with the scalar at maxDecodeDepth+1 = %v; want nesting too deep", err)
	}
}

// CloneObject is a deep copy: arrays inside the object are copied too.
func TestCloneObjectCopiesNestedArrays(t *testing.T) {
	t.Parallel()
	orig := map[string]any{"list": []any{"a", map[string]any{"k": "v"}}, "obj": map[string]any{"l": []any{"x"}}}
	c := CloneObject(orig)
	c["list"].([]any)[0] = "changed"
	c["list"].([]any)[1].(map[string]any)["k"] = "changed"
	c["obj"].(map[string]any)["l"].([]any)[0] = "changed"
	if orig["list"].([]any)[0] != "a" || orig["list"].([]any)[1].(map[string]any)["k"] != "v" || orig["obj"].(map[string]any)["l"].([]any)[0] != "x" {
		t.Errorf("CloneObject shares nested values: original now %v", orig)
	}
	arr := []any{[]any{"a"}}
	ca := Clone(arr).([]any)
	ca[0].([]any)[0] = "changed"
	if arr[0].([]any)[0] != "a" {
		t.Errorf("Clone of an array shares its nested array: original now %v", arr)
	}
}

// DecodeStream returns the values read before invalid data and the error,
// so a caller recovering a JSONL line does not take garbage for its end.
func TestDecodeStreamReportsInvalidData(t *testing.T) {
	t.Parallel()
	out, err := DecodeStream([]byte(`{"a": 1}{"b": 2} {"c": `))
	if err == nil {
		t.Fatalf("DecodeStream of a truncated value = %v, nil; want an error", out)
	}
	if len(out) != 2 {
		t.Errorf("DecodeStream kept %d values before the error; want 2", len(out))
	}
	out, err = DecodeStream([]byte(`{"a": 1} {"b": 2}`))
	if err != nil || len(out) != 2 {
		t.Errorf("DecodeStream of two objects = %v, %v", out, err)
	}
}

// Typed slices are read element by element "so a float stays a float",
// also behind a pointer (encoding/json would write 1.0 as 1).
func TestPointerToTypedValuesKeepsFloats(t *testing.T) {
	t.Parallel()
	fs := []float64{1, 2.5}
	f := 3.0
	for v, want := range map[any]string{
		&fs: `[1.0, 2.5]`,
		&f:  `3.0`,
	} {
		b, err := Marshal(v, Line)
		if err != nil || string(b) != want {
			t.Errorf("Marshal(%T) = %s, %v; want %s", v, b, err, want)
		}
	}
}

package pyjson

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestNormalizeEqualsRoundTrip: Normalize(v) is what Decode gives for the
// encoding of v, for every kind of value a run's vars may hold.
func TestNormalizeEqualsRoundTrip(t *testing.T) {
	t.Parallel()
	type point struct {
		X int `json:"x"`
	}
	seven := 7
	values := map[string]any{
		"nil":        nil,
		"bool":       true,
		"string":     "héllo \"q\"",
		"bad utf8":   "a\xffb",
		"int":        42,
		"int64":      int64(-9007199254740993),
		"int8":       int8(-3),
		"uint64":     uint64(1 << 63),
		"float":      1.0,
		"float frac": 0.1,
		"float big":  1e22,
		"float32":    float32(2.5),
		"number":     json.Number("1.50"),
		"nil map":    map[string]any(nil),
		"nil slice":  []any(nil),
		"strings":    []string{"a", "b"},
		"str map":    map[string]string{"k": "v"},
		"struct":     point{X: 3},
		"pointer":    &seven,
		"ordered":    Ordered{{Key: "b", Value: 1}, {Key: "a", Value: []any{2.0, "x"}}},
		"raw":        json.RawMessage(`{"r":[1,2]}`),
		"bad key":    map[string]any{"k\xfe": 1},
		"decoded": map[string]any{
			"a": []any{json.Number("1"), json.Number("-2.5e3"), "s", nil, map[string]any{}, []any{}},
			"b": map[string]any{"c": true},
		},
		"nested": map[string]any{
			"list": []any{map[string]any{"n": 1}, []any{}, nil, false},
			"deep": map[string]any{"a": map[string]any{"b": uint16(9)}},
		},
	}
	for name, v := range values {
		b, err := Append(nil, v, Line, "")
		if err != nil {
			t.Fatalf("%s: encode: %v", name, err)
		}
		want, err := Decode(b)
		if err != nil {
			t.Fatalf("%s: decode: %v", name, err)
		}
		got, err := Normalize(v)
		if err != nil {
			t.Fatalf("%s: Normalize: %v", name, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: Normalize = %#v, round trip = %#v", name, got, want)
		}
		// IsNormalized says true exactly when the value is its own round trip.
		if is, same := IsNormalized(v), reflect.DeepEqual(v, want); is != same {
			t.Errorf("%s: IsNormalized = %v, but value == round trip is %v", name, is, same)
		}
		if !IsNormalized(got) {
			t.Errorf("%s: IsNormalized(Normalize(v)) = false", name)
		}
	}
}

// TestIsNormalizedRefusesWhatTheEncoderRefuses: a value with no round trip
// is never taken for its own decoded copy.
func TestIsNormalizedRefusesWhatTheEncoderRefuses(t *testing.T) {
	t.Parallel()
	for _, v := range []any{json.Number("0x1"), map[string]any{"n": json.Number("")}, []any{make(chan int)}} {
		if IsNormalized(v) {
			t.Errorf("IsNormalized(%#v) = true", v)
		}
	}
}

func TestNormalizeCopies(t *testing.T) {
	t.Parallel()
	in := map[string]any{"m": map[string]any{"a": "x"}, "l": []any{"y"}}
	out, err := NormalizeObject(in)
	if err != nil {
		t.Fatal(err)
	}
	out["m"].(map[string]any)["a"] = "changed"
	out["l"].([]any)[0] = "changed"
	if in["m"].(map[string]any)["a"] != "x" || in["l"].([]any)[0] != "y" {
		t.Fatal("Normalize shares containers with its input")
	}
}

func TestNormalizeRefusesWhatTheEncoderRefuses(t *testing.T) {
	t.Parallel()
	for _, v := range []any{map[string]any{"f": func() {}}, []any{nanValue()}} {
		if _, err := Normalize(v); err == nil {
			t.Errorf("Normalize(%T) accepted a value the encoder refuses", v)
		}
	}
}

func nanValue() float64 {
	zero := 0.0
	return zero / zero
}

// A value nested one level past MaxDepth has no encoding: Normalize gives
// the encoder's error and IsNormalized says false, however the value is
// otherwise in Normalize's form.
func TestNormalizeRefusesAValueNestedPastMaxDepth(t *testing.T) {
	t.Parallel()
	var v any = json.Number("1")
	for range MaxDepth + 1 {
		v = []any{v}
	}
	if _, err := Marshal(v, Line); err == nil {
		t.Fatal("Marshal past the limit succeeded")
	}
	if _, err := Normalize(v); err == nil || !strings.Contains(err.Error(), "nesting too deep") {
		t.Errorf("Normalize past the limit = %v; want the encoder's nesting too deep", err)
	}
	if IsNormalized(v) {
		t.Error("IsNormalized of a value nested past the limit = true")
	}
}

// A json.Number literal that is not a JSON number has no round trip:
// Normalize gives the encoder's error rather than handing it back.
func TestNormalizeRefusesAnInvalidNumberLiteral(t *testing.T) {
	t.Parallel()
	for _, n := range []json.Number{"0x1", "", "1e", "+1"} {
		if got, err := Normalize(map[string]any{"n": n}); err == nil || !strings.Contains(err.Error(), "invalid number literal") {
			t.Errorf("Normalize(json.Number(%q)) = %v, %v; want the encoder's invalid number literal", n, got, err)
		}
	}
}

// An object key that is not UTF-8 is written with U+FFFD, so it reads
// back as another key: the object is not in Normalize's form.
func TestIsNormalizedObjectRefusesAKeyThatIsNotUTF8(t *testing.T) {
	t.Parallel()
	m := map[string]any{"k\xfe": json.Number("1")}
	if IsNormalizedObject(m) || IsNormalized(m) {
		t.Error("IsNormalized of an object with a key that is not UTF-8 = true")
	}
	if n, err := NormalizeObject(m); err != nil || n["k\uFFFD"] != json.Number("1") {
		t.Errorf("NormalizeObject = %v, %v; want the key as U+FFFD", n, err)
	}
}

package pyval

import (
	"encoding/json"
	"reflect"
	"testing"
)

// ast.literal_eval("1, 2") == (1, 2): a tuple needs no parentheses in an
// expression (also "True," and "'a', 'b'"). parse_json's literal fallback
// turns the tuple into a list.
func TestLiteralBareTuple(t *testing.T) {
	for src, want := range map[string]any{
		"1, 2":       []any{int64(1), int64(2)},
		"True,":      []any{true},
		"'a', 'b'":   []any{"a", "b"},
		"(1, 2), 3 ": []any{[]any{int64(1), int64(2)}, int64(3)},
	} {
		got, err := ParseLiteral(src)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("ParseLiteral(%q) = %#v, %v; want %#v", src, got, err, want)
		}
	}
}

// ast.literal_eval keeps ints past int64 exact; the package keeps such ints
// as a json.Number of their digits (LoadsJSON does), so that str(),
// repr() and json.dumps() write them. ParseLiteral turns them into floats.
func TestLiteralBigIntKeepsDigits(t *testing.T) {
	for src, want := range map[string]string{
		"[12345678901234567890123, 'a']": "[12345678901234567890123, 'a']",
		"{'n': 0x1FFFFFFFFFFFFFFFFF}":    "{'n': 590295810358705651711}",
	} {
		got, err := ParseLiteral(src)
		if err != nil {
			t.Fatalf("ParseLiteral(%q): %v", src, err)
		}
		if r := Repr(got); r != want {
			t.Errorf("Repr(ParseLiteral(%q)) = %s, want %s", src, r, want)
		}
	}
	v, _ := ParseLiteral("12345678901234567890123")
	if _, ok := v.(json.Number); !ok {
		t.Errorf("ParseLiteral(big int) = %T %v, want json.Number", v, v)
	}
}

// ast.literal_eval accepts one unary +/- on a number constant only:
// "--1", "+-1" and "-True" are "malformed node or string".
func TestLiteralNestedUnaryIsAnError(t *testing.T) {
	for _, src := range []string{"--1", "+-1", "-True", "[- -2]"} {
		if got, err := ParseLiteral(src); err == nil {
			t.Errorf("ParseLiteral(%q) = %#v, want an error (malformed node or string)", src, got)
		}
	}
}

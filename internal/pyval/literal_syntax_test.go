package pyval

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// ast.literal_eval parses its text with ast.parse(mode="eval"), so the
// text is ONE logical line: outside brackets a newline after a token ends
// it, and only blank or comment lines may follow. parse_json falls back to
// literal_eval and fails with "Invalid JSON" then, so an LLM reply of two
// quoted lines must not become one concatenated string. Newlines inside
// brackets, backslash continuations and blank lines around the literal
// are fine. Every case checked with CPython 3.11.
func TestParseLiteralOneLogicalLine(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]any{
		"'a' \\\n'b'":             "ab", // a continuation joins the lines
		"\n1\n":                   int64(1),
		" \n\t\n1\n \n":           int64(1), // blank lines may hold spaces
		"['a',\n'b']":             []any{"a", "b"},
		"('a'\n'b')":              "ab",
		"{'k':\n1}\n\n":           map[string]any{"k": int64(1)},
		"# c\n1":                  int64(1),
		"1 # c\n# d\n":            int64(1),
		"1,\n":                    []any{int64(1)},
		"(1\n+2j)":                "(1+2j)",
		"[-\n1]":                  []any{int64(-1)},
		"set(\n)":                 "set()",
		"\r\n1\r\n":               int64(1),
		"['a',\r'b']":             []any{"a", "b"}, // a lone \r is a newline too
		"'''a\r\nb'''":            "a\nb",          // also in a string
		"\f1":                     int64(1),
		"{'a': 1,\n 'b': [\n]}\n": map[string]any{"a": int64(1), "b": []any{}},
	} {
		got, err := ParseLiteral(in)
		if err != nil || !Equal(got, want) {
			t.Errorf("ParseLiteral(%q) = %s, %v; want %s", in, Repr(got), err, Repr(want))
		}
	}
	for in, msg := range map[string]string{
		"'a'\n'b'":             "newline outside brackets",
		"\"Hello\"\n\"World\"": "newline outside brackets",
		"'x'\r\n'y'":           "newline outside brackets",
		"1,\n2":                "newline outside brackets",
		"'a',\n'b'":            "newline outside brackets",
		"1\n,2":                "newline outside brackets",
		"1\n+2j":               "newline outside brackets",
		"1 +\n2j":              "newline outside brackets",
		"-\n1":                 "newline outside brackets",
		"1 # c\n2":             "newline outside brackets",
		"'a' \\\n\n'b'":        "newline outside brackets",
		"\n 1":                 "unexpected indent",
		"1\n ":                 "unexpected indent",
		"1 \\\n":               "unexpected EOF",
		"\v1":                  "non-printable character U+000B",
		"[1\v]":                "non-printable character U+000B",
		"1 # \x00":             "null bytes",
	} {
		if got, err := ParseLiteral(in); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseLiteral(%q) = %s, %v; want an error containing %q", in, Repr(got), err, msg)
		}
	}
}

// ast.literal_eval takes a unary +/- only directly on an int, float or
// complex constant, and the right operand of the one allowed sum (1+2j)
// must be such a constant too. Parentheses make no AST node, so "-(1)"
// and "1+(2j)" are fine, but "-(-1)" and "-(1+2j)" put an operation under
// the sign: ValueError("malformed node or string") in CPython 3.11.
func TestParseLiteralSignOnlyOnNumber(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]any{
		"-(1)":                       int64(-1),
		"-((1))":                     int64(-1),
		"+(1.5)":                     1.5,
		"- ( 1\n)":                   int64(-1),
		"-(0x10)":                    int64(-16),
		"-(99999999999999999999999)": "-99999999999999999999999",
		"-(1j)":                      "(-0-1j)",
		"-(1)+2j":                    "(-1+2j)",
		"(-1)+2j":                    "(-1+2j)",
		"1+(2j)":                     "(1+2j)",
		"1-((2j))":                   "(1-2j)",
	} {
		got, err := ParseLiteral(in)
		if err != nil || Str(got) != Str(want) {
			t.Errorf("ParseLiteral(%q) = %s, %v; want %s", in, Repr(got), err, Repr(want))
		}
	}
	for _, in := range []string{"-(-1)", "+(-1)", "-(+1.5)", "-(1+2j)", "-(True)", "-(1,)", "--1", "1+-2j", "1+(-2j)", "-(...)", "-'a'"} {
		if got, err := ParseLiteral(in); err == nil {
			t.Errorf("ParseLiteral(%q) = %s, want an error (malformed node or string)", in, Repr(got))
		}
	}
}

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

// TestParseLiteralStringEscapesOctalAndUnknown pins two escape rules of
// Python string literals (parse_json's last resort, so an LLM's
// single-quoted dict reads as Python reads it): an octal escape takes up
// to three digits ('\101' is 'A', '\1011' is 'A1', '\400' is U+0100), and
// an unknown escape keeps its backslash ('\q' is two characters).
func TestParseLiteralStringEscapesOctalAndUnknown(t *testing.T) {
	t.Parallel()
	got, err := ParseLiteral(`['\101|\1011|\7', '\400', '\q|\d']`)
	want := []any{"A|A1|\x07", "\u0100", `\q|\d`}
	if err != nil || !Equal(got, want) {
		t.Errorf("ParseLiteral(escapes) = %#v, %v; want %#v", got, err, want)
	}
}

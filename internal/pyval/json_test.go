package pyval

import (
	"math"
	"testing"
)

func TestDumps(t *testing.T) {
	t.Parallel()
	v := map[string]any{"b": []any{1.0, int64(2), "é\n"}, "a": nil, "c": map[string]any{}}
	tests := []struct {
		opts DumpOptions
		want string
	}{
		{Compact, `{"a":null,"b":[1.0,2,"é\n"],"c":{}}`},
		{Spaced, `{"a": null, "b": [1.0, 2, "é\n"], "c": {}}`},
		{DumpOptions{Indent: 2}, "{\n  \"a\": null,\n  \"b\": [\n    1.0,\n    2,\n    \"é\\n\"\n  ],\n  \"c\": {}\n}"},
	}
	for _, tt := range tests {
		got, err := Dumps(v, tt.opts)
		if err != nil || got != tt.want {
			t.Errorf("Dumps(%+v) = %q, %v; want %q", tt.opts, got, err, tt.want)
		}
	}
	if got, _ := Dumps([]any{math.NaN(), math.Inf(-1), 1e-7}, Compact); got != "[NaN,-Infinity,1e-07]" {
		t.Errorf("Dumps specials = %q", got)
	}
}

func TestLoadsJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    any
		wantErr bool
	}{
		{` {"a": [1, 2.0, -3e2, true, null, "x\u00e9"]} `, map[string]any{"a": []any{int64(1), 2.0, -300.0, true, nil, "xé"}}, false},
		{`NaN`, math.NaN(), false},
		{`[1,]`, nil, true},
		{`{"a":1} x`, nil, true},
		{`01`, nil, true},
		{`"\ud83d\ude00"`, "😀", false},
	}
	for _, tt := range tests {
		got, err := LoadsJSON(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("LoadsJSON(%q) err = %v", tt.in, err)
			continue
		}
		if f, ok := tt.want.(float64); ok && math.IsNaN(f) {
			if g, ok := got.(float64); !ok || !math.IsNaN(g) {
				t.Errorf("LoadsJSON(NaN) = %v", got)
			}
			continue
		}
		if !tt.wantErr && !Equal(got, tt.want) {
			t.Errorf("LoadsJSON(%q) = %#v", tt.in, got)
		}
	}
	v, end, err := RawDecodeJSON(`{"a": 1} trailing`)
	if err != nil || end != 8 || !Equal(v, map[string]any{"a": int64(1)}) {
		t.Errorf("RawDecodeJSON = %v, %d, %v", v, end, err)
	}
}

func TestParseLiteral(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    any
		wantErr bool
	}{
		{`{'a': True, 'b': None, 'c': (1, 2.5), 'd': [-3, 'x']}`, map[string]any{"a": true, "b": nil, "c": []any{int64(1), 2.5}, "d": []any{int64(-3), "x"}}, false},
		{`{1: 'one'}`, map[string]any{"1": "one"}, false},
		{`'it\'s' "ok"`, "it's" + "ok", false},
		{`[0x10, 1_000, 1e3, .5]`, []any{int64(16), int64(1000), 1000.0, 0.5}, false},
		{`{'a',}`, "{'a'}", false}, // a set: str(), as the reference's _jsonify makes it
		{`"""multi
line"""`, "multi\nline", false},
		{`foo`, nil, true},
		{`[1, 2`, nil, true},
		{`(1)`, int64(1), false},
		{`()`, []any{}, false},
	}
	for _, tt := range tests {
		got, err := ParseLiteral(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("ParseLiteral(%q) err = %v", tt.in, err)
			continue
		}
		if !tt.wantErr && !Equal(got, tt.want) {
			t.Errorf("ParseLiteral(%q) = %#v", tt.in, got)
		}
	}
}

func TestFormatString(t *testing.T) {
	t.Parallel()
	kw := map[string]any{
		"name": "Ada", "n": int64(42), "f": 3.14159, "b": true, "obj": map[string]any{"k": []any{"v0"}},
		"big": int64(1234567), "w": int64(8), "neg": -2.5, "none": nil,
	}
	tests := []struct {
		tmpl    string
		want    string
		wantErr bool
	}{
		{"Hello {name}!", "Hello Ada!", false},
		{"{{literal}} {n}", "{literal} 42", false},
		{"{f:.2f}|{f:8.3f}|{n:05d}|{n:x}|{n:#x}|{n:b}", "3.14|   3.142|00042|2a|0x2a|101010", false},
		{"{name:>6}|{name:<6}|{name:^7}|{name:*^7}", "   Ada|Ada   |  Ada  |**Ada**", false},
		{"{big:,}|{big:_}|{f:e}|{f:.3g}|{f:%}", "1,234,567|1_234_567|3.141590e+00|3.14|314.159000%", false},
		{"{b}|{b:d}|{b:>3}|{none}", "True|1|  1|None", false},
		{"{obj[k][0]}|{obj!r}", "v0|{'k': ['v0']}", false},
		{"{name!r}|{f:{w}.2f}", "'Ada'|    3.14", false},
		{"{neg:+.1f}|{n:+d}|{n: d}|{neg:=+8.2f}", "-2.5|+42| 42|-   2.50", false},
		{"{f}|{f:.3}|{n:.2f}", "3.14159|3.14|42.00", false},
		{"{missing}", "", true},
		{"{}", "", true},
		{"{0}", "", true},
		{"a } b", "", true},
		{"{name", "", true},
		{"{obj.k}", "", true},
		{"{none:>5}", "", true},
		{"{n:s}", "", true},
	}
	for _, tt := range tests {
		got, err := FormatString(tt.tmpl, kw)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("FormatString(%q) = %q, %v; want %q", tt.tmpl, got, err, tt.want)
		}
	}
}

// Guards json.dumps' short escapes for control characters: \b and \f, and
// \u00XX for the others.
func TestDumpsControlCharacterEscapes(t *testing.T) {
	t.Parallel()
	got, err := Dumps("\b\f\x01\x1f", Spaced)
	if want := `"\b\f\u0001\u001f"`; err != nil || got != want {
		t.Errorf("Dumps = %s, %v; want %s", got, err, want)
	}
}

// Guards the default item separator when pretty-printing: "," for any
// Indent > 0 (json.dumps(..., indent=1)), so lines carry no trailing space.
func TestDumpsIndentOneUsesCommaItemSeparator(t *testing.T) {
	t.Parallel()
	got, err := Dumps([]any{int64(1), map[string]any{"a": int64(2)}}, DumpOptions{Indent: 1})
	if want := "[\n 1,\n {\n  \"a\": 2\n }\n]"; err != nil || got != want {
		t.Errorf("Dumps(indent=1) = %q, %v; want %q", got, err, want)
	}
}

// TestLoadsJSONDuplicateKeyLastWins pins json.loads' handling of a key
// written twice in one object: the last value wins (CPython builds the
// dict in order), which a model repeating a field relies on.
func TestLoadsJSONDuplicateKeyLastWins(t *testing.T) {
	t.Parallel()
	got, err := LoadsJSON(`{"a": {"x": 1}, "b": 0, "a": [2]}`)
	want := map[string]any{"a": []any{int64(2)}, "b": int64(0)}
	if err != nil || !Equal(got, want) {
		t.Errorf("LoadsJSON(duplicate key) = %v, %v; want %v", got, err, want)
	}
}

// TestLoadsJSONWhitespaceIsTheFourJSONCharacters pins json.loads'
// whitespace: space, tab, newline and carriage return only. A form feed or
// vertical tab (Python str.isspace, not JSON whitespace) is an error at
// its position, as CPython reports it.
func TestLoadsJSONWhitespaceIsTheFourJSONCharacters(t *testing.T) {
	t.Parallel()
	if got, err := LoadsJSON(" \t\n\r1 \r\n"); err != nil || got != int64(1) {
		t.Errorf("LoadsJSON(JSON whitespace around 1) = %v, %v; want 1", got, err)
	}
	for _, tt := range []struct{ in, want string }{
		{"\f1", "Expecting value: line 1 column 1 (char 0)"},
		{"[1,\f2]", "Expecting value: line 1 column 4 (char 3)"},
		{"\v1", "Expecting value: line 1 column 1 (char 0)"},
	} {
		if _, err := LoadsJSON(tt.in); err == nil || err.Error() != tt.want {
			t.Errorf("LoadsJSON(%q) error = %v; want %q", tt.in, err, tt.want)
		}
	}
}

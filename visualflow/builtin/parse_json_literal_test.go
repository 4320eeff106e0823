package builtin

import "testing"

// parse_json's last resort is a Python-literal parse (ast.literal_eval),
// then values JSON has no type for become their str() (spec §6.7). LLM
// replies often use `...` as a placeholder in Python-style dicts, and
// literal_eval accepts it as Ellipsis, which becomes "Ellipsis".
func TestParseJSONEllipsisLiteral(t *testing.T) {
	runNodeCases(t, []nodeCase{
		{name: "ellipsis in dict", typ: "parse_json",
			in:   obj{"text": "{'tasks': [...], 'done': False}"},
			want: obj{"tasks": arr{"Ellipsis"}, "done": false}},
		{name: "ellipsis in list", typ: "parse_json",
			in: obj{"text": "[1, ...]"}, want: arr{int64(1), "Ellipsis"}},
		{name: "bare ellipsis", typ: "parse_json",
			in: obj{"text": "..."}, want: obj{"value": "Ellipsis"}},
		{name: "set with ellipsis", typ: "parse_json",
			in: obj{"text": "{...}"}, want: obj{"value": "{Ellipsis}"}},
		{name: "ellipsis as key", typ: "parse_json",
			in: obj{"text": "{...: (..., 1)}"}, want: obj{"Ellipsis": arr{"Ellipsis", int64(1)}}},
		{name: "negated ellipsis is an error", typ: "parse_json",
			in: obj{"text": "[-...]"}, wantErr: "Invalid JSON"},
		// break_object parses a string object with parse_json first.
		{name: "break_object on python literal with ellipsis", typ: "break_object",
			data: map[string]any{"breakConfig": map[string]any{"selectedPaths": []any{"done"}}},
			in:   obj{"object": "{'tasks': [...], 'done': True}"},
			want: obj{"done": true}},
	})
}

// \N{NAME} escapes in the str literals of the Python-literal fallback are
// decoded as Python decodes them (names case-insensitive); an unknown name
// is an error, as Python's SyntaxError.
func TestParseJSONNamedUnicodeEscape(t *testing.T) {
	runNodeCases(t, []nodeCase{
		{name: "named escape", typ: "parse_json",
			in: obj{"text": `{'sep': '\N{EM DASH}'}`}, want: obj{"sep": "—"}},
		{name: "named escape case-insensitive", typ: "parse_json",
			in: obj{"text": `['\N{bullet} item']`}, want: arr{"• item"}},
		{name: "unknown name is an error", typ: "parse_json",
			in: obj{"text": `{'x': '\N{NO SUCH CHARACTER NAME}'}`}, wantErr: `\N{NO SUCH CHARACTER NAME}`},
	})
}

// The literal fallback reads one logical line, as ast.literal_eval does:
// two quoted lines are not implicitly concatenated (Python fails with
// "Invalid JSON"), while a literal spread over lines inside brackets
// parses.
func TestParseJSONLiteralIsOneLogicalLine(t *testing.T) {
	runNodeCases(t, []nodeCase{
		{name: "two quoted lines", typ: "parse_json",
			in: obj{"text": "\"Hello\"\n\"World\""}, wantErr: "Invalid JSON"},
		{name: "bare tuple across lines", typ: "parse_json",
			in: obj{"text": "'a',\n'b'"}, wantErr: "Invalid JSON"},
		{name: "dict across lines", typ: "parse_json",
			in: obj{"text": "{'a': 1,\n 'b': (2,\n 3)}"}, want: obj{"a": int64(1), "b": arr{int64(2), int64(3)}}},
	})
}

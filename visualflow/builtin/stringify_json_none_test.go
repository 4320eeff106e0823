package builtin

import "testing"

// stringify_json of a string whose JSON-ish parse is null. The reference
// (abstractruntime/rendering/json_stringify.py, parse_strings=True)
// replaces the value only by a parse that is not None:
//
//	if parse_strings and isinstance(value, str) and value.strip():
//	    parsed = _parse_jsonish_maybe(value)
//	    if parsed is not None:
//	        value = parsed
//
// so the Python literal "None" (as LLMs and str() of a null write it)
// stays the string and renders as "\"None\"". Ours rendered "null".
// ("null" itself already stayed a string: the strict parse's null falls
// through to the literal parse, which fails.) parse_json keeps its own
// behaviour: "None" parses to null there.
func TestStringifyJSONKeepsStringWhoseParseIsNone(t *testing.T) {
	runNodeCases(t, []nodeCase{
		{name: "None none mode", typ: "stringify_json", in: obj{"value": "None", "mode": "none"}, want: `"None"`},
		{name: "None minified", typ: "stringify_json", in: obj{"value": " None ", "mode": "minified"}, want: `" None "`},
		{name: "fenced None", typ: "stringify_json", in: obj{"value": "```\nNone\n```", "mode": "none"}, want: "\"```\\nNone\\n```\""},
		{name: "null string", typ: "stringify_json", in: obj{"value": "null", "mode": "none"}, want: `"null"`},
		{name: "None wrapped", typ: "parse_json", in: obj{"text": "None"}, want: obj{"value": nil}},
		{name: "None unwrapped", typ: "parse_json", in: obj{"text": "None", "wrap_scalar": false}, want: nil},
	})
}

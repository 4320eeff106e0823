package builtin

import "testing"

// Corner cases of the pure builtins. Every expected
// value is what CPython 3.11 returns for the reference builtin
// (AbstractRuntime visual/builtins.py) on the same inputs.

// compare on arrays follows Python's list ordering (Appendix B
// "Ordering"): elements are first matched with ==, so equal null/object
// elements do not make the comparison unsupported, and the first unequal
// pair decides (an incomparable pair there gives false).
func TestCompareListsWithNullAndObjects(t *testing.T) {
	runNodeCases(t, []nodeCase{
		{name: "[None] <= [None]", typ: "compare", in: obj{"a": arr{nil}, "b": arr{nil}, "op": "<="}, want: true},
		{name: "[None] < [None]", typ: "compare", in: obj{"a": arr{nil}, "b": arr{nil}, "op": "<"}, want: false},
		{name: "[{}] <= [{}]", typ: "compare", in: obj{"a": arr{obj{}}, "b": arr{obj{}}, "op": "<="}, want: true},
		{name: "first pair decides", typ: "compare", in: obj{"a": arr{int64(1), "a"}, "b": arr{int64(2), "b"}, "op": "<"}, want: true},
		{name: "incomparable deciding pair", typ: "compare", in: obj{"a": arr{int64(1), "a"}, "b": arr{int64(1), int64(2)}, "op": "<"}, want: false},
		{name: "equal objects then ints", typ: "compare", in: obj{"a": arr{obj{"a": int64(1)}, int64(1)}, "b": arr{obj{"a": int64(1)}, int64(2)}, "op": "<"}, want: true},
		{name: "nested null vs int", typ: "compare", in: obj{"a": arr{arr{int64(1), nil}}, "b": arr{arr{int64(1), int64(2)}}, "op": "<"}, want: false},
		{name: "prefix is smaller", typ: "compare", in: obj{"a": arr{int64(1)}, "b": arr{1.0, nil}, "op": "<"}, want: true},
	})
}

// parse_json's fallbacks (§6.7): the raw-decode pass runs before the
// Python-literal pass, so "{'a': [1, 2]}" yields the inner array; literal
// keys that are not strings become str(key) after Python's own key
// merging (1 == 1.0); non-JSON literals (sets, Ellipsis, complex, bytes)
// become str().
func TestParseJSONLiteralCorners(t *testing.T) {
	runNodeCases(t, []nodeCase{
		{name: "raw decode wins over literal", typ: "parse_json", in: obj{"text": "{'a': [1, 2]}"}, want: arr{int64(1), int64(2)}},
		{name: "equal keys merge", typ: "parse_json", in: obj{"text": "{1: 'a', 1.0: 'b'}"}, want: obj{"1": "b"}},
		{name: "bool key", typ: "parse_json", in: obj{"text": "{True: 1}"}, want: obj{"True": int64(1)}},
		{name: "tuple key", typ: "parse_json", in: obj{"text": "{(1, 2): 3}"}, want: obj{"(1, 2)": int64(3)}},
		{name: "nested tuples", typ: "parse_json", in: obj{"text": "{'t': (1, (2,))}"}, want: obj{"t": arr{int64(1), arr{int64(2)}}}},
		{name: "set of equal numbers", typ: "parse_json", in: obj{"text": "{1, 1.0, True}"}, want: obj{"value": "{1}"}},
		{name: "ellipsis", typ: "parse_json", in: obj{"text": "..."}, want: obj{"value": "Ellipsis"}},
		{name: "complex", typ: "parse_json", in: obj{"text": "1+2j"}, want: obj{"value": "(1+2j)"}},
		{name: "bytes", typ: "parse_json", in: obj{"text": "b'by'"}, want: obj{"value": "b'by'"}},
	})
}

// format (§6.5): a bool with a format spec is formatted as an int
// (bool inherits int.__format__), without a spec or through !s as True.
func TestFormatBoolSpecs(t *testing.T) {
	runNodeCases(t, []nodeCase{
		{name: "bool specs", typ: "format",
			in:   obj{"template": "{b:>5}|{b}|{b!s:>5}|{b:d}", "values": obj{"b": true}},
			want: "    1|True| True|1"},
	})
}

// string_template (§6.5): the placeholder's surrounding \s* may hold
// newlines (Python's \s), and floats render with str() ("1.0").
func TestTemplateNewlineInsideBraces(t *testing.T) {
	runNodeCases(t, []nodeCase{
		{name: "newlines around path", typ: "string_template",
			in: obj{"template": "[{{\n a \n}}]", "vars": obj{"a": 1.0}}, want: "[1.0]"},
	})
}

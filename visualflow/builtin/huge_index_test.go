package builtin

import "testing"

// Dotted-path lookups with an index too large for an int behave as the
// Python reference does. Expected values are what the reference
// (visual/builtins.py) returns for the same inputs.

// A bracket index too large for an int (items[99999999999999999999]):
// the reference's _path_tokens turns it into a Python int (unbounded),
// which _get_path finds out of range, so the path resolves to None
// (spec Appendix B dotted paths: "out-of-range ... → null"). Ours dropped
// the token when strconv.Atoi overflowed and resolved the rest of the path,
// returning the list itself: `get` yielded the list instead of the default,
// string_template rendered the list, array_dedup de-duplicated on the
// wrong value.
func TestHugeBracketIndexIsOutOfRange(t *testing.T) {
	items := arr{int64(1), int64(2)}
	runNodeCases(t, []nodeCase{
		{name: "get", typ: "get",
			in:   obj{"object": obj{"items": items}, "key": "items[99999999999999999999]", "default": "d"},
			want: obj{"value": "d"}},
		{name: "string_template", typ: "string_template",
			in:   obj{"template": "x={{ items[99999999999999999999] }}", "vars": obj{"items": items}},
			want: "x="},
		{name: "array_dedup", typ: "array_dedup",
			in: obj{"array": arr{obj{"a": arr{int64(1)}}, obj{"a": arr{int64(1)}, "b": int64(2)}},
				"key": "a[99999999999999999999]"},
			want: arr{obj{"a": arr{int64(1)}}, obj{"a": arr{int64(1)}, "b": int64(2)}}},
	})
}

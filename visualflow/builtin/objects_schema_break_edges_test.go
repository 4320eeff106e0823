package builtin

import "testing"

// Spec §6.7 edit_json_schema, as the reference's _add_json_schema_fields:
// a $defs entry the schema already has is kept over the additions' one, a
// property with an empty name is not added, and a base "required" that
// ends up empty (only blank names) is removed. Breaks if the additions'
// definition replaces the base's, the "" property is added, or the
// blank-only required list is kept.
func TestEditJSONSchemaKeepsBaseDefsDropsEmptyNames(t *testing.T) {
	base := obj{"type": "object", "properties": obj{"a": obj{"type": "string"}}, "required": arr{" "},
		"$defs": obj{"D": obj{"type": "string"}}}
	add := obj{"properties": obj{"": obj{"type": "number"}, "b": obj{"type": "integer"}},
		"$defs": obj{"D": obj{"type": "number"}, "E": obj{"type": "boolean"}}}
	want := obj{"schema": obj{"type": "object",
		"properties": obj{"a": obj{"type": "string"}, "b": obj{"type": "integer"}},
		"$defs":      obj{"D": obj{"type": "string"}, "E": obj{"type": "boolean"}}}}
	runNodeCases(t, []nodeCase{
		{name: "defs, empty names, blank required", typ: "edit_json_schema",
			in: obj{"schema": base, "_literalValue": add}, want: want},
	})
}

// Spec §6.7 break_object: a string object that parses to a scalar is
// wrapped as parse_json wraps it, so the path "value" reads it. Breaks if
// the parsed scalar is used unwrapped (every path → null).
func TestBreakObjectReadsAParsedScalarUnderValue(t *testing.T) {
	data := obj{"breakConfig": obj{"selectedPaths": arr{"value"}}}
	runNodeCases(t, []nodeCase{
		{name: "scalar string", typ: "break_object", data: data, in: obj{"object": "42"}, want: obj{"value": int64(42)}},
	})
}

package builtin

import "testing"

// Array indexes written with decimal digits of any script.
//
// Dot/bracket paths (visualflow.md §6.7 "a numeric segment also indexes
// arrays", Appendix B "Dotted paths" (a) and (b)) are resolved in the
// reference by visual/builtins.py `_path_tokens`/`_get_path` (get,
// string_template, array_dedup) and by executor.py `_create_break_object_handler`
// `_get_path` (break_object). Both treat a segment as an array index when
// Python's `str.isdigit()` holds and convert it with `int()`; the bracket
// form is matched by the regex `\[(\d+)\]`, whose `\d` is Unicode-aware.
// So "l.١" and "l[١]" (U+0661 ARABIC-INDIC DIGIT ONE) read l[1] in Python:
//
//	>>> _get_path({"l": [5, 6, 7]}, "l.١")   # -> 6
//	>>> _get_path({"l": [5, 6, 7]}, "l[١]")  # -> 6
//
// (Only decimal digits, category Nd: int() refuses superscripts, for which
// isdigit holds.)
func TestPathIndexesInAnyScriptsDecimalDigits(t *testing.T) {
	o := obj{"l": arr{int64(5), int64(6), int64(7)}}
	runNodeCases(t, []nodeCase{
		{name: "get dotted arabic-indic digit", typ: "get", in: obj{"object": o, "key": "l.١", "default": "D"}, want: obj{"value": int64(6)}},
		{name: "get bracket arabic-indic digit", typ: "get", in: obj{"object": o, "key": "l[١]", "default": "D"}, want: obj{"value": int64(6)}},
		{name: "get fullwidth digit", typ: "get", in: obj{"object": o, "key": "l.２", "default": "D"}, want: obj{"value": int64(7)}},
		{name: "template dotted arabic-indic digit", typ: "string_template", in: obj{"template": "{{l.١}}", "vars": o}, want: "6"},
		{name: "break_object arabic-indic digit", typ: "break_object", in: obj{"object": o},
			data: obj{"breakConfig": obj{"selectedPaths": arr{"l.١"}}}, want: obj{"l.١": int64(6)}},
	})
}

// Attribute access on numbers in `format`.
//
// visualflow.md §6.5 `format` is Python `str.format(**values)`
// (visual/builtins.py `string_format`: `template.format(**values)`).
// str.format resolves `{name.attr}` with getattr, and JSON numbers do have
// attributes in Python: int/bool `.real`, `.imag`, `.numerator`,
// `.denominator`, float `.real`, `.imag`:
//
//	>>> '{n.real}|{n.imag}|{n.numerator}|{n.denominator}|{f.real}|{f.imag}|{b.real}|{f.real:.2f}'.format(n=5, f=1.5, b=True)
//	'5|0|5|1|1.5|0.0|1|1.50'
func TestFormatReadsNumberAttributes(t *testing.T) {
	runNodeCases(t, []nodeCase{
		{name: "int attrs", typ: "format",
			in:   obj{"template": "{n.real}|{n.imag}|{n.numerator}|{n.denominator}", "values": obj{"n": int64(5)}},
			want: "5|0|5|1"},
		{name: "float attrs", typ: "format",
			in:   obj{"template": "{f.real}|{f.imag}|{f.real:.2f}", "values": obj{"f": 1.5}},
			want: "1.5|0.0|1.50"},
		{name: "bool real", typ: "format",
			in:   obj{"template": "{b.real}", "values": obj{"b": true}},
			want: "1"},
	})
}

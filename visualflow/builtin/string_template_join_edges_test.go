package builtin

import "testing"

// Spec §6.5 string_template join(<delim>): the delimiter is trimmed before
// its quotes are stripped, and join makes a non-array its str(), which a
// following json filter then quotes. Breaks if the delimiter keeps its
// spaces or join leaves a non-array value unchanged.
func TestStringTemplateJoinTrimsDelimiterAndStringifiesScalars(t *testing.T) {
	vars := obj{"xs": arr{"a", "b"}, "n": int64(5)}
	runNodeCases(t, []nodeCase{
		{name: "spaced delimiter", typ: "string_template",
			in: obj{"template": "{{ xs | join( - ) }}", "vars": vars}, want: "a-b"},
		{name: "join then json", typ: "string_template",
			in: obj{"template": "{{ n | join | json }}", "vars": vars}, want: `"5"`},
	})
}

// Spec §6.5 substring: a negative end counts from the end, as a Python
// slice. Breaks if a negative end is read as "to the end".
func TestSubstringNegativeEndCountsFromTheEnd(t *testing.T) {
	runNodeCases(t, []nodeCase{
		{name: "end -1", typ: "substring", in: obj{"text": "héllo", "start": int64(0), "end": int64(-1)}, want: "héll"},
	})
}

package builtin

import "testing"

// Spec §6.5 string_template: a null value renders as "" before any filter
// runs, as the reference's _render_expr returns "" for None before
// applying filters, so "| json" of a null is "" and not the text "null".
func TestStringTemplateNullSkipsFilters(t *testing.T) {
	runNodeCases(t, []nodeCase{
		{name: "null through json", typ: "string_template",
			in:   obj{"template": "[{{ x | json }}]", "vars": obj{"x": nil}},
			want: "[]"},
		{name: "null through join then json", typ: "string_template",
			in:   obj{"template": "[{{ x | join(-) | json }}]", "vars": obj{"x": nil}},
			want: "[]"},
		{name: "value through json", typ: "string_template",
			in:   obj{"template": "[{{ x | json }}]", "vars": obj{"x": arr{int64(1)}}},
			want: "[[1]]"},
	})
}

package builtin

import (
	"regexp"
	"testing"

	"github.com/abstractframework/abstractgateway/internal/pyval"
)

// string_template: the reference's placeholder pattern is
// re.compile(r"\{\{\s*(.*?)\s*\}\}") on a str, where \s is Unicode
// whitespace (NBSP, U+3000, U+2003, \v, \x1c-\x1f, \x85 …). Go's RE2 \s is
// only [\t\n\f\r ], and `.` stops at "\n", so a placeholder whose closing
// "}}" sits on a new line indented with a non-ASCII space (text pasted from
// a word processor, a web page, CJK input) is matched by Python but left
// verbatim by Go, and the next placeholder is still replaced: the rendered
// prompt differs. Spec §6.5 string_template ("Replaces every {{ expr }}").
func TestStringTemplateUnicodeWhitespaceAroundExpr(t *testing.T) {
	vars := obj{"name": "Ada", "b": "B"}
	runNodeCases(t, []nodeCase{
		{name: "nbsp indent before closing braces", typ: "string_template",
			in: obj{"template": "Hi {{ name\n\u00a0\u00a0}}!", "vars": vars}, want: "Hi Ada!"},
		{name: "ideographic space", typ: "string_template",
			in: obj{"template": "{{ name\n\u3000}}", "vars": vars}, want: "Ada"},
		{name: "vertical tab", typ: "string_template",
			in: obj{"template": "{{ name\n\v}}", "vars": vars}, want: "Ada"},
		{name: "em space then another placeholder", typ: "string_template",
			in: obj{"template": "{{name\n\u2003}} and {{ b }}", "vars": vars}, want: "Ada and B"},
	})
}

// pySpace matches exactly the code points Python's str.isspace() accepts
// (pyval.Strip removes exactly those), over every code point.
func TestPySpaceClassIsPythonIsspace(t *testing.T) {
	re := regexp.MustCompile(`^` + pySpace + `$`)
	for r := rune(0); r <= 0x10ffff; r++ {
		if r >= 0xd800 && r <= 0xdfff {
			continue
		}
		s := string(r)
		if want := pyval.Strip(s) == ""; re.MatchString(s) != want {
			t.Errorf("U+%04X: class matches %v, str.isspace() is %v", r, !want, want)
		}
	}
}

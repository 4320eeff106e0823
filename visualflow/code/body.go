package code

import (
	"regexp"
	"strings"

	"github.com/abstractframework/abstractgateway/internal/pyval"
)

var keywords = map[string]bool{
	"False": true, "None": true, "True": true, "and": true, "as": true, "assert": true, "async": true,
	"await": true, "break": true, "class": true, "continue": true, "def": true, "del": true, "elif": true,
	"else": true, "except": true, "finally": true, "for": true, "from": true, "global": true, "if": true,
	"import": true, "in": true, "is": true, "lambda": true, "nonlocal": true, "not": true, "or": true,
	"pass": true, "raise": true, "return": true, "try": true, "while": true, "with": true, "yield": true,
	"load": true,
}

var nonIdent = regexp.MustCompile(`[^A-Za-z0-9_]`)

// Ident sanitises a pin id into a local variable name (§6.9): characters
// outside [A-Za-z0-9_] become '_', a leading digit gets a "p_" prefix, a
// keyword gets a '_' suffix, empty becomes "param".
func Ident(s string) string {
	s = nonIdent.ReplaceAllString(s, "_")
	switch {
	case s == "":
		return "param"
	case s[0] >= '0' && s[0] <= '9':
		s = "p_" + s
	}
	if keywords[s] {
		s += "_"
	}
	return s
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// FunctionName returns name when it is an identifier, else "transform".
func FunctionName(name string) string {
	if identRE.MatchString(name) && !keywords[name] {
		return name
	}
	return "transform"
}

// BuildBody generates the module for a body-only code node:
// def <fn>(_input): with one local per parameter, then the indented body
// (an empty body returns _input). As Python's wrapper, the body is first
// dedented (textwrap.dedent) and stripped, and CRLF line ends become LF.
// A tab in a line's indentation counts as four spaces (editors' habit;
// Python would count up to the next multiple of eight); tabs elsewhere,
// in string literals, are kept.
func BuildBody(fn, body string, params []string) string {
	var b strings.Builder
	b.WriteString("def " + fn + "(_input):\n")
	for _, p := range params {
		b.WriteString("    " + Ident(p) + " = _input.get(" + quote(p) + ")\n")
	}
	body = strings.ReplaceAll(pyval.Strip(dedent(body)), "\r\n", "\n")
	if body == "" {
		b.WriteString("    return _input\n")
		return b.String()
	}
	for _, line := range strings.Split(body, "\n") {
		text := strings.TrimLeft(line, " \t")
		indent := strings.ReplaceAll(line[:len(line)-len(text)], "\t", "    ")
		b.WriteString("    " + indent + text + "\n")
	}
	return b.String()
}

// dedent is Python's textwrap.dedent: lines of only spaces and tabs
// become empty, and the longest leading whitespace common to the other
// lines is removed from them.
func dedent(s string) string {
	lines := strings.Split(s, "\n")
	margin, found := "", false
	for i, l := range lines {
		ws := l[:len(l)-len(strings.TrimLeft(l, " \t"))]
		switch {
		case len(ws) == len(l):
			lines[i] = ""
		case !found:
			margin, found = ws, true
		default:
			n := 0
			for n < len(margin) && n < len(ws) && margin[n] == ws[n] {
				n++
			}
			margin = margin[:n]
		}
	}
	if margin == "" {
		return strings.Join(lines, "\n")
	}
	for i, l := range lines {
		lines[i] = strings.TrimPrefix(l, margin)
	}
	return strings.Join(lines, "\n")
}

// quote writes s as a Starlark string literal. A carriage return is
// escaped as a newline is: Starlark reads a raw one as a line break inside
// the string (a pin id "a\rb" made every run a syntax error).
func quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", `\r`).Replace(s) + `"`
}

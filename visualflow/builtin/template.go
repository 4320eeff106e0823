package builtin

import (
	"regexp"
	"strings"

	"github.com/abstractframework/abstractgateway/internal/pyval"
)

// pySpace is a regexp class of the code points Python's str.isspace()
// accepts.
const pySpace = `[\t-\r \x1c-\x1f\x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}]`

var (
	// Python's \s on a str is str.isspace(): RE2's \s is ASCII only, so
	// the class spells out the rest (NBSP, U+3000, \v, U+001C–U+001F…).
	placeholderRE = regexp.MustCompile(`\{\{` + pySpace + `*(.*?)` + pySpace + `*\}\}`)
	joinFilterRE  = regexp.MustCompile(`^join\((.*)\)$`)
)

// stringTemplateNode replaces every {{ path | filter | … }} in the template
// with the value at path in vars (dot/bracket path), after filters (json,
// join(<delim>), trim, lower, upper; unknown filters ignored). Missing or
// null values render as "".
func stringTemplateNode(_ *Env, inputs map[string]any) (any, error) {
	raw := inputs["template"]
	tmpl := ""
	if pyval.Truthy(raw) {
		tmpl = pyval.Str(raw)
	}
	vars, _ := inputs["vars"].(map[string]any)
	if vars == nil {
		vars = map[string]any{}
	}
	var firstErr error
	out := placeholderRE.ReplaceAllStringFunc(tmpl, func(m string) string {
		expr := placeholderRE.FindStringSubmatch(m)[1]
		s, err := renderTemplateExpr(vars, expr)
		if err != nil && firstErr == nil {
			firstErr = err
		}
		return s
	})
	if firstErr != nil {
		return nil, firstErr
	}
	return out, nil
}

func renderTemplateExpr(vars map[string]any, expr string) (string, error) {
	parts := strings.Split(expr, "|")
	for i := range parts {
		parts[i] = pyval.Strip(parts[i])
	}
	value, ok := pyval.GetPath(vars, parts[0])
	if !ok || value == nil {
		return "", nil
	}
	for _, f := range parts[1:] {
		f = pyval.Strip(f)
		switch {
		case f == "":
		case f == "json":
			s, err := pyval.Dumps(value, pyval.Spaced)
			if err != nil {
				return "", err
			}
			value = s
		case strings.HasPrefix(f, "join"):
			delim := ", "
			if m := joinFilterRE.FindStringSubmatch(f); m != nil {
				d := pyval.Strip(m[1])
				if d != "" && ((d[0] == '"' && d[len(d)-1] == '"') || (d[0] == '\'' && d[len(d)-1] == '\'')) {
					d = d[1:max(1, len(d)-1)]
				}
				delim = d
			}
			if list, ok := value.([]any); ok {
				items := make([]string, len(list))
				for i, x := range list {
					items[i] = strOr(x)
				}
				value = strings.Join(items, delim)
			} else {
				value = strOr(value)
			}
		case f == "trim":
			value = pyval.Strip(strOr(value))
		case f == "lower":
			value = pyval.Lower(strOr(value))
		case f == "upper":
			value = pyval.Upper(strOr(value))
		}
	}
	return strOr(value), nil
}

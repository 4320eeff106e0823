package builtin

import (
	"strings"
	"unicode/utf8"

	"github.com/abstractframework/abstractgateway/internal/pyval"
)

// formatToolResultsNode renders tool results as "- <sig> [<STATUS>] : <obs>"
// lines. The signature's primary argument is picked in the key order of
// primaryKeyOrder, from the host tool catalogue when there is one.
func formatToolResultsNode(env *Env, inputs map[string]any) (any, error) {
	raw := inputs["tool_results"]
	if raw == nil {
		raw = inputs["results"]
	}
	var catalogue func(string) (map[string]any, bool)
	if env != nil {
		catalogue = env.ToolSpec
	}
	var lines []string
	for _, it := range listOf(raw) {
		item, ok := it.(map[string]any)
		if !ok {
			continue
		}
		lines = append(lines, formatToolResult(item, catalogue))
	}
	return pyval.Strip(strings.Join(lines, "\n")), nil
}

func formatToolResult(item map[string]any, catalogue func(string) (map[string]any, bool)) string {
	name := ""
	if pyval.Truthy(item["name"]) {
		name = pyval.Str(item["name"])
	} else if pyval.Truthy(item["tool"]) {
		name = pyval.Str(item["tool"])
	}
	name = pyval.Strip(name)
	if name == "" {
		name = "tool"
	}
	success, isBool := item["success"].(bool)
	errText := ""
	if e := item["error"]; e != nil {
		errText = pyval.Strip(pyval.Str(e))
	}
	output := item["output"]
	args, _ := item["arguments"].(map[string]any)
	outObj, _ := output.(map[string]any)

	status := "DONE"
	if isBool && success {
		status = "SUCCESS"
	} else if isBool {
		status = "FAILURE"
	}
	var obs string
	switch {
	case isBool && !success && errText != "":
		obs = errText
	case outObj != nil:
		if r, ok := nonBlank(outObj["rendered"]); ok {
			obs = r
		} else {
			obs = formatPrimary(outObj, 420)
		}
	case output == nil:
		obs = "(no output)"
	default:
		obs = clampText(oneLine(pyval.Str(output)), 420)
	}
	if pyval.Strip(obs) == "" {
		obs = "(no output)"
	}
	return "- " + toolSignature(name, primaryKeyOrder(catalogue, name, args, outObj), args, outObj) + " [" + status + "] : " + obs
}

// primaryKeyOrder is the order in which a call's primary argument is
// looked for, as the reference's _primary_key_order: the tool spec's
// required_args, else its parameters' keys, else (no spec, or one naming
// no key) the call's argument keys then its output keys. The reference's
// catalogue is the host's default tool specs; ours is the host's
// CompileOptions.ToolSpec. Go objects have no insertion order, so the
// parameters' and the call's keys are taken sorted.
func primaryKeyOrder(catalogue func(string) (map[string]any, bool), tool string, args, out map[string]any) []string {
	var order []string
	if catalogue != nil {
		if spec, ok := catalogue(tool); ok {
			if req, ok := spec["required_args"].([]any); ok {
				for _, k := range req {
					if s, ok := k.(string); ok && pyval.Strip(s) != "" {
						order = append(order, pyval.Strip(s))
					}
				}
			}
			if len(order) == 0 {
				if params, ok := spec["parameters"].(map[string]any); ok {
					for _, k := range pyval.SortedKeys(params) {
						if t := pyval.Strip(k); t != "" {
							order = append(order, t)
						}
					}
				}
			}
		}
	}
	if len(order) > 0 {
		return order
	}
	seen := map[string]bool{}
	for _, m := range []map[string]any{args, out} {
		for _, k := range pyval.SortedKeys(m) {
			if t := pyval.Strip(k); t != "" && !seen[k] {
				seen[k] = true
				order = append(order, t)
			}
		}
	}
	return order
}

// toolSignature is "tool(<primary>)": the first non-null value under the
// order's keys in the arguments, else in the output; "tool()" if none.
func toolSignature(tool string, order []string, args, out map[string]any) string {
	for _, m := range []map[string]any{args, out} {
		for _, k := range order {
			if v, ok := m[k]; ok && v != nil {
				return tool + "(" + formatPrimary(v, 160) + ")"
			}
		}
	}
	return tool + "()"
}

// formatPrimary renders a value for a signature or observation.
func formatPrimary(v any, maxLen int) string {
	switch x := v.(type) {
	case nil:
		return ""
	case bool:
		if x {
			return "true"
		}
		return "false"
	case string:
		return clampText(oneLine(x), maxLen)
	}
	if pyval.IsNumber(v) {
		return pyval.Str(v)
	}
	s, err := pyval.Dumps(v, pyval.Compact)
	if err != nil {
		s = pyval.Str(v)
	}
	return clampText(oneLine(s), maxLen)
}

// oneLine joins the non-blank lines of s with spaces.
func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	var parts []string
	for _, p := range strings.Split(s, "\n") {
		if pyval.Strip(p) != "" {
			parts = append(parts, p)
		}
	}
	return pyval.Strip(strings.Join(parts, " "))
}

// clampText trims s and cuts it to maxLen code points (ending in "…").
func clampText(s string, maxLen int) string {
	s = pyval.Strip(s)
	if utf8.RuneCountInString(s) <= maxLen {
		return s
	}
	return string([]rune(s)[:max(0, maxLen-1)]) + "…"
}

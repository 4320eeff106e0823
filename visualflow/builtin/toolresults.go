package builtin

import (
	"strings"
	"unicode/utf8"

	"github.com/abstractframework/abstractgateway/internal/pyval"
)

// formatToolResultsNode renders tool results as "- <sig> [<STATUS>] : <obs>"
// lines. Without a host tool catalogue the primary-argument key order is
// the argument keys then the output keys, each sorted (the reference uses
// the tool spec's required args and dict insertion order).
func formatToolResultsNode(_ *Env, inputs map[string]any) (any, error) {
	raw := inputs["tool_results"]
	if raw == nil {
		raw = inputs["results"]
	}
	var lines []string
	for _, it := range listOf(raw) {
		item, ok := it.(map[string]any)
		if !ok {
			continue
		}
		lines = append(lines, formatToolResult(item))
	}
	return pyval.Strip(strings.Join(lines, "\n")), nil
}

func formatToolResult(item map[string]any) string {
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
	return "- " + toolSignature(name, args, outObj) + " [" + status + "] : " + obs
}

func toolSignature(tool string, args, out map[string]any) string {
	var order []string
	seen := map[string]bool{}
	for _, m := range []map[string]any{args, out} {
		for _, k := range pyval.SortedKeys(m) {
			if t := pyval.Strip(k); t != "" && !seen[k] {
				seen[k] = true
				order = append(order, t)
			}
		}
	}
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

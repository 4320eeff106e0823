package builtin

import (
	"fmt"
	"sort"
	"strings"

	"github.com/abstractframework/abstractgateway/internal/pyval"
)

// concatNode joins str() of the declared input pins present in the inputs
// (null → "") with concatConfig.separator (default " ", escapes decoded).
// Without pin metadata the keys are ordered: single letters a..z, then the
// other keys, each group sorted.
func concatNode(env *Env, inputs map[string]any) (any, error) {
	sep := " " // also for a separator that is not a string, as in the reference
	if s, ok := configObject(env, "concatConfig")["separator"].(string); ok {
		sep = pyval.DecodeEscapes(s)
	}
	order := pinOrder(env, inputs)
	if len(order) == 0 {
		order = defaultConcatOrder(inputs)
	}
	var parts []string
	for _, pin := range order {
		if v, ok := inputs[pin]; ok {
			parts = append(parts, strOr(v))
		}
	}
	return strings.Join(parts, sep), nil
}

func defaultConcatOrder(inputs map[string]any) []string {
	var letters, others []string
	for _, k := range publicKeys(inputs) {
		if len(k) == 1 && k[0] >= 'a' && k[0] <= 'z' {
			letters = append(letters, k)
		} else {
			others = append(others, k)
		}
	}
	sort.Strings(letters)
	return append(letters, others...)
}

// splitNode splits text on a literal delimiter, then optionally trims parts
// and drops empty ones (both default true, by truthiness).
func splitNode(_ *Env, inputs map[string]any) (any, error) {
	text := strOr(get(inputs, "text", ""))
	delim := pyval.DecodeEscapes(strOr(get(inputs, "delimiter", ",")))
	var parts []string
	if delim == "" {
		if text != "" {
			parts = []string{text}
		}
	} else {
		maxsplit := -1
		if raw, ok := inputs["maxsplit"]; ok && raw != nil {
			if n, err := pyval.ToInt(raw); err == nil && n >= 0 {
				maxsplit = int(min(n, int64(len(text)+1)))
			}
		}
		parts = pyval.SplitN(text, delim, maxsplit)
	}
	trim := pyval.Truthy(get(inputs, "trim", true))
	dropEmpty := pyval.Truthy(get(inputs, "drop_empty", true))
	out := []any{}
	for _, p := range parts {
		if trim {
			p = pyval.Strip(p)
		}
		if dropEmpty && p == "" {
			continue
		}
		out = append(out, p)
	}
	return out, nil
}

// joinNode joins str() of the items (null → "") with str(delimiter); a
// null delimiter becomes "None" (quirk Q7).
func joinNode(_ *Env, inputs map[string]any) (any, error) {
	items := listOf(inputs["items"])
	delim := pyval.DecodeEscapes(pyval.Str(get(inputs, "delimiter", ",")))
	parts := make([]string, len(items))
	for i, it := range items {
		parts[i] = strOr(it)
	}
	return strings.Join(parts, delim), nil
}

// formatNode applies Python str.format(**values) when values is an object
// (missing values = {}); otherwise returns the template unchanged.
func formatNode(_ *Env, inputs map[string]any) (any, error) {
	tmpl := pyval.Str(get(inputs, "template", ""))
	values, ok := get(inputs, "values", map[string]any{}).(map[string]any)
	if !ok {
		return tmpl, nil
	}
	out, err := pyval.FormatString(tmpl, values)
	if err != nil {
		return nil, fmt.Errorf("format: %w", err)
	}
	return out, nil
}

func uppercaseNode(_ *Env, inputs map[string]any) (any, error) {
	return pyval.Upper(pyval.Str(get(inputs, "text", ""))), nil
}

func lowercaseNode(_ *Env, inputs map[string]any) (any, error) {
	return pyval.Lower(pyval.Str(get(inputs, "text", ""))), nil
}

func trimNode(_ *Env, inputs map[string]any) (any, error) {
	return pyval.Strip(pyval.Str(get(inputs, "text", ""))), nil
}

// substringNode: str(text)[int(start):int(end)] on code points.
func substringNode(_ *Env, inputs map[string]any) (any, error) {
	text := pyval.Str(get(inputs, "text", ""))
	start, err := pyval.ToIndex(get(inputs, "start", int64(0)))
	if err != nil {
		return nil, fmt.Errorf("substring: input 'start': %w", err)
	}
	var end *int64
	if raw := inputs["end"]; raw != nil {
		e, err := pyval.ToIndex(raw)
		if err != nil {
			return nil, fmt.Errorf("substring: input 'end': %w", err)
		}
		end = &e
	}
	return pyval.Slice(text, start, end), nil
}

// lengthNode: number of code points of str(text) (an int).
func lengthNode(_ *Env, inputs map[string]any) (any, error) {
	return int64(pyval.Len(pyval.Str(get(inputs, "text", "")))), nil
}

func isEmptyStringNode(_ *Env, inputs map[string]any) (any, error) {
	return strOr(inputs["text"]) == "", nil
}

func containsNode(_ *Env, inputs map[string]any) (any, error) {
	pattern := strOr(inputs["pattern"])
	if pattern == "" {
		return false, nil
	}
	return strings.Contains(strOr(inputs["text"]), pattern), nil
}

// replaceNode replaces pattern in text; mode selects first/all/first n.
func replaceNode(_ *Env, inputs map[string]any) (any, error) {
	text := strOr(inputs["text"])
	pattern := strOr(inputs["pattern"])
	if pattern == "" {
		return text, nil
	}
	repl := strOr(inputs["replacement"])
	rawMode, hasMode := inputs["mode"]
	mode := "all"
	if hasMode && rawMode != nil {
		mode = pyval.Lower(pyval.Strip(pyval.Str(rawMode)))
	}
	switch mode {
	case "first", "once", "1":
		return pyval.Replace(text, pattern, repl, 1), nil
	case "all", "*", "global":
		return pyval.Replace(text, pattern, repl, -1), nil
	}
	n, err := pyval.ToInt(rawMode)
	if err != nil || n < 0 {
		return pyval.Replace(text, pattern, repl, -1), nil
	}
	return pyval.Replace(text, pattern, repl, int(min(n, int64(len(text)+1)))), nil
}

package builtin

import (
	"errors"
	"fmt"
	"strings"

	"github.com/abstractframework/abstractgateway/internal/pyval"
)

// errParseJSONEmpty is the reference's text for a missing or blank input.
var errParseJSONEmpty = errors.New("parse_json requires a non-empty 'text' input.")

// parseJSONNode parses JSON-ish text (see parseJSONish). Objects and arrays
// pass through; scalars are wrapped as {"value": x} unless wrap_scalar is
// falsy.
func parseJSONNode(_ *Env, inputs map[string]any) (any, error) {
	raw := inputs["text"]
	var parsed any
	switch raw.(type) {
	case map[string]any, []any:
		parsed = raw
	case nil:
		return nil, errParseJSONEmpty
	default:
		var err error
		if parsed, err = parseJSONish(pyval.Str(raw)); err != nil {
			return nil, err
		}
	}
	if pyval.Truthy(get(inputs, "wrap_scalar", true)) {
		return wrapScalar(parsed), nil
	}
	return parsed, nil
}

func wrapScalar(v any) any {
	switch v.(type) {
	case map[string]any, []any:
		return v
	}
	return map[string]any{"value": v}
}

// parseJSONish removes a Markdown code fence, then tries strict JSON, then
// a raw decode at each of the first 64 '{'/'[' positions, then a Python
// literal. As in the reference, a strict parse yielding null falls through
// to the later attempts.
func parseJSONish(text string) (any, error) {
	s := stripCodeFence(text)
	s = pyval.Strip(s)
	if s == "" {
		return nil, errParseJSONEmpty
	}
	parsed, err := pyval.LoadsJSON(s)
	if err != nil {
		parsed = nil
		starts := 0
		for i := 0; i < len(s) && starts < 64; i++ {
			if s[i] != '{' && s[i] != '[' {
				continue
			}
			starts++
			if v, _, err := pyval.RawDecodeJSON(s[i:]); err == nil {
				parsed = v
				break
			}
		}
	}
	if parsed != nil {
		return parsed, nil
	}
	v, err := pyval.ParseLiteral(s)
	if err != nil {
		return nil, fmt.Errorf("Invalid JSON: %w", err)
	}
	return v, nil
}

// stripCodeFence removes a leading ```lang line and the last ``` fence.
func stripCodeFence(text string) string {
	s := pyval.Strip(text)
	if !strings.HasPrefix(s, "```") {
		return s
	}
	nl := strings.IndexByte(s, '\n')
	if nl < 0 {
		return pyval.Strip(strings.Trim(s, "`"))
	}
	body := s[nl+1:]
	if end := strings.LastIndex(body, "```"); end >= 0 {
		body = body[:end]
	}
	return pyval.Strip(body)
}

// stringifyJSONNode renders value as JSON text: mode minified (no spaces),
// none (single line, ", " and ": ") or beautify (indent, default 2).
// Without mode, indent <= 0 means minified. A non-blank string value is
// first parsed JSON-ish and kept as a string when unparsable or when the
// parse is null (the reference replaces it only by a non-None parse, so
// "None" stays the string "None"). Keys are always sorted.
func stringifyJSONNode(_ *Env, inputs map[string]any) (any, error) {
	value := inputs["value"]
	if s, ok := value.(string); ok && pyval.Strip(s) != "" {
		if parsed, err := parseJSONish(s); err == nil && parsed != nil {
			value = parsed
		}
	}
	mode := ""
	if m, ok := inputs["mode"].(string); ok {
		mode = pyval.Lower(pyval.Strip(m))
	}
	indent, hasIndent := int64(0), false
	if raw := inputs["indent"]; raw != nil {
		if n, err := pyval.ToInt(raw); err == nil {
			indent, hasIndent = n, true
		}
	}
	if mode == "" {
		mode = "beautify"
		if hasIndent && indent <= 0 {
			mode = "minified"
		}
	}
	var opts pyval.DumpOptions
	switch mode {
	case "minified":
		opts = pyval.Compact
	case "none":
		opts = pyval.Spaced
	default:
		n := 2
		if hasIndent && indent > 0 {
			n = int(min(indent, 64))
		}
		opts = pyval.DumpOptions{Indent: n, ItemSep: ",", KeySep: ": "}
	}
	out, err := pyval.Dumps(value, opts)
	if err != nil {
		return nil, fmt.Errorf("stringify_json: %w", err)
	}
	return out, nil
}

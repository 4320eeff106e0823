package pyval

import (
	"fmt"
	"math"
	"strings"
)

// FormatString implements Python's template.format(**kwargs): {name}
// placeholders with optional [key]/[index] item access, !s/!r/!a
// conversions and a format spec (which may itself contain {name} fields);
// {{ and }} are literal braces. Positional fields ({} or {0}) are errors,
// since there are no positional arguments. Attribute access ({a.b}) reads
// the data attributes Python's numbers have (real, imag, and numerator and
// denominator of ints and bools); any other is an error, as JSON objects,
// lists and strings have none that format can print.
func FormatString(template string, kwargs map[string]any) (string, error) {
	return formatString(template, kwargs, 0)
}

func formatString(template string, kwargs map[string]any, depth int) (string, error) {
	if depth > 1 { // CPython's budget: a spec's fields may not hold fields with fields
		return "", fmt.Errorf("Max string recursion exceeded")
	}
	var b strings.Builder
	for i := 0; i < len(template); {
		c := template[i]
		switch c {
		case '{':
			if i+1 < len(template) && template[i+1] == '{' {
				b.WriteByte('{')
				i += 2
				continue
			}
			end, err := fieldEnd(template, i)
			if err != nil {
				return "", err
			}
			out, err := renderField(template[i+1:end], kwargs, depth)
			if err != nil {
				return "", err
			}
			if b.Len()+len(out) > MaxFormattedLen {
				return "", fmt.Errorf("formatted text would pass this runtime's limit of %d bytes", MaxFormattedLen)
			}
			b.WriteString(out)
			i = end + 1
		case '}':
			if i+1 < len(template) && template[i+1] == '}' {
				b.WriteByte('}')
				i += 2
				continue
			}
			return "", fmt.Errorf("Single '}' encountered in format string")
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), nil
}

// fieldEnd returns the index of the '}' closing the field opened at start.
func fieldEnd(t string, start int) (int, error) {
	depth := 0
	inBracket := false
	for j := start + 1; j < len(t); j++ {
		switch t[j] {
		case '[':
			inBracket = true
		case ']':
			inBracket = false
		case '{':
			if !inBracket {
				depth++
			}
		case '}':
			if inBracket {
				continue
			}
			if depth == 0 {
				return j, nil
			}
			depth--
		}
	}
	return 0, fmt.Errorf("Single '{' encountered in format string")
}

func renderField(field string, kwargs map[string]any, depth int) (string, error) {
	name, spec := field, ""
	conv := byte(0)
	// The field name ends at the first '!' or ':' outside brackets.
	inBracket := false
	for j := 0; j < len(field); j++ {
		switch field[j] {
		case '[':
			inBracket = true
		case ']':
			inBracket = false
		case '!', ':':
			if inBracket {
				continue
			}
			name = field[:j]
			rest := field[j:]
			if rest[0] == '!' {
				if len(rest) < 2 {
					return "", fmt.Errorf("end of string while looking for conversion specifier")
				}
				conv = rest[1]
				rest = rest[2:]
				if rest != "" && rest[0] != ':' {
					return "", fmt.Errorf("expected ':' after conversion specifier")
				}
			}
			spec = strings.TrimPrefix(rest, ":")
			j = len(field)
		}
	}
	v, err := lookupField(name, kwargs)
	if err != nil {
		return "", err
	}
	switch conv {
	case 0:
	case 's':
		v = Str(v)
	case 'r':
		v = Repr(v)
	case 'a':
		v = ASCII(v)
	default:
		return "", fmt.Errorf("Unknown conversion specifier %c", conv)
	}
	if strings.Contains(spec, "{") {
		if spec, err = formatString(spec, kwargs, depth+1); err != nil {
			return "", err
		}
	}
	return FormatValue(v, spec)
}

// numberAttribute returns the data attribute attr of a JSON number or
// bool as Python has it: a bool is the int 0 or 1, an int is its own real
// part and numerator with imag 0 and denominator 1, a float is its own
// real part with imag 0.0.
func numberAttribute(v any, attr string) (any, bool) {
	var n int64
	switch x := v.(type) {
	case bool:
		if x {
			n = 1
		}
	case int64:
		n = x
	case int:
		n = int64(x)
	case float64:
		switch attr {
		case "real":
			return x, true
		case "imag":
			return 0.0, true
		}
		return nil, false
	default:
		return nil, false
	}
	switch attr {
	case "real", "numerator":
		return n, true
	case "imag":
		return int64(0), true
	case "denominator":
		return int64(1), true
	}
	return nil, false
}

// lookupField resolves "name[key][0]" against kwargs.
func lookupField(field string, kwargs map[string]any) (any, error) {
	name := field
	rest := ""
	if j := strings.IndexAny(field, ".["); j >= 0 {
		name, rest = field[:j], field[j:]
	}
	if name == "" || isDigits(name) {
		return nil, fmt.Errorf("Replacement index %s out of range for positional args tuple", cmpOr(name, "0"))
	}
	v, ok := kwargs[name]
	if !ok {
		return nil, fmt.Errorf("KeyError: %s", QuoteString(name))
	}
	for rest != "" {
		if rest[0] == '.' {
			attr := rest[1:]
			if j := strings.IndexAny(attr, ".["); j >= 0 {
				attr = attr[:j]
			}
			nv, ok := numberAttribute(v, attr)
			if !ok {
				return nil, fmt.Errorf("'%s' object has no attribute %s", TypeName(v), QuoteString(attr))
			}
			v, rest = nv, rest[1+len(attr):]
			continue
		}
		end := strings.IndexByte(rest, ']')
		if end < 0 {
			return nil, fmt.Errorf("Missing ']' in format string")
		}
		key := rest[1:end]
		rest = rest[end+1:]
		if rest != "" && rest[0] != '.' && rest[0] != '[' {
			return nil, fmt.Errorf("Only '.' or '[' may follow ']' in format field specifier")
		}
		// A key of decimal digits is an int, any other key a str, as
		// str.format parses them: d[0] looks up the int 0, which no JSON
		// object (string keys only) has.
		isInt := key != "" && strings.Trim(key, "0123456789") == ""
		idx, fits := parseIndex(key)
		if !fits {
			idx = math.MaxInt // beyond any list or string
		}
		switch c := v.(type) {
		case map[string]any:
			if isInt {
				return nil, fmt.Errorf("KeyError: %s", cmpOr(strings.TrimLeft(key, "0"), "0"))
			}
			e, ok := c[key]
			if !ok {
				return nil, fmt.Errorf("KeyError: %s", QuoteString(key))
			}
			v = e
		case []any:
			if !isInt {
				return nil, fmt.Errorf("list indices must be integers or slices, not str")
			}
			if idx >= len(c) {
				return nil, fmt.Errorf("IndexError: list index out of range")
			}
			v = c[idx]
		case string:
			if !isInt {
				return nil, fmt.Errorf("string indices must be integers, not 'str'")
			}
			runes := []rune(c)
			if idx >= len(runes) {
				return nil, fmt.Errorf("IndexError: string index out of range")
			}
			v = string(runes[idx])
		default:
			return nil, fmt.Errorf("'%s' object is not subscriptable", TypeName(v))
		}
	}
	return v, nil
}

func isDigits(s string) bool {
	_, ok := parseIndex(s)
	return ok
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

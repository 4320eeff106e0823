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
// As in CPython, brackets hide '{', '}', ':' and '!' in the field name
// only: once the name ends (at a ':' or '!' outside brackets) a '[' is an
// ordinary character of the conversion or the format spec, a fill
// ("{x:[^5}") for one.
func fieldEnd(t string, start int) (int, error) {
	depth := 0
	inName, inBracket := true, false
	for j := start + 1; j < len(t); j++ {
		c := t[j]
		if inName {
			switch {
			case c == '[':
				inBracket = true
				continue
			case c == ']':
				inBracket = false
				continue
			case inBracket:
				continue
			case c == ':' || c == '!':
				inName = false
				continue
			}
		}
		switch c {
		case '{':
			depth++
		case '}':
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
// bool as Python has it: a bool is the int 0 or 1, an int (one past int64
// too) is its own real part and numerator with imag 0 and denominator 1,
// a float is its own real part with imag 0.0.
func numberAttribute(v any, attr string) (any, bool) {
	n := asNumber(v)
	var self any
	switch {
	case n.big:
		self = v // its digits
	case n.kind == intNumber || n.kind == boolNumber:
		self = n.i
	case n.kind == floatNumber:
		switch attr {
		case "real":
			return n.f, true
		case "imag":
			return 0.0, true
		}
		return nil, false
	default:
		return nil, false
	}
	switch attr {
	case "real", "numerator":
		return self, true
	case "imag":
		return int64(0), true
	case "denominator":
		return int64(1), true
	}
	return nil, false
}

// fieldIndex reads a key of a field name as str.format does: decimal
// digits of any script are an int (isInt), past Py_ssize_t an error.
func fieldIndex(key string) (idx int, isInt bool, err error) {
	if key == "" {
		return 0, false, nil
	}
	for _, r := range key {
		d, ok := decimalDigit(r)
		if !ok {
			return 0, false, nil
		}
		if idx > (math.MaxInt-d)/10 {
			return 0, true, fmt.Errorf("Too many decimal digits in format string")
		}
		idx = idx*10 + d
	}
	return idx, true, nil
}

// lookupField resolves "name[key][0]" against kwargs.
func lookupField(field string, kwargs map[string]any) (any, error) {
	name := field
	rest := ""
	if j := strings.IndexAny(field, ".["); j >= 0 {
		name, rest = field[:j], field[j:]
	}
	if strings.Contains(stripBrackets(field), "{") {
		return nil, fmt.Errorf("unexpected '{' in field name")
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
			if attr == "" {
				return nil, fmt.Errorf("Empty attribute in format string")
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
		if key == "" {
			return nil, fmt.Errorf("Empty attribute in format string")
		}
		rest = rest[end+1:]
		if rest != "" && rest[0] != '.' && rest[0] != '[' {
			return nil, fmt.Errorf("Only '.' or '[' may follow ']' in format field specifier")
		}
		// A key of decimal digits (of any script) is an int, any other
		// key a str, as str.format parses them: d[0] looks up the int 0,
		// which no JSON object (string keys only) has.
		idx, isInt, err := fieldIndex(key)
		if err != nil {
			return nil, err
		}
		switch c := v.(type) {
		case map[string]any:
			if isInt {
				return nil, fmt.Errorf("KeyError: %d", idx)
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

// stripBrackets is a field name without what its brackets hold.
func stripBrackets(field string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(field, '[')
		if i < 0 {
			b.WriteString(field)
			return b.String()
		}
		b.WriteString(field[:i])
		j := strings.IndexByte(field[i:], ']')
		if j < 0 {
			return b.String()
		}
		field = field[i+j+1:]
	}
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

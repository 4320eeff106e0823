package pyval

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Str returns Python's str(v): strings unchanged, None/True/False, ints in
// decimal, floats via FormatFloat, and lists/dicts as their Python repr
// (dict keys sorted).
func Str(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return Repr(v)
}

// StrOrEmpty is the reference's way of reading a name or text from an
// input, `x if isinstance(x, str) else str(x or "")`: a string as it is, a
// falsy value (None, 0, False, an empty list or object) as "", anything
// else as str(x).
func StrOrEmpty(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	if !Truthy(v) {
		return ""
	}
	return Str(v)
}

// ASCII returns Python's ascii(v): repr(v) with every non-ASCII character
// escaped as \xhh, \uhhhh or \Uhhhhhhhh.
func ASCII(v any) string {
	r := Repr(v)
	var b strings.Builder
	for _, c := range r {
		switch {
		case c < utf8.RuneSelf:
			b.WriteRune(c)
		case c < 0x100:
			fmt.Fprintf(&b, `\x%02x`, c)
		case c < 0x10000:
			fmt.Fprintf(&b, `\u%04x`, c)
		default:
			fmt.Fprintf(&b, `\U%08x`, c)
		}
	}
	return b.String()
}

// Repr returns Python's repr(v). Strings are quoted with Python's rules;
// dict keys are emitted in sorted order.
func Repr(v any) string {
	var b strings.Builder
	writeRepr(&b, v)
	return b.String()
}

func writeRepr(b *strings.Builder, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("None")
	case bool:
		if x {
			b.WriteString("True")
		} else {
			b.WriteString("False")
		}
	case string:
		b.WriteString(QuoteString(x))
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			writeRepr(b, e)
		}
		b.WriteByte(']')
	case map[string]any:
		b.WriteByte('{')
		for i, k := range SortedKeys(x) {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(QuoteString(k))
			b.WriteString(": ")
			writeRepr(b, x[k])
		}
		b.WriteByte('}')
	case []string:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(QuoteString(e))
		}
		b.WriteByte(']')
	default:
		n := asNumber(v)
		switch {
		case n.big:
			b.WriteString(n.digits)
		case n.kind == intNumber:
			b.WriteString(strconv.FormatInt(n.i, 10))
		case n.kind == floatNumber:
			b.WriteString(FormatFloat(n.f))
		default:
			fmt.Fprintf(b, "%v", v)
		}
	}
}

// SortedKeys returns the keys of m in sorted order.
func SortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// QuoteString returns Python's repr of a string: single quotes unless the
// string contains a single quote and no double quote; backslash, the quote,
// \n, \r, \t escaped; other non-printable characters as \xhh, \uhhhh or
// \Uhhhhhhhh.
func QuoteString(s string) string {
	quote := byte('\'')
	if strings.Contains(s, "'") && !strings.Contains(s, "\"") {
		quote = '"'
	}
	var b strings.Builder
	b.WriteByte(quote)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			fmt.Fprintf(&b, `\x%02x`, s[i])
			i++
			continue
		}
		i += size
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == rune(quote):
			b.WriteByte('\\')
			b.WriteByte(quote)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == ' ' || (r >= 0x20 && r < 0x7f):
			b.WriteRune(r)
		case r < 0x7f || !unicode.IsPrint(r):
			switch {
			case r < 0x100:
				fmt.Fprintf(&b, `\x%02x`, r)
			case r < 0x10000:
				fmt.Fprintf(&b, `\u%04x`, r)
			default:
				fmt.Fprintf(&b, `\U%08x`, r)
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte(quote)
	return b.String()
}

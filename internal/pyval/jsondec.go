package pyval

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// SyntaxError describes where JSON or Python-literal text failed to parse.
type SyntaxError struct {
	Msg    string
	Offset int // in bytes
	// Line, Column (both from 1) and Pos (in characters) locate a JSON
	// error as Python's json.JSONDecodeError does; Line is 0 for a
	// Python-literal error.
	Line, Column, Pos int
}

// Error implements error. A JSON error reads as str() of Python's
// json.JSONDecodeError, "<msg>: line L column C (char N)", which the
// reference's node errors and warnings quote.
func (e *SyntaxError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s: line %d column %d (char %d)", e.Msg, e.Line, e.Column, e.Pos)
	}
	return fmt.Sprintf("%s: char %d", e.Msg, e.Offset)
}

// jsonError is a JSON syntax error at byte offset off of doc, located as
// JSONDecodeError locates it: its line, and its column and position in
// characters (Python counts code points, not bytes).
func jsonError(doc, msg string, off int) *SyntaxError {
	before := doc[:off]
	lineStart := strings.LastIndexByte(before, '\n') + 1
	return &SyntaxError{
		Msg:    msg,
		Offset: off,
		Line:   strings.Count(before, "\n") + 1,
		Column: utf8.RuneCountInString(before[lineStart:]) + 1,
		Pos:    utf8.RuneCountInString(before),
	}
}

// LoadsJSON parses JSON text like Python's json.loads: surrounding
// whitespace is allowed, NaN/Infinity/-Infinity are accepted, integers
// become int64 (json.Number beyond its range) and other numbers float64.
func LoadsJSON(s string) (any, error) {
	if strings.HasPrefix(s, "\ufeff") { // json.loads refuses a str with a BOM
		return nil, jsonError(s, "Unexpected UTF-8 BOM (decode using utf-8-sig)", 0)
	}
	p := &jsonParser{s: s}
	p.skipWS()
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.skipWS()
	if p.i != len(p.s) {
		return nil, jsonError(p.s, "Extra data", p.i)
	}
	return v, nil
}

// RawDecodeJSON parses one JSON value at the start of s (no leading
// whitespace allowed, like json.JSONDecoder.raw_decode) and returns it with
// the byte offset where it ends; trailing text is ignored.
func RawDecodeJSON(s string) (any, int, error) {
	p := &jsonParser{s: s}
	v, err := p.value(0)
	if err != nil {
		return nil, 0, err
	}
	return v, p.i, nil
}

type jsonParser struct {
	s string
	i int
}

func (p *jsonParser) fail(msg string) error {
	return p.failAt(msg, p.i)
}

// failAt reports an error at byte offset i, for the messages Python
// places elsewhere than the parser's position (a string's opening quote,
// an escape's backslash).
func (p *jsonParser) failAt(msg string, i int) error {
	return jsonError(p.s, msg, i)
}

func (p *jsonParser) skipWS() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *jsonParser) value(depth int) (any, error) {
	if depth > 1000 {
		return nil, p.fail("nesting too deep")
	}
	if p.i >= len(p.s) {
		return nil, p.fail("Expecting value")
	}
	switch c := p.s[p.i]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		return p.str()
	case strings.HasPrefix(p.s[p.i:], "null"):
		p.i += 4
		return nil, nil
	case strings.HasPrefix(p.s[p.i:], "true"):
		p.i += 4
		return true, nil
	case strings.HasPrefix(p.s[p.i:], "false"):
		p.i += 5
		return false, nil
	case strings.HasPrefix(p.s[p.i:], "NaN"):
		p.i += 3
		return math.NaN(), nil
	case strings.HasPrefix(p.s[p.i:], "Infinity"):
		p.i += 8
		return math.Inf(1), nil
	case strings.HasPrefix(p.s[p.i:], "-Infinity"):
		p.i += 9
		return math.Inf(-1), nil
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	}
	return nil, p.fail("Expecting value")
}

func (p *jsonParser) object(depth int) (any, error) {
	p.i++ // {
	out := map[string]any{}
	p.skipWS()
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		return out, nil
	}
	for {
		p.skipWS()
		if p.i >= len(p.s) || p.s[p.i] != '"' {
			return nil, p.fail("Expecting property name enclosed in double quotes")
		}
		k, err := p.str()
		if err != nil {
			return nil, err
		}
		p.skipWS()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return nil, p.fail("Expecting ':' delimiter")
		}
		p.i++
		p.skipWS()
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		out[k] = v
		p.skipWS()
		if p.i < len(p.s) && p.s[p.i] == ',' {
			p.i++
			continue
		}
		if p.i < len(p.s) && p.s[p.i] == '}' {
			p.i++
			return out, nil
		}
		return nil, p.fail("Expecting ',' delimiter")
	}
}

func (p *jsonParser) array(depth int) (any, error) {
	p.i++ // [
	out := []any{}
	p.skipWS()
	if p.i < len(p.s) && p.s[p.i] == ']' {
		p.i++
		return out, nil
	}
	for {
		p.skipWS()
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		p.skipWS()
		if p.i < len(p.s) && p.s[p.i] == ',' {
			p.i++
			continue
		}
		if p.i < len(p.s) && p.s[p.i] == ']' {
			p.i++
			return out, nil
		}
		return nil, p.fail("Expecting ',' delimiter")
	}
}

func (p *jsonParser) number() (any, error) {
	start := p.i
	if p.s[p.i] == '-' {
		p.i++
	}
	digits := func() int {
		n := 0
		for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	if p.i < len(p.s) && p.s[p.i] == '0' {
		p.i++
	} else if digits() == 0 {
		p.i = start
		return nil, p.fail("Expecting value")
	}
	isFloat := false
	if p.i+1 < len(p.s) && p.s[p.i] == '.' && p.s[p.i+1] >= '0' && p.s[p.i+1] <= '9' {
		p.i++
		digits()
		isFloat = true
	}
	if p.i < len(p.s) && (p.s[p.i] == 'e' || p.s[p.i] == 'E') {
		save := p.i
		p.i++
		if p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			p.i = save
		} else {
			isFloat = true
		}
	}
	lit := p.s[start:p.i]
	if !isFloat {
		n, err := strconv.ParseInt(lit, 10, 64)
		if err == nil {
			return n, nil
		}
		if isRangeErr(err) {
			return json.Number(lit), nil // a Python int: its digits kept (number.big)
		}
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil && !isRangeErr(err) {
		return nil, p.fail("Invalid number")
	}
	return f, nil
}

func (p *jsonParser) str() (string, error) {
	quote := p.i
	p.i++
	var b strings.Builder
	for {
		if p.i >= len(p.s) {
			return "", p.failAt("Unterminated string starting at", quote)
		}
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			return b.String(), nil
		case c == '\\':
			if err := p.escape(&b, quote); err != nil {
				return "", err
			}
		case c < 0x20:
			return "", p.fail("Invalid control character at")
		default:
			r, size := utf8.DecodeRuneInString(p.s[p.i:])
			b.WriteRune(r)
			p.i += size
		}
	}
}

// escape decodes the escape at p.i in the string opened at quote. Errors
// sit where Python's put them: the quote for an unterminated string, the
// backslash for an unknown escape, the 'u' for a bad \uXXXX.
func (p *jsonParser) escape(b *strings.Builder, quote int) error {
	start := p.i
	if p.i+1 >= len(p.s) {
		return p.failAt("Unterminated string starting at", quote)
	}
	c := p.s[p.i+1]
	p.i += 2
	switch c {
	case '"', '\\', '/':
		b.WriteByte(c)
	case 'b':
		b.WriteByte('\b')
	case 'f':
		b.WriteByte('\f')
	case 'n':
		b.WriteByte('\n')
	case 'r':
		b.WriteByte('\r')
	case 't':
		b.WriteByte('\t')
	case 'u':
		r, ok := p.hex4()
		if !ok {
			return p.failAt("Invalid \\uXXXX escape", start+1)
		}
		if utf16.IsSurrogate(r) && strings.HasPrefix(p.s[p.i:], `\u`) {
			save := p.i
			p.i += 2
			if r2, ok := p.hex4(); ok {
				if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
					b.WriteRune(d)
					return nil
				}
			}
			p.i = save
		}
		b.WriteRune(r)
	default:
		return p.failAt("Invalid \\escape", start)
	}
	return nil
}

// hex4 reads the four hex digits of a \u escape at p.i. As CPython's
// scanner, it wants a character after them: digits that end the text
// are an invalid escape, not an unterminated string.
func (p *jsonParser) hex4() (rune, bool) {
	if p.i+4 >= len(p.s) {
		return 0, false
	}
	n, err := strconv.ParseUint(p.s[p.i:p.i+4], 16, 32)
	if err != nil {
		return 0, false
	}
	p.i += 4
	return rune(n), true
}

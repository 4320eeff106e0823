package pyval

import (
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ParseLiteral evaluates a Python literal expression, the subset of
// ast.literal_eval that LLM output uses: strings ('…', "…", triple-quoted,
// with r/u/b prefixes and implicit concatenation), ints (decimal, 0x, 0o,
// 0b, underscores), floats, True/False/None, lists, tuples, sets and dicts,
// with unary +/-. Tuples and sets become []any; dict keys are converted
// with Str when they are not strings.
func ParseLiteral(s string) (any, error) {
	p := &litParser{s: s}
	p.skip()
	v, err := p.expr(0)
	if err != nil {
		return nil, err
	}
	p.skip()
	if p.i != len(p.s) {
		return nil, p.fail("invalid syntax")
	}
	return v, nil
}

type litParser struct {
	s string
	i int
}

func (p *litParser) fail(msg string) error {
	return &SyntaxError{Msg: msg, Offset: p.i}
}

func (p *litParser) skip() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r', '\f', '\v':
			p.i++
		case '\\':
			if p.i+1 < len(p.s) && p.s[p.i+1] == '\n' {
				p.i += 2
				continue
			}
			return
		default:
			return
		}
	}
}

func (p *litParser) peek() byte {
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func (p *litParser) expr(depth int) (any, error) {
	if depth > 500 {
		return nil, p.fail("nesting too deep")
	}
	p.skip()
	c := p.peek()
	switch {
	case c == '-' || c == '+':
		p.i++
		v, err := p.expr(depth + 1)
		if err != nil {
			return nil, err
		}
		n := asNumber(v)
		if n.kind == notNumber || (n.kind == boolNumber) {
			return nil, p.fail("malformed node or string")
		}
		if c == '+' {
			return v, nil
		}
		if n.kind == floatNumber {
			return -n.f, nil
		}
		return -n.i, nil
	case c == '[':
		p.i++
		return p.seq(']', depth)
	case c == '(':
		p.i++
		return p.tuple(depth)
	case c == '{':
		p.i++
		return p.dict(depth)
	case c == '\'' || c == '"':
		return p.strings()
	case c >= '0' && c <= '9' || c == '.':
		return p.number()
	case isIdentStart(c):
		j := p.i
		for j < len(p.s) && (isIdentStart(p.s[j]) || (p.s[j] >= '0' && p.s[j] <= '9')) {
			j++
		}
		word := p.s[p.i:j]
		if j < len(p.s) && (p.s[j] == '\'' || p.s[j] == '"') && isStringPrefix(word) {
			return p.strings()
		}
		p.i = j
		switch word {
		case "True":
			return true, nil
		case "False":
			return false, nil
		case "None":
			return nil, nil
		}
		return nil, p.fail("malformed node or string: name " + strconv.Quote(word))
	}
	return nil, p.fail("invalid syntax")
}

func isIdentStart(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func isStringPrefix(w string) bool {
	switch strings.ToLower(w) {
	case "r", "u", "b", "br", "rb":
		return true
	}
	return false
}

// seq parses comma-separated expressions up to close.
func (p *litParser) seq(close byte, depth int) ([]any, error) {
	out := []any{}
	for {
		p.skip()
		if p.peek() == close {
			p.i++
			return out, nil
		}
		v, err := p.expr(depth + 1)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		p.skip()
		switch p.peek() {
		case ',':
			p.i++
		case close:
			p.i++
			return out, nil
		default:
			return nil, p.fail("invalid syntax")
		}
	}
}

// tuple parses "(…)": a parenthesised expression or a tuple.
func (p *litParser) tuple(depth int) (any, error) {
	p.skip()
	if p.peek() == ')' {
		p.i++
		return []any{}, nil
	}
	first, err := p.expr(depth + 1)
	if err != nil {
		return nil, err
	}
	p.skip()
	switch p.peek() {
	case ')':
		p.i++
		return first, nil
	case ',':
		p.i++
		rest, err := p.seq(')', depth)
		if err != nil {
			return nil, err
		}
		return append([]any{first}, rest...), nil
	}
	return nil, p.fail("invalid syntax")
}

// dict parses "{…}": a dict, a set, or {}.
func (p *litParser) dict(depth int) (any, error) {
	p.skip()
	if p.peek() == '}' {
		p.i++
		return map[string]any{}, nil
	}
	first, err := p.expr(depth + 1)
	if err != nil {
		return nil, err
	}
	p.skip()
	if p.peek() != ':' {
		// A set literal.
		switch p.peek() {
		case '}':
			p.i++
			return []any{first}, nil
		case ',':
			p.i++
			rest, err := p.seq('}', depth)
			if err != nil {
				return nil, err
			}
			return append([]any{first}, rest...), nil
		}
		return nil, p.fail("invalid syntax")
	}
	out := map[string]any{}
	key := first
	for {
		p.i++ // ':'
		v, err := p.expr(depth + 1)
		if err != nil {
			return nil, err
		}
		out[Str(key)] = v
		p.skip()
		switch p.peek() {
		case '}':
			p.i++
			return out, nil
		case ',':
			p.i++
		default:
			return nil, p.fail("invalid syntax")
		}
		p.skip()
		if p.peek() == '}' {
			p.i++
			return out, nil
		}
		if key, err = p.expr(depth + 1); err != nil {
			return nil, err
		}
		p.skip()
		if p.peek() != ':' {
			return nil, p.fail("invalid syntax")
		}
	}
}

func (p *litParser) number() (any, error) {
	j := p.i
	for j < len(p.s) {
		c := p.s[j]
		if (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '.' {
			j++
			continue
		}
		if (c == '+' || c == '-') && j > p.i && (p.s[j-1] == 'e' || p.s[j-1] == 'E') && !isPrefixedInt(p.s[p.i:j]) {
			j++
			continue
		}
		break
	}
	lit := p.s[p.i:j]
	p.i = j
	if isPrefixedInt(lit) {
		clean := strings.ReplaceAll(lit, "_", "")
		n, ok := new(big.Int).SetString(clean, 0)
		if !ok {
			return nil, p.fail("invalid number literal")
		}
		if n.IsInt64() {
			return n.Int64(), nil
		}
		f, _ := new(big.Float).SetInt(n).Float64()
		return f, nil
	}
	if i, ok := parsePyInt(lit); ok && !strings.ContainsAny(lit, "+- \t") {
		if len(lit) > 1 && lit[0] == '0' && strings.Trim(lit, "0_") != "" {
			return nil, p.fail("leading zeros in decimal integer literals are not permitted")
		}
		return i, nil
	}
	clean, ok := validDecimalFloat(lit)
	if !ok {
		return nil, p.fail("invalid number literal")
	}
	if !strings.ContainsAny(clean, ".eE") {
		// A decimal integer too large for int64.
		f, _ := strconv.ParseFloat(clean, 64)
		return f, nil
	}
	f, err := strconv.ParseFloat(clean, 64)
	if err != nil && !isRangeErr(err) {
		return nil, p.fail("invalid number literal")
	}
	return f, nil
}

func isPrefixedInt(lit string) bool {
	if len(lit) < 2 || lit[0] != '0' {
		return false
	}
	switch lit[1] {
	case 'x', 'X', 'o', 'O', 'b', 'B':
		return true
	}
	return false
}

// strings parses one or more adjacent string literals and concatenates
// them.
func (p *litParser) strings() (any, error) {
	var b strings.Builder
	for {
		s, err := p.oneString()
		if err != nil {
			return nil, err
		}
		b.WriteString(s)
		p.skip()
		c := p.peek()
		if c == '\'' || c == '"' {
			continue
		}
		if isIdentStart(c) {
			j := p.i
			for j < len(p.s) && isIdentStart(p.s[j]) {
				j++
			}
			if j < len(p.s) && (p.s[j] == '\'' || p.s[j] == '"') && isStringPrefix(p.s[p.i:j]) {
				continue
			}
		}
		return b.String(), nil
	}
}

func (p *litParser) oneString() (string, error) {
	raw := false
	for p.i < len(p.s) && isIdentStart(p.s[p.i]) {
		if p.s[p.i] == 'r' || p.s[p.i] == 'R' {
			raw = true
		}
		p.i++
	}
	q := p.s[p.i]
	triple := strings.HasPrefix(p.s[p.i:], strings.Repeat(string(q), 3))
	if triple {
		p.i += 3
	} else {
		p.i++
	}
	var b strings.Builder
	for {
		if p.i >= len(p.s) {
			return "", p.fail("unterminated string literal")
		}
		c := p.s[p.i]
		if triple && strings.HasPrefix(p.s[p.i:], strings.Repeat(string(q), 3)) {
			p.i += 3
			return b.String(), nil
		}
		if !triple && c == q {
			p.i++
			return b.String(), nil
		}
		if !triple && c == '\n' {
			return "", p.fail("unterminated string literal")
		}
		if c == '\\' && p.i+1 < len(p.s) {
			if raw {
				b.WriteString(p.s[p.i : p.i+2])
				p.i += 2
				continue
			}
			if err := p.escape(&b); err != nil {
				return "", err
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(p.s[p.i:])
		b.WriteRune(r)
		p.i += size
	}
}

func (p *litParser) escape(b *strings.Builder) error {
	c := p.s[p.i+1]
	p.i += 2
	simple := map[byte]string{'\n': "", '\\': "\\", '\'': "'", '"': "\"", 'a': "\a", 'b': "\b",
		'f': "\f", 'n': "\n", 'r': "\r", 't': "\t", 'v': "\v"}
	if s, ok := simple[c]; ok {
		b.WriteString(s)
		return nil
	}
	hexLen := map[byte]int{'x': 2, 'u': 4, 'U': 8}[c]
	if hexLen > 0 {
		if p.i+hexLen > len(p.s) {
			return p.fail("truncated escape")
		}
		n, err := strconv.ParseUint(p.s[p.i:p.i+hexLen], 16, 32)
		if err != nil {
			return p.fail("truncated escape")
		}
		p.i += hexLen
		b.WriteRune(rune(n))
		return nil
	}
	if c >= '0' && c <= '7' {
		j := p.i - 1
		end := j
		for end < len(p.s) && end < j+3 && p.s[end] >= '0' && p.s[end] <= '7' {
			end++
		}
		n, _ := strconv.ParseUint(p.s[j:end], 8, 32)
		p.i = end
		b.WriteRune(rune(n))
		return nil
	}
	// Unknown escapes are kept verbatim, as in Python.
	b.WriteByte('\\')
	b.WriteByte(c)
	return nil
}

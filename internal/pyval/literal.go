package pyval

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ParseLiteral evaluates a Python literal expression as ast.literal_eval
// does, then makes the result JSON as the reference's parse_json does
// (_jsonify). The literals: strings ('…', "…", triple-quoted, r/u/b
// prefixes, implicit concatenation), bytes, ints (decimal, 0x, 0o, 0b,
// underscores), floats, complex numbers (2j, 1+2j), True/False/None,
// Ellipsis (...), lists, tuples, sets (set() too) and dicts, with unary
// +/- (directly on a number only, parentheses aside) and # comments. As
// for Python, the text is one logical line: outside brackets a newline
// may only come before or after the literal, with blank or comment lines. Tuples become []any; the values JSON cannot hold
// (sets, bytes, complex numbers, Ellipsis) become their str(), e.g.
// "{1, 2}", "b'x'", "(1+2j)", "Ellipsis"; dict keys
// become their str(). Set elements keep their order of appearance (CPython
// orders them by hash).
func ParseLiteral(s string) (any, error) {
	// Python's tokenizer reads "\r\n" and a lone "\r" as "\n", in
	// triple-quoted strings too.
	s = strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
	if i := strings.IndexByte(s, 0); i >= 0 { // even in a comment or string
		return nil, &SyntaxError{Msg: "source code string cannot contain null bytes", Offset: i}
	}
	p := &litParser{s: s}
	// literal_eval strips spaces and tabs before the first line; blank
	// and comment lines may come first, but the line with the literal
	// must not be indented.
	start := len(s) - len(strings.TrimLeft(s, " \t"))
	i, why := p.nextLine(start, false)
	if why != "" {
		return nil, &SyntaxError{Msg: why, Offset: i}
	}
	p.i = i
	p.skip()
	v, err := p.expr(0)
	if err != nil {
		return nil, err
	}
	p.skip()
	if p.peek() == ',' {
		// A tuple without parentheses ("1, 2", "True,"), as
		// ast.literal_eval reads it.
		items := pyTuple{v}
		for p.peek() == ',' {
			p.i++
			p.skip()
			if p.i == len(p.s) && !p.stopped() {
				break // a trailing comma
			}
			e, err := p.expr(0)
			if err != nil {
				return nil, err
			}
			items = append(items, e)
			p.skip()
		}
		v = items
	}
	if p.i != len(p.s) || p.stopped() {
		return nil, p.invalid()
	}
	return jsonify(v), nil
}

// Python values of a parsed literal that are not JSON values as they
// stand; jsonify turns them into JSON.
type (
	pyTuple    []any
	pySet      []any  // distinct elements, in order of appearance
	pyBytes    string // a byte string
	pyDict     []pyKV // distinct keys, in order of appearance
	pyKV       struct{ k, v any }
	pyEllipsis struct{} // the ... literal (an ast.Constant for literal_eval)
)

type litParser struct {
	s        string
	i        int
	brackets int // open (, [ and { around p.i: newlines there are whitespace

	// skip stopped at stopAt for the reason stopWhy (a newline ending
	// the logical line, say); invalid reports it.
	stopAt  int
	stopWhy string
}

func (p *litParser) fail(msg string) error {
	return &SyntaxError{Msg: msg, Offset: p.i}
}

// invalid reports invalid syntax at p.i, naming the cause when skip
// stopped there or the character is one Python's tokenizer refuses.
func (p *litParser) invalid() error {
	if p.stopped() {
		return p.fail(p.stopWhy)
	}
	if p.i < len(p.s) {
		if c := p.s[p.i]; c < ' ' && c != '\t' && c != '\f' || c == 0x7f {
			return p.fail(fmt.Sprintf("invalid non-printable character U+%04X", c))
		}
	}
	return p.fail("invalid syntax")
}

// stopped reports that skip stopped at p.i for a reason it recorded.
func (p *litParser) stopped() bool {
	return p.stopWhy != "" && p.stopAt == p.i
}

// skip moves past what separates tokens: spaces, tabs, form feeds,
// comments, backslash continuations and, inside brackets, newlines.
// ast.literal_eval reads its text as ONE logical line, so outside
// brackets a newline after a token ends the literal and only blank or
// comment lines may follow it. skip stops at a newline followed by more
// tokens, or at a continuation with nothing after it, and records why
// for invalid.
func (p *litParser) skip() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\f':
			p.i++
		case '#':
			for p.i < len(p.s) && p.s[p.i] != '\n' {
				p.i++
			}
		case '\n':
			if p.brackets > 0 {
				p.i++
				continue
			}
			next, why := p.nextLine(p.i+1, true)
			if why != "" {
				p.stopAt, p.stopWhy = p.i, why
				return
			}
			p.i = next
		case '\\':
			if !strings.HasPrefix(p.s[p.i:], "\\\n") {
				return
			}
			if p.i+2 == len(p.s) {
				p.stopAt, p.stopWhy = p.i, "unexpected EOF while parsing"
				return
			}
			p.i += 2
		default:
			return
		}
	}
}

// nextLine skips, from the start k of a line outside brackets, the blank
// and comment lines as CPython's tokenizer does. It returns where the
// next line's first token is (or len(p.s)), or a reason that line is an
// error: an indented line, a continuation with nothing after it or,
// when ended (a logical line was already read), any token at all.
func (p *litParser) nextLine(k int, ended bool) (int, string) {
	for {
		// Whether the line is indented; as in CPython, an indent before
		// a backslash continuation counts whatever follows it.
		indented, contIndented := false, false
	indent:
		for ; k < len(p.s); k++ {
			switch p.s[k] {
			case ' ', '\t':
				indented = true
			case '\f':
				indented = false // a form feed resets the column, as in CPython
			case '\\':
				if !strings.HasPrefix(p.s[k:], "\\\n") {
					break indent
				}
				if k+2 == len(p.s) {
					return k, "unexpected EOF while parsing"
				}
				contIndented = contIndented || indented
				k++
			default:
				break indent
			}
		}
		indented = indented || contIndented
		switch {
		case k == len(p.s) && indented:
			return k, "unexpected indent"
		case k == len(p.s):
			return k, ""
		case p.s[k] == '#' || p.s[k] == '\n': // a blank line
			if end := strings.IndexByte(p.s[k:], '\n'); end >= 0 {
				k += end + 1
				continue
			}
			return len(p.s), ""
		case ended:
			return k, "invalid syntax: a newline outside brackets ends the literal (it must be one logical line)"
		case indented:
			return k, "unexpected indent"
		}
		return k, ""
	}
}

func (p *litParser) peek() byte {
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

// expr parses one literal, including the one arithmetic literal_eval
// accepts: a real number plus or minus an imaginary one (1+2j).
func (p *litParser) expr(depth int) (any, error) {
	v, err := p.unary(depth)
	if err != nil {
		return nil, err
	}
	p.skip()
	op := p.peek()
	if op != '+' && op != '-' {
		return v, nil
	}
	n := asNumber(v)
	if n.kind != intNumber && n.kind != floatNumber {
		return nil, p.fail("malformed node or string")
	}
	p.i++
	right, err := p.signOperand(depth + 1) // a number, maybe in parentheses, with no sign
	if err != nil {
		return nil, err
	}
	im, ok := right.(complex128)
	if !ok {
		return nil, p.fail("malformed node or string")
	}
	if op == '-' {
		return complex(n.float(), 0) - im, nil
	}
	return complex(n.float(), 0) + im, nil
}

// unary parses a literal with optional unary signs.
func (p *litParser) unary(depth int) (any, error) {
	if depth > 500 {
		return nil, p.fail("nesting too deep")
	}
	p.skip()
	c := p.peek()
	switch {
	case c == '-' || c == '+':
		p.i++
		v, err := p.signOperand(depth + 1)
		if err != nil {
			return nil, err
		}
		if jn, ok := v.(json.Number); ok { // an int past int64: its digits kept
			if c == '-' {
				return json.Number("-" + string(jn)), nil
			}
			return jn, nil
		}
		if c == '+' {
			return v, nil
		}
		switch x := v.(type) {
		case complex128:
			return -x, nil
		case float64:
			return -x, nil
		case int64:
			return -x, nil
		}
		return nil, p.fail("malformed node or string")
	case c == '[':
		p.i++
		p.brackets++
		v, err := p.seq(']', depth)
		p.brackets--
		return v, err
	case c == '(':
		p.i++
		p.brackets++
		v, err := p.tuple(depth)
		p.brackets--
		return v, err
	case c == '{':
		p.i++
		p.brackets++
		v, err := p.dict(depth)
		p.brackets--
		return v, err
	case c == '\'' || c == '"':
		return p.strings()
	case strings.HasPrefix(p.s[p.i:], "..."):
		// Python tokenizes "..." before any number, so "...5" is Ellipsis
		// followed by junk, not a float.
		p.i += 3
		return pyEllipsis{}, nil
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
		case "set": // set(), the empty set's only spelling
			p.skip()
			if p.peek() == '(' {
				p.i++
				p.brackets++
				p.skip()
				p.brackets--
				if p.peek() == ')' {
					p.i++
					return pySet{}, nil
				}
			}
		}
		return nil, p.fail("malformed node or string: name " + strconv.Quote(word))
	}
	return nil, p.invalid()
}

// signOperand parses the operand of a unary sign. ast.literal_eval takes
// a sign only directly on an int, float or complex constant; parentheses
// make no AST node, so "-(1)" is fine, but "-(-1)", "-(1+2j)" and
// "-True" are not.
func (p *litParser) signOperand(depth int) (any, error) {
	if depth > 500 {
		return nil, p.fail("nesting too deep")
	}
	p.skip()
	c := p.peek()
	switch {
	case c == '(':
		p.i++
		p.brackets++
		v, err := p.signOperand(depth + 1)
		if err != nil {
			return nil, err
		}
		p.skip()
		if p.peek() != ')' {
			return nil, p.fail("malformed node or string")
		}
		p.i++
		p.brackets--
		return v, nil
	case (c >= '0' && c <= '9' || c == '.') && !strings.HasPrefix(p.s[p.i:], "..."):
		return p.number()
	case p.i == len(p.s) || p.stopped():
		return nil, p.invalid()
	}
	return nil, p.fail("malformed node or string")
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
			return nil, p.invalid()
		}
	}
}

// tuple parses "(…)": a parenthesised expression or a tuple.
func (p *litParser) tuple(depth int) (any, error) {
	p.skip()
	if p.peek() == ')' {
		p.i++
		return pyTuple{}, nil
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
		return append(pyTuple{first}, rest...), nil
	}
	return nil, p.invalid()
}

// dict parses "{…}": a dict, a set, or {}. Keys and set elements must be
// hashable; equal ones (1, 1.0 and True are equal) are merged as Python
// merges them: the first key stays, the last value wins.
func (p *litParser) dict(depth int) (any, error) {
	p.skip()
	if p.peek() == '}' {
		p.i++
		return pyDict{}, nil
	}
	first, err := p.expr(depth + 1)
	if err != nil {
		return nil, err
	}
	if err := p.hashable(first); err != nil {
		return nil, err
	}
	p.skip()
	if p.peek() != ':' {
		// A set literal.
		var elems []any
		switch p.peek() {
		case '}':
			p.i++
		case ',':
			p.i++
			if elems, err = p.seq('}', depth); err != nil {
				return nil, err
			}
		default:
			return nil, p.invalid()
		}
		set := pySet{first}
		for _, e := range elems {
			if err := p.hashable(e); err != nil {
				return nil, err
			}
			if !slices.ContainsFunc(set, func(x any) bool { return pyEqual(x, e) }) {
				set = append(set, e)
			}
		}
		return set, nil
	}
	var out pyDict
	key := first
	for {
		p.i++ // ':'
		v, err := p.expr(depth + 1)
		if err != nil {
			return nil, err
		}
		if i := slices.IndexFunc(out, func(kv pyKV) bool { return pyEqual(kv.k, key) }); i >= 0 {
			out[i].v = v
		} else {
			out = append(out, pyKV{key, v})
		}
		p.skip()
		switch p.peek() {
		case '}':
			p.i++
			return out, nil
		case ',':
			p.i++
		default:
			return nil, p.invalid()
		}
		p.skip()
		if p.peek() == '}' {
			p.i++
			return out, nil
		}
		if key, err = p.expr(depth + 1); err != nil {
			return nil, err
		}
		if err := p.hashable(key); err != nil {
			return nil, err
		}
		p.skip()
		if p.peek() != ':' {
			return nil, p.invalid()
		}
	}
}

// hashable fails like Python for a dict key or set element that is a
// list, dict or set (or a tuple holding one).
func (p *litParser) hashable(v any) error {
	switch x := v.(type) {
	case []any:
		return p.fail("unhashable type: 'list'")
	case pyDict:
		return p.fail("unhashable type: 'dict'")
	case pySet:
		return p.fail("unhashable type: 'set'")
	case pyTuple:
		for _, e := range x {
			if err := p.hashable(e); err != nil {
				return err
			}
		}
	}
	return nil
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
	if n := len(lit); n > 1 && (lit[n-1] == 'j' || lit[n-1] == 'J') && !isPrefixedInt(lit) {
		clean, ok := validDecimalFloat(lit[:n-1])
		if !ok {
			return nil, p.fail("invalid imaginary literal")
		}
		f, err := strconv.ParseFloat(clean, 64)
		if err != nil && !isRangeErr(err) {
			return nil, p.fail("invalid imaginary literal")
		}
		return complex(0, f), nil
	}
	if isPrefixedInt(lit) {
		// With base 0, SetString takes underscores where Python does:
		// one at a time, between the prefix and a digit or two digits.
		n, ok := new(big.Int).SetString(lit, 0)
		if !ok {
			return nil, p.fail("invalid number literal")
		}
		if n.IsInt64() {
			return n.Int64(), nil
		}
		return json.Number(n.String()), nil // its digits kept, as LoadsJSON keeps them
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
		// A decimal integer too large for int64: its digits kept.
		return json.Number(strings.TrimLeft(clean, "+")), nil
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

// strings parses one or more adjacent string (or bytes) literals and
// concatenates them.
func (p *litParser) strings() (any, error) {
	var b strings.Builder
	kind := -1 // 0 for str, 1 for bytes: the two do not mix
	for {
		s, isBytes, err := p.oneString()
		if err != nil {
			return nil, err
		}
		k := 0
		if isBytes {
			k = 1
		}
		if kind >= 0 && k != kind {
			return nil, p.fail("cannot mix bytes and nonbytes literals")
		}
		kind = k
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
		if kind == 1 {
			return pyBytes(b.String()), nil
		}
		return b.String(), nil
	}
}

// oneString parses one string literal; isBytes reports a b prefix, in
// which case s holds bytes: ASCII source characters only, and \x and
// octal escapes give one byte each while \u, \U and \N stay as written.
func (p *litParser) oneString() (s string, isBytes bool, err error) {
	raw := false
	for p.i < len(p.s) && isIdentStart(p.s[p.i]) {
		switch p.s[p.i] {
		case 'r', 'R':
			raw = true
		case 'b', 'B':
			isBytes = true
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
			return "", false, p.fail("unterminated string literal")
		}
		c := p.s[p.i]
		if triple && strings.HasPrefix(p.s[p.i:], strings.Repeat(string(q), 3)) {
			p.i += 3
			return b.String(), isBytes, nil
		}
		if !triple && c == q {
			p.i++
			return b.String(), isBytes, nil
		}
		if !triple && c == '\n' {
			return "", false, p.fail("unterminated string literal")
		}
		if isBytes && c >= utf8.RuneSelf {
			return "", false, p.fail("bytes can only contain ASCII literal characters")
		}
		if c == '\\' && p.i+1 < len(p.s) {
			next := p.s[p.i+1]
			if raw || isBytes && (next == 'u' || next == 'U' || next == 'N') {
				b.WriteString(p.s[p.i : p.i+2])
				p.i += 2
				continue
			}
			if err := p.escape(&b, isBytes); err != nil {
				return "", false, err
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(p.s[p.i:])
		b.WriteRune(r)
		p.i += size
	}
}

// simpleEscapes maps the character after a backslash to what it stands for.
var simpleEscapes = map[byte]string{'\n': "", '\\': "\\", '\'': "'", '"': "\"", 'a': "\a", 'b': "\b",
	'f': "\f", 'n': "\n", 'r': "\r", 't': "\t", 'v': "\v"}

// escape decodes the escape sequence at p.i; in a bytes literal a \x or
// octal escape is one byte (an octal value above 0o377 keeps its low
// byte, as in Python).
func (p *litParser) escape(b *strings.Builder, isBytes bool) error {
	c := p.s[p.i+1]
	p.i += 2
	put := func(n uint64) {
		if isBytes {
			b.WriteByte(byte(n))
		} else {
			b.WriteRune(rune(n))
		}
	}
	if s, ok := simpleEscapes[c]; ok {
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
		put(n)
		return nil
	}
	if c == 'N' { // \N{NAME}; bytes literals keep it verbatim before here
		name, ok := "", false
		if p.peek() == '{' {
			if end := strings.IndexByte(p.s[p.i:], '}'); end > 1 {
				name, ok = p.s[p.i+1:p.i+end], true
			}
		}
		if !ok {
			return p.fail(`malformed \N character escape`)
		}
		r, found := lookupCharName(name)
		if !found {
			return p.fail(`unknown Unicode character name in \N{` + name + `}`)
		}
		p.i += len(name) + 2
		b.WriteRune(r)
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
		put(n)
		return nil
	}
	// Unknown escapes are kept verbatim, as in Python.
	b.WriteByte('\\')
	b.WriteByte(c)
	return nil
}

// jsonify makes a parsed literal JSON as the reference's parse_json does:
// tuples become lists, dict keys their str(), and every other value JSON
// has no type for (sets, bytes, complex numbers, Ellipsis) its str().
func jsonify(v any) any {
	switch x := v.(type) {
	case pyTuple:
		return jsonify([]any(x))
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonify(e)
		}
		return out
	case pyDict:
		out := make(map[string]any, len(x))
		for _, kv := range x {
			out[pyStr(kv.k)] = jsonify(kv.v)
		}
		return out
	case pySet, pyBytes, complex128, pyEllipsis:
		return pyStr(x)
	}
	return v
}

// pyStr is Python's str() of a parsed literal value.
func pyStr(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return pyRepr(v)
}

// pyRepr is Python's repr() of a parsed literal value.
func pyRepr(v any) string {
	join := func(items []any) string {
		parts := make([]string, len(items))
		for i, e := range items {
			parts[i] = pyRepr(e)
		}
		return strings.Join(parts, ", ")
	}
	switch x := v.(type) {
	case pyTuple:
		if len(x) == 1 {
			return "(" + pyRepr(x[0]) + ",)"
		}
		return "(" + join(x) + ")"
	case []any:
		return "[" + join(x) + "]"
	case pySet:
		if len(x) == 0 {
			return "set()"
		}
		return "{" + join(x) + "}"
	case pyDict:
		parts := make([]string, len(x))
		for i, kv := range x {
			parts[i] = pyRepr(kv.k) + ": " + pyRepr(kv.v)
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case pyBytes:
		return bytesRepr(string(x))
	case complex128:
		return complexRepr(x)
	case pyEllipsis:
		return "Ellipsis"
	}
	return Repr(v)
}

// bytesRepr is Python's repr() of a bytes value.
func bytesRepr(s string) string {
	quote := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		quote = '"'
	}
	var b strings.Builder
	b.WriteString("b")
	b.WriteByte(quote)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == quote || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\t':
			b.WriteString(`\t`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c < ' ' || c >= 0x7f:
			fmt.Fprintf(&b, `\x%02x`, c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte(quote)
	return b.String()
}

// complexRepr is Python's repr() of a complex number: "2j" when the real
// part is +0, else "(1+2j)"; the parts are shortest reprs without ".0".
func complexRepr(z complex128) string {
	part := func(f float64) string { return strings.TrimSuffix(FormatFloat(f), ".0") }
	re, im := real(z), imag(z)
	if re == 0 && !math.Signbit(re) {
		return part(im) + "j"
	}
	sign := "+"
	if math.Signbit(im) && !math.IsNaN(im) {
		sign = ""
	}
	return "(" + part(re) + sign + part(im) + "j)"
}

// pyEqual is Python's == on hashable literal values: numbers across kinds
// (1 == 1.0 == True == 1+0j), tuples element-wise, bytes by content.
func pyEqual(a, b any) bool {
	switch x := a.(type) {
	case pyTuple:
		y, ok := b.(pyTuple)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !pyEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case pyBytes:
		y, ok := b.(pyBytes)
		return ok && x == y
	case pyEllipsis:
		_, ok := b.(pyEllipsis)
		return ok
	case complex128:
		if y, ok := b.(complex128); ok {
			return x == y
		}
		n := asNumber(b)
		return n.kind != notNumber && imag(x) == 0 && real(x) == n.float()
	}
	if _, ok := b.(complex128); ok {
		return pyEqual(b, a)
	}
	switch b.(type) {
	case pyTuple, pyBytes, pyEllipsis:
		return false
	}
	return Equal(a, b)
}

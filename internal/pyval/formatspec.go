package pyval

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"
)

// fmtSpec is a parsed Python format spec:
// [[fill]align][sign][z][#][0][width][grouping][.precision][type].
type fmtSpec struct {
	fill      rune
	align     byte
	sign      byte
	noNegZero bool // 'z': a negative zero (after rounding) loses its sign
	alt       bool
	zero      bool
	width     int
	grouping  byte
	precision int  // -1 when absent
	typ       rune // 0 when absent
}

// parseSpec parses spec as CPython's parse_internal_render_format_spec
// does; typeName (the formatted value's type) is for error messages, and
// defType is the type's default presentation type ('d' for int, 's' for
// str, 0 for float), against which the grouping option is checked.
func parseSpec(spec, typeName string, defType rune) (fmtSpec, error) {
	s := fmtSpec{fill: ' ', precision: -1}
	rs := []rune(spec)
	i := 0
	isAlign := func(r rune) bool { return r == '<' || r == '>' || r == '^' || r == '=' }
	fillSet := false
	if len(rs) >= 2 && isAlign(rs[1]) {
		s.fill, s.align = rs[0], byte(rs[1])
		fillSet = true
		i = 2
	} else if len(rs) >= 1 && isAlign(rs[0]) {
		s.align = byte(rs[0])
		i = 1
	}
	if i < len(rs) && (rs[i] == '+' || rs[i] == '-' || rs[i] == ' ') {
		s.sign = byte(rs[i])
		i++
	}
	if i < len(rs) && rs[i] == 'z' {
		s.noNegZero = true
		i++
	}
	if i < len(rs) && rs[i] == '#' {
		s.alt = true
		i++
	}
	if i < len(rs) && rs[i] == '0' {
		s.zero = true
		i++
	}
	start := i
	for i < len(rs) && rs[i] >= '0' && rs[i] <= '9' {
		i++
	}
	if i > start {
		w, err := strconv.Atoi(string(rs[start:i]))
		if err != nil {
			return s, fmt.Errorf("Too many decimal digits in format string")
		}
		s.width = w
	}
	if i < len(rs) && rs[i] == ',' {
		s.grouping = ','
		i++
	}
	if i < len(rs) && rs[i] == '_' {
		if s.grouping != 0 {
			return s, fmt.Errorf("Cannot specify both ',' and '_'.")
		}
		s.grouping = '_'
		i++
	}
	if i < len(rs) && rs[i] == ',' && s.grouping == '_' {
		return s, fmt.Errorf("Cannot specify both ',' and '_'.")
	}
	if i < len(rs) && rs[i] == '.' {
		i++
		start = i
		for i < len(rs) && rs[i] >= '0' && rs[i] <= '9' {
			i++
		}
		if i == start {
			return s, fmt.Errorf("Format specifier missing precision")
		}
		p, err := strconv.Atoi(string(rs[start:i]))
		if err != nil {
			return s, fmt.Errorf("Too many decimal digits in format string")
		}
		s.precision = p
	}
	if len(rs)-i > 1 {
		return s, fmt.Errorf("Invalid format specifier '%s' for object of type '%s'", spec, typeName)
	}
	if i < len(rs) {
		s.typ = rs[i]
		// CPython reads an explicit type character over the type's
		// default ('d' for int, 's' for str), so a NUL type is not
		// "absent" there: int, bool and str refuse it as an unknown code
		// ('\x0'). Float's default is NUL itself, so it formats as if no
		// type were given. Here 0 means absent, so refuse it now.
		if s.typ == 0 && defType != 0 {
			return s, unknownCode(0, typeName)
		}
	}
	if s.grouping != 0 {
		typ := s.typ
		if typ == 0 {
			typ = defType
		}
		switch typ {
		case 'd', 'e', 'f', 'g', 'E', 'G', '%', 'F', 0:
		case 'b', 'o', 'x', 'X':
			if s.grouping != '_' {
				return s, fmt.Errorf("Cannot specify '%c' with %s.", s.grouping, codeName(typ))
			}
		default:
			return s, fmt.Errorf("Cannot specify '%c' with %s.", s.grouping, codeName(typ))
		}
	}
	// The '0' flag pads with zeros unless a fill is given; whether it
	// also means '=' alignment depends on the type (numbers only, see
	// numeric), so that "{:05}" pads a string on the right (Python 3.10+).
	if s.zero && !fillSet {
		s.fill = '0'
	}
	if s.width > MaxFormattedLen {
		return s, errTooLong("width", s.width)
	}
	return s, nil
}

// MaxFormattedLen bounds what one format call may build, in characters
// of a width or a float's precision and in bytes of the whole result.
// CPython allocates whatever a spec asks for ("{x:{n}}" with n a
// billion, from a run's own values), and so would we: the gateway's
// process, and every run it serves, would be at the mercy of one value.
// Past the bound the call fails, naming it, where Python's would build
// (or raise MemoryError).
const MaxFormattedLen = 1 << 24

func errTooLong(what string, n int) error {
	return fmt.Errorf("format %s %d is past this runtime's limit of %d", what, n, MaxFormattedLen)
}

// codeName quotes a presentation type as CPython's messages do: 'x', or
// '\xe9' for a character outside printable ASCII.
func codeName(c rune) string {
	if c > 32 && c < 128 {
		return fmt.Sprintf("'%c'", c)
	}
	return fmt.Sprintf("'\\x%x'", c)
}

func unknownCode(c rune, typeName string) error {
	return fmt.Errorf("Unknown format code %s for object of type '%s'", codeName(c), typeName)
}

// numeric returns s as numbers use it: the '0' flag without an explicit
// alignment pads after the sign ('=').
func (s fmtSpec) numeric() fmtSpec {
	if s.zero && s.align == 0 {
		s.align = '='
	}
	return s
}

// FormatValue implements Python's format(v, spec) for JSON values: str for
// strings, int/float presentation types for numbers (bools format as ints
// when the spec is non-empty), and str() for everything with an empty spec.
// Ints beyond int64 (json.Number digits, large uint64s) are formatted
// from their exact value, as Python ints.
func FormatValue(v any, spec string) (string, error) {
	if spec == "" {
		return Str(v), nil
	}
	switch x := v.(type) {
	case string:
		s, err := parseSpec(spec, "str", 's')
		if err != nil {
			return "", err
		}
		return formatStr(x, s)
	case nil, []any, map[string]any:
		return "", fmt.Errorf("unsupported format string passed to %s.__format__", TypeName(v))
	}
	if z, ok := bigIntOf(v); ok {
		s, err := parseSpec(spec, "int", 'd')
		if err != nil {
			return "", err
		}
		return formatInt(z, s.numeric(), "int")
	}
	n := asNumber(v)
	switch n.kind {
	case intNumber, boolNumber:
		name := TypeName(v)
		s, err := parseSpec(spec, name, 'd')
		if err != nil {
			return "", err
		}
		return formatInt(big.NewInt(n.i), s.numeric(), name)
	case floatNumber:
		s, err := parseSpec(spec, "float", 0)
		if err != nil {
			return "", err
		}
		return formatFloat(n.f, s.numeric())
	}
	return "", fmt.Errorf("unsupported format string passed to %s.__format__", TypeName(v))
}

// bigIntOf returns v as a big.Int when it is a Python int that int64 does
// not hold: a json.Number integer literal past int64, or a uint64 past
// MaxInt64.
func bigIntOf(v any) (*big.Int, bool) {
	switch x := v.(type) {
	case json.Number:
		s := string(x)
		if strings.ContainsAny(s, ".eE") {
			return nil, false
		}
		if _, err := strconv.ParseInt(s, 10, 64); err == nil {
			return nil, false
		}
		return new(big.Int).SetString(s, 10)
	case uint64:
		if x > math.MaxInt64 {
			return new(big.Int).SetUint64(x), true
		}
	case uint:
		if uint64(x) > math.MaxInt64 {
			return new(big.Int).SetUint64(uint64(x)), true
		}
	}
	return nil, false
}

func formatStr(x string, s fmtSpec) (string, error) {
	if s.typ != 0 && s.typ != 's' {
		return "", unknownCode(s.typ, "str")
	}
	if s.sign == ' ' {
		return "", fmt.Errorf("Space not allowed in string format specifier")
	}
	if s.sign != 0 {
		return "", fmt.Errorf("Sign not allowed in string format specifier")
	}
	if s.noNegZero {
		return "", fmt.Errorf("Negative zero coercion (z) not allowed in string format specifier")
	}
	if s.alt {
		return "", fmt.Errorf("Alternate form (#) not allowed in string format specifier")
	}
	if s.align == '=' {
		return "", fmt.Errorf("'=' alignment not allowed in string format specifier")
	}
	if s.precision >= 0 && utf8.RuneCountInString(x) > s.precision {
		x = string([]rune(x)[:s.precision])
	}
	return pad("", x, s, '<'), nil
}

// formatInt formats the Python int z (of type typeName: int or bool) as
// int.__format__ does; the float presentation types convert it to float.
func formatInt(z *big.Int, s fmtSpec, typeName string) (string, error) {
	switch s.typ {
	case 'e', 'E', 'f', 'F', 'g', 'G', '%':
		f, _ := new(big.Float).SetInt(z).Float64() // rounded to nearest, as float(z)
		if math.IsInf(f, 0) {
			return "", fmt.Errorf("int too large to convert to float")
		}
		return formatFloat(f, s)
	case 0, 'd', 'n', 'x', 'X', 'o', 'b', 'c':
	default:
		return "", unknownCode(s.typ, typeName)
	}
	if s.precision >= 0 {
		return "", fmt.Errorf("Precision not allowed in integer format specifier")
	}
	if s.noNegZero {
		return "", fmt.Errorf("Negative zero coercion (z) not allowed in integer format specifier")
	}
	if s.typ == 'c' {
		if s.sign != 0 {
			return "", fmt.Errorf("Sign not allowed with integer format specifier 'c'")
		}
		if s.alt {
			return "", fmt.Errorf("Alternate form (#) not allowed with integer format specifier 'c'")
		}
		if !z.IsInt64() {
			return "", fmt.Errorf("Python int too large to convert to C long")
		}
		c := z.Int64()
		if c < 0 || c > 0x10ffff {
			return "", fmt.Errorf("%%c arg not in range(0x110000)")
		}
		// A character is all "remainder" to CPython: padded as a number
		// (right-aligned by default, '0' fills after nothing), never
		// grouped.
		return numberOut("", "", string(rune(c)), s, 3), nil
	}
	neg := z.Sign() < 0
	u := new(big.Int).Abs(z)
	var digits, prefix string
	switch s.typ {
	case 0, 'd', 'n':
		digits = u.Text(10)
	case 'x':
		digits, prefix = u.Text(16), "0x"
	case 'X':
		digits, prefix = strings.ToUpper(u.Text(16)), "0X"
	case 'o':
		digits, prefix = u.Text(8), "0o"
	case 'b':
		digits, prefix = u.Text(2), "0b"
	}
	if !s.alt {
		prefix = ""
	}
	every := 3
	if s.typ == 'x' || s.typ == 'X' || s.typ == 'o' || s.typ == 'b' {
		every = 4
	}
	return numberOut(signOf(neg, s.sign)+prefix, digits, "", s, every), nil
}

func formatFloat(f float64, s fmtSpec) (string, error) {
	switch s.typ {
	case 0, 'e', 'E', 'f', 'F', 'g', 'G', 'n', '%':
	default:
		// Also for inf and nan: the type is checked before the value.
		return "", unknownCode(s.typ, "float")
	}
	// CPython's format_float_internal refuses a precision past INT_MAX
	// (for inf and nan too). strconv.FormatFloat panics on such a
	// precision ("makeslice: cap out of range"), which a nested field
	// ("{x:{x:0}0}") can produce.
	if s.precision > math.MaxInt32 {
		return "", fmt.Errorf("precision too big")
	}
	if s.precision > MaxFormattedLen {
		return "", errTooLong("precision", s.precision)
	}
	neg := math.Signbit(f) && !math.IsNaN(f)
	a := math.Abs(f)
	if s.typ == '%' {
		a *= 100 // before the inf check: a large float overflows to inf%
	}
	var body string
	switch {
	case math.IsInf(a, 0) || math.IsNaN(a):
		body = "inf"
		if math.IsNaN(a) {
			body = "nan"
		}
		if s.typ == 'E' || s.typ == 'F' || s.typ == 'G' {
			body = strings.ToUpper(body)
		}
		if s.typ == '%' {
			body += "%"
		}
	default:
		var err error
		if body, err = floatBody(a, s); err != nil {
			return "", err
		}
		if neg && s.noNegZero && isZeroBody(body) {
			neg = false
		}
	}
	// CPython's parse_number: the leading digits are grouped (and
	// zero-padded); the decimal point, fraction, exponent and '%' (or
	// all of "inf"/"nan") are copied after them.
	j := 0
	for j < len(body) && body[j] >= '0' && body[j] <= '9' {
		j++
	}
	return numberOut(signOf(neg, s.sign), body[:j], body[j:], s, 3), nil
}

// isZeroBody reports whether a formatted finite magnitude is zero: no
// non-zero digit before the exponent.
func isZeroBody(body string) bool {
	if j := strings.IndexAny(body, "eE"); j >= 0 {
		body = body[:j]
	}
	return !strings.ContainsAny(body, "123456789")
}

// numberOut lays out a formatted number as CPython's calc_number_widths
// and fill_number do: lead (sign and 0x-style prefix), digits (grouped
// every `every` digits), rest (decimal point, fraction, exponent, '%', or
// a 'c' character). When the fill is '0' with '=' alignment (the '0'
// flag), the zeros are part of the digits and grouped with them.
func numberOut(lead, digits, rest string, s fmtSpec, every int) string {
	if digits != "" {
		minWidth := 0
		if s.fill == '0' && s.align == '=' {
			minWidth = s.width - utf8.RuneCountInString(lead) - utf8.RuneCountInString(rest)
		}
		digits = groupDigits(digits, s.grouping, every, minWidth)
	}
	return pad(lead, digits+rest, s, '>')
}

func floatBody(a float64, s fmtSpec) (string, error) {
	p := s.precision
	switch s.typ {
	case 'f', 'F':
		return strconv.FormatFloat(a, 'f', precOr(p, 6), 64) + altDot(s, p), nil
	case 'e', 'E':
		out := pyExp(a, precOr(p, 6), s.alt)
		if s.typ == 'E' {
			out = strings.ToUpper(out)
		}
		return out, nil
	case '%':
		return strconv.FormatFloat(a, 'f', precOr(p, 6), 64) + altDot(s, p) + "%", nil
	case 'g', 'G', 'n':
		out := pyGeneral(a, precOr(p, 6), s.alt, false)
		if s.typ == 'G' {
			out = strings.ToUpper(out)
		}
		return out, nil
	case 0:
		if p < 0 {
			// repr; '#' keeps a decimal point in exponent form too
			// (format(1e16, '#') is '1.e+16').
			out := FormatFloat(a)
			if s.alt && !strings.Contains(out, ".") {
				if j := strings.IndexByte(out, 'e'); j >= 0 {
					out = out[:j] + "." + out[j:]
				}
			}
			return out, nil
		}
		return pyGeneral(a, p, s.alt, true), nil
	}
	return "", unknownCode(s.typ, "float")
}

func precOr(p, def int) int {
	if p < 0 {
		return def
	}
	return p
}

func altDot(s fmtSpec, p int) string {
	if s.alt && p == 0 {
		return "."
	}
	return ""
}

// pyExp renders a in exponent notation with prec fraction digits.
func pyExp(a float64, prec int, alt bool) string {
	t := strconv.FormatFloat(a, 'e', prec, 64)
	mant, e, _ := strings.Cut(t, "e")
	exp, _ := strconv.Atoi(e)
	if alt && !strings.Contains(mant, ".") {
		mant += "."
	}
	return mant + exponentSuffix(exp)
}

// pyGeneral implements the 'g' presentation type and, with noType, the
// float default with a precision: 'g' that keeps at least one fraction
// digit in fixed notation and therefore switches to exponent notation one
// digit earlier, as soon as the rounded value would need that ".0"
// (CPython's Py_DTSF_ADD_DOT_0: format(12.345, '.2') is '1.2e+01',
// format(3.0, '.1') is '3e+00').
func pyGeneral(a float64, prec int, alt, noType bool) string {
	if prec == 0 {
		prec = 1
	}
	t := strconv.FormatFloat(a, 'e', prec-1, 64)
	mant, e, _ := strings.Cut(t, "e")
	exp, _ := strconv.Atoi(e)
	digits := strings.Replace(mant, ".", "", 1)
	if !alt {
		digits = strings.TrimRight(digits, "0")
		if digits == "" {
			digits = "0"
		}
	}
	fixedBelow := prec
	if noType {
		fixedBelow = prec - 1
	}
	if exp >= -4 && exp < fixedBelow {
		if noType && !alt {
			return fixedFromDigits(digits, exp, true)
		}
		out := fixedFromDigits(digits, exp, false)
		if alt && !strings.Contains(out, ".") {
			out += "."
		}
		return out
	}
	m := mantissa(digits)
	if alt && !strings.Contains(m, ".") {
		m += "."
	}
	return m + exponentSuffix(exp)
}

func signOf(neg bool, sign byte) string {
	switch {
	case neg:
		return "-"
	case sign == '+':
		return "+"
	case sign == ' ':
		return " "
	}
	return ""
}

// groupDigits inserts sep (none when 0) every `every` digits from the
// right and left-pads with zeros to at least minWidth characters, as
// CPython's _PyUnicode_InsertThousandsGrouping does: a group is added
// while digits or width remain, so the padding never starts with a
// separator (format(42, '04,') is '0,042', one wider than asked).
func groupDigits(digits string, sep byte, every, minWidth int) string {
	if sep == 0 {
		if n := minWidth - len(digits); n > 0 {
			return strings.Repeat("0", n) + digits
		}
		return digits
	}
	var groups []string
	remaining := len(digits)
	for {
		l := min(every, max(remaining, minWidth, 1))
		chars := min(remaining, l)
		groups = append(groups, strings.Repeat("0", l-chars)+digits[remaining-chars:remaining])
		remaining -= chars
		minWidth -= l
		if remaining <= 0 && minWidth <= 0 {
			break
		}
		minWidth--
	}
	var b strings.Builder
	for i := len(groups) - 1; i >= 0; i-- {
		b.WriteString(groups[i])
		if i > 0 {
			b.WriteByte(sep)
		}
	}
	return b.String()
}

// pad applies fill, alignment and width. prefix (sign, 0x) goes before the
// padding for '=' alignment.
func pad(prefix, body string, s fmtSpec, defAlign byte) string {
	n := utf8.RuneCountInString(prefix) + utf8.RuneCountInString(body)
	if n >= s.width {
		return prefix + body
	}
	fill := strings.Repeat(string(s.fill), s.width-n)
	align := s.align
	if align == 0 {
		align = defAlign
	}
	switch align {
	case '<':
		return prefix + body + fill
	case '^':
		left := (s.width - n) / 2
		return strings.Repeat(string(s.fill), left) + prefix + body + strings.Repeat(string(s.fill), s.width-n-left)
	case '=':
		return prefix + fill + body
	}
	return fill + prefix + body
}

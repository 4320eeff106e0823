package pyval

import (
	"fmt"
	"math"
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
	alt       bool
	zero      bool
	width     int
	grouping  byte
	precision int // -1 when absent
	typ       byte
}

func parseSpec(spec string) (fmtSpec, error) {
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
		s.width, _ = strconv.Atoi(string(rs[start:i]))
	}
	if i < len(rs) && (rs[i] == ',' || rs[i] == '_') {
		s.grouping = byte(rs[i])
		i++
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
		s.precision, _ = strconv.Atoi(string(rs[start:i]))
	}
	if i < len(rs) {
		s.typ = byte(rs[i])
		i++
	}
	if i != len(rs) {
		return s, fmt.Errorf("Invalid format specifier '%s'", spec)
	}
	// The '0' flag pads with zeros unless a fill is given; whether it
	// also means '=' alignment depends on the type (numbers only, see
	// numeric), so that "{:05}" pads a string on the right (Python 3.10+).
	if s.zero && !fillSet {
		s.fill = '0'
	}
	return s, nil
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
func FormatValue(v any, spec string) (string, error) {
	if spec == "" {
		return Str(v), nil
	}
	s, err := parseSpec(spec)
	if err != nil {
		return "", err
	}
	switch x := v.(type) {
	case string:
		return formatStr(x, s)
	case nil, []any, map[string]any:
		return "", fmt.Errorf("unsupported format string passed to %s.__format__", TypeName(v))
	}
	n := asNumber(v)
	switch n.kind {
	case intNumber, boolNumber:
		return formatInt(n.i, s.numeric())
	case floatNumber:
		return formatFloat(n.f, s.numeric())
	}
	return "", fmt.Errorf("unsupported format string passed to %s.__format__", TypeName(v))
}

func formatStr(x string, s fmtSpec) (string, error) {
	if s.typ != 0 && s.typ != 's' {
		return "", fmt.Errorf("Unknown format code '%c' for object of type 'str'", s.typ)
	}
	if s.sign != 0 {
		return "", fmt.Errorf("Sign not allowed in string format specifier")
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

func formatInt(i int64, s fmtSpec) (string, error) {
	switch s.typ {
	case 'e', 'E', 'f', 'F', 'g', 'G', '%':
		return formatFloat(float64(i), s)
	}
	if s.precision >= 0 {
		return "", fmt.Errorf("Precision not allowed in integer format specifier")
	}
	neg := i < 0
	u := uint64(i)
	if neg {
		u = uint64(-i)
	}
	var body, prefix string
	switch s.typ {
	case 0, 'd', 'n':
		body = strconv.FormatUint(u, 10)
	case 'x':
		body, prefix = strconv.FormatUint(u, 16), "0x"
	case 'X':
		body, prefix = strings.ToUpper(strconv.FormatUint(u, 16)), "0X"
	case 'o':
		body, prefix = strconv.FormatUint(u, 8), "0o"
	case 'b':
		body, prefix = strconv.FormatUint(u, 2), "0b"
	case 'c':
		return pad("", string(rune(i)), s, '<'), nil
	default:
		return "", fmt.Errorf("Unknown format code '%c' for object of type 'int'", s.typ)
	}
	if !s.alt {
		prefix = ""
	}
	if s.grouping != 0 {
		every := 3
		if s.typ == 'x' || s.typ == 'X' || s.typ == 'o' || s.typ == 'b' {
			every = 4
		}
		body = group(body, s.grouping, every)
	}
	return pad(signOf(neg, s.sign)+prefix, body, s, '>'), nil
}

func formatFloat(f float64, s fmtSpec) (string, error) {
	neg := math.Signbit(f) && !math.IsNaN(f)
	a := math.Abs(f)
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
	}
	if s.grouping != 0 {
		intPart, rest := body, ""
		if j := strings.IndexAny(body, ".eE%"); j >= 0 {
			intPart, rest = body[:j], body[j:]
		}
		if intPart != "inf" && intPart != "nan" {
			body = group(intPart, s.grouping, 3) + rest
		}
	}
	return pad(signOf(neg, s.sign), body, s, '>'), nil
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
		return strconv.FormatFloat(a*100, 'f', precOr(p, 6), 64) + altDot(s, p) + "%", nil
	case 'g', 'G', 'n':
		out := pyGeneral(a, precOr(p, 6), s.alt, false)
		if s.typ == 'G' {
			out = strings.ToUpper(out)
		}
		return out, nil
	case 0:
		if p < 0 {
			return FormatFloat(a), nil
		}
		return pyGeneral(a, p, s.alt, true), nil
	}
	return "", fmt.Errorf("Unknown format code '%c' for object of type 'float'", s.typ)
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

// group inserts sep every `every` digits from the right.
func group(digits string, sep byte, every int) string {
	if len(digits) <= every {
		return digits
	}
	var b strings.Builder
	lead := len(digits) % every
	if lead > 0 {
		b.WriteString(digits[:lead])
	}
	for i := lead; i < len(digits); i += every {
		if b.Len() > 0 {
			b.WriteByte(sep)
		}
		b.WriteString(digits[i : i+every])
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

package pyval

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ToFloat implements Python's float(x): numbers and bools convert directly;
// strings may have surrounding whitespace and use decimal or exponent
// notation, "inf"/"infinity"/"nan" (any case, optional sign) and underscores
// between digits. Anything else is an error with Python's message, as is
// an int beyond the float64 range (Python's OverflowError; a numeric
// string that large reads as inf, as in Python).
func ToFloat(v any) (float64, error) {
	if s, ok := v.(string); ok {
		f, ok := parsePyFloat(s)
		if !ok {
			return 0, fmt.Errorf("could not convert string to float: %s", QuoteString(s))
		}
		return f, nil
	}
	n := asNumber(v)
	if n.kind == notNumber {
		return 0, fmt.Errorf("float() argument must be a string or a real number, not '%s'", TypeName(v))
	}
	if n.big && math.IsInf(n.f, 0) {
		return 0, ErrIntTooLargeForFloat
	}
	return n.float(), nil
}

// ToInt implements Python's int(x): ints and bools convert directly, floats
// are truncated toward zero (inf and nan are errors), strings must hold a
// base-10 integer (optional sign, surrounding whitespace, underscores
// between digits). "2.5" is an error; use ToIntViaFloat for int(float(x)).
func ToInt(v any) (int64, error) {
	if s, ok := v.(string); ok {
		i, ok := parsePyInt(s)
		if !ok {
			return 0, fmt.Errorf("invalid literal for int() with base 10: %s", QuoteString(s))
		}
		return i, nil
	}
	n := asNumber(v)
	switch n.kind {
	case intNumber, boolNumber:
		return n.i, nil
	case floatNumber:
		return FloatToInt(n.f)
	}
	return 0, fmt.Errorf("int() argument must be a string, a bytes-like object or a real number, not '%s'", TypeName(v))
}

// ToIndex is ToInt for a value used as an index or a count (a slice
// bound, round's ndigits): an int past int64, which Python keeps exact,
// is clamped to the int64 range, which any index or count of ours
// behaves the same at.
func ToIndex(v any) (int64, error) {
	i, err := ToInt(v)
	if err == nil {
		return i, nil
	}
	neg := false
	if s, ok := v.(string); ok {
		t := strings.TrimFunc(asciiNumeral(s), unicode.IsSpace)
		body := strings.TrimLeft(t, "+-")
		if len(t)-len(body) > 1 || !validDigitPart(body) {
			return 0, err // not an int literal at all
		}
		neg = strings.HasPrefix(t, "-")
	} else {
		n := asNumber(v)
		if n.kind != floatNumber || math.IsNaN(n.f) || math.IsInf(n.f, 0) && n.digits == "" {
			return 0, err
		}
		neg = n.f < 0
	}
	if neg {
		return math.MinInt64, nil
	}
	return math.MaxInt64, nil
}

// ErrIntTooLargeForFloat is ToFloat's error for an int beyond the float64
// range: Python raises it as OverflowError, which code catching only
// TypeError/ValueError lets through.
var ErrIntTooLargeForFloat = errors.New("int too large to convert to float")

// ToIntViaFloat implements int(float(x)), which accepts "2.5" → 2. Like
// Python it rounds an int to a float64 first (2**53+1 → 2**53). A result
// past int64, which Python keeps as a big int, is an error; IntViaFloat
// returns it.
func ToIntViaFloat(v any) (int64, error) {
	f, err := ToFloat(v)
	if err != nil {
		return 0, err
	}
	return FloatToInt(f)
}

// IntViaFloat is int(float(x)) as a Python int value: an int64, or past
// the int64 range a json.Number of its exact digits (how this package
// carries big ints), so 1e20 gives 100000000000000000000.
func IntViaFloat(v any) (any, error) {
	f, err := ToFloat(v)
	if err != nil {
		return nil, err
	}
	i, err := FloatToInt(f)
	if err == nil {
		return i, nil
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, err
	}
	// A float64 this large is an integer already, so the conversion is exact.
	b, _ := new(big.Float).SetFloat64(f).Int(nil)
	return json.Number(b.String()), nil
}

// ToBigInt is Python's int(v) of any size: ToInt's ints, bools, floats
// (truncated) and base-10 strings, without its int64 bound.
func ToBigInt(v any) (*big.Int, error) {
	n, err := ToInt(v)
	if err == nil {
		return big.NewInt(n), nil
	}
	switch x := v.(type) {
	case string:
		if b, ok := ParseBigInt(x); ok {
			return b, nil
		}
		return nil, err
	case json.Number: // an int literal is exact; a float one goes through float
		if b, ok := new(big.Int).SetString(string(x), 10); ok {
			return b, nil
		}
	case uint64:
		return new(big.Int).SetUint64(x), nil
	case uint:
		return new(big.Int).SetUint64(uint64(x)), nil
	}
	f, ferr := IntViaFloat(v) // a float past int64: its exact digits
	if ferr != nil {
		return nil, err
	}
	if num, ok := f.(json.Number); ok {
		if b, ok := new(big.Int).SetString(string(num), 10); ok {
			return b, nil
		}
	}
	return nil, err
}

// BigIntValue is n as a Python int value: an int64, or past its range a
// json.Number of the exact digits (how this package carries big ints).
func BigIntValue(n *big.Int) any {
	if n.IsInt64() {
		return n.Int64()
	}
	return json.Number(n.String())
}

// SaturatedInt is f truncated toward zero to an int64, clamped at its
// bounds (infinities included), where Python's int(f) gives a big int and
// Go's conversion of an out-of-range float is undefined (MinInt64 on
// amd64). NaN is the caller's to refuse.
func SaturatedInt(f float64) int64 {
	switch {
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}

// FloatToInt truncates f toward zero like Python's int(f). Values outside
// the int64 range are an error (Python would produce a big int).
func FloatToInt(f float64) (int64, error) {
	switch {
	case math.IsNaN(f):
		return 0, fmt.Errorf("cannot convert float NaN to integer")
	case math.IsInf(f, 0):
		return 0, fmt.Errorf("cannot convert float infinity to integer")
	}
	t := math.Trunc(f)
	if t >= 9.223372036854775807e18 || t < -9.223372036854775808e18 {
		return 0, fmt.Errorf("int() result out of range: %s", FormatFloat(f))
	}
	return int64(t), nil
}

// asciiNumeral is what CPython's float() and int() do to a string before
// parsing it (_PyUnicode_TransformDecimalAndSpaceToASCII): Unicode
// whitespace becomes ' ', every decimal digit (category Nd: Arabic-Indic,
// fullwidth, …) its ASCII digit, so float("١٢") is 12.0, and any other
// non-ASCII character '?', which no number syntax accepts.
func asciiNumeral(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r < utf8.RuneSelf:
			b.WriteRune(r)
		case isPySpace(r):
			b.WriteByte(' ')
		default:
			if d, ok := decimalValue(r); ok {
				b.WriteByte('0' + d)
			} else {
				b.WriteByte('?')
			}
		}
	}
	return b.String()
}

// decimalValue returns the digit value of a Unicode decimal digit. Unicode
// encodes every decimal digit set as a run of ten code points from 0 to 9,
// so within a range of unicode.Nd the value is the offset modulo 10.
func decimalValue(r rune) (byte, bool) {
	for _, rg := range unicode.Nd.R16 {
		if lo, hi := rune(rg.Lo), rune(rg.Hi); r >= lo && r <= hi {
			return byte((r - lo) % 10), true
		}
	}
	for _, rg := range unicode.Nd.R32 {
		if lo, hi := rune(rg.Lo), rune(rg.Hi); r >= lo && r <= hi {
			return byte((r - lo) % 10), true
		}
	}
	return 0, false
}

// parsePyFloat parses a string with Python float() syntax.
func parsePyFloat(s string) (float64, bool) {
	t := strings.TrimFunc(asciiNumeral(s), unicode.IsSpace)
	body := t
	sign := 1.0
	if body != "" && (body[0] == '+' || body[0] == '-') {
		if body[0] == '-' {
			sign = -1
		}
		body = body[1:]
	}
	switch strings.ToLower(body) {
	case "inf", "infinity":
		return math.Inf(int(sign)), true
	case "nan":
		return math.NaN(), true
	}
	clean, ok := validDecimalFloat(body)
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(clean, 64)
	if err != nil && !isRangeErr(err) {
		return 0, false
	}
	return sign * f, true
}

// validDecimalFloat checks digitpart ["." [digitpart]] [exponent] or
// "." digitpart [exponent], where digitpart allows single underscores
// between digits, and returns the text without underscores.
func validDecimalFloat(s string) (string, bool) {
	mant, exp := s, ""
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant, exp = s[:i], s[i+1:]
		if exp != "" && (exp[0] == '+' || exp[0] == '-') {
			exp = exp[1:]
		}
		if !validDigitPart(exp) {
			return "", false
		}
	}
	intPart, frac, hasDot := strings.Cut(mant, ".")
	if intPart == "" && frac == "" {
		return "", false
	}
	if intPart != "" && !validDigitPart(intPart) {
		return "", false
	}
	if hasDot && frac != "" && !validDigitPart(frac) {
		return "", false
	}
	return strings.ReplaceAll(s, "_", ""), true
}

// validDigitPart reports whether s is digits with single underscores
// strictly between digits.
func validDigitPart(s string) bool {
	if s == "" {
		return false
	}
	prevDigit := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			prevDigit = true
		case c == '_' && prevDigit && i+1 < len(s):
			prevDigit = false
		default:
			return false
		}
	}
	return prevDigit
}

// parsePyInt parses a string with Python int() base-10 syntax.
func parsePyInt(s string) (int64, bool) {
	clean, ok := pyIntDigits(s)
	if !ok {
		return 0, false
	}
	i, err := strconv.ParseInt(clean, 10, 64)
	if err != nil {
		return 0, false
	}
	return i, true
}

// ParseBigInt parses a string with Python int() base-10 syntax, of any
// size (ToInt's strings stop at int64).
func ParseBigInt(s string) (*big.Int, bool) {
	clean, ok := pyIntDigits(s)
	if !ok {
		return nil, false
	}
	return new(big.Int).SetString(clean, 10)
}

// pyIntDigits checks s against Python's int() base-10 syntax and returns
// it as plain ASCII digits with an optional minus sign.
func pyIntDigits(s string) (string, bool) {
	body := strings.TrimFunc(asciiNumeral(s), unicode.IsSpace)
	neg := false
	if body != "" && (body[0] == '+' || body[0] == '-') {
		neg = body[0] == '-'
		body = body[1:]
	}
	if !validDigitPart(body) {
		return "", false
	}
	clean := strings.ReplaceAll(body, "_", "")
	if neg {
		clean = "-" + clean
	}
	return clean, true
}

// ParseBigIntBase parses s as Python's int(s, base) does, for base 0 or
// 2..36: surrounding whitespace and Unicode decimal digits are read as
// int(s) reads them, a sign may lead, a 0b/0o/0x prefix (any case) may
// name the base it matches (base 0 takes the base from it, else 10,
// where a non-zero number may not have a leading zero), and single
// underscores may separate digits and follow a prefix. ok is false for
// anything Python refuses.
func ParseBigIntBase(s string, base int) (*big.Int, bool) {
	if base != 0 && (base < 2 || base > 36) {
		return nil, false
	}
	body := strings.TrimFunc(asciiNumeral(s), unicode.IsSpace)
	neg := false
	if body != "" && (body[0] == '+' || body[0] == '-') {
		neg = body[0] == '-'
		body = body[1:]
	}
	prefixed := false
	if len(body) >= 2 && body[0] == '0' {
		p := 0
		switch body[1] {
		case 'x', 'X':
			p = 16
		case 'o', 'O':
			p = 8
		case 'b', 'B':
			p = 2
		}
		if p != 0 && (base == 0 || base == p) {
			base, body, prefixed = p, body[2:], true
		}
	}
	decimal0 := base == 0
	if decimal0 {
		base = 10
	}
	// Digits, each below base, with single underscores between them (one
	// may also follow a prefix).
	var digits strings.Builder
	prevDigit := prefixed
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c == '_' {
			if !prevDigit || i+1 == len(body) {
				return nil, false
			}
			prevDigit = false
			continue
		}
		var d int
		switch {
		case c >= '0' && c <= '9':
			d = int(c - '0')
		case c >= 'a' && c <= 'z':
			d = int(c-'a') + 10
		case c >= 'A' && c <= 'Z':
			d = int(c-'A') + 10
		default:
			return nil, false
		}
		if d >= base {
			return nil, false
		}
		digits.WriteByte(c)
		prevDigit = true
	}
	text := digits.String()
	if text == "" {
		return nil, false
	}
	if decimal0 && text[0] == '0' && strings.Trim(text, "0") != "" {
		return nil, false // int("010", 0): leading zeros in a decimal
	}
	z, ok := new(big.Int).SetString(text, base)
	if !ok {
		return nil, false
	}
	if neg {
		z.Neg(z)
	}
	return z, true
}

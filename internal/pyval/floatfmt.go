package pyval

import (
	"math"
	"strconv"
	"strings"

	"github.com/abstractframework/abstractgateway/internal/pyjson"
)

// FormatFloat returns Python's repr of a float: the shortest digits that
// round-trip, in fixed notation when the decimal exponent is in [-4, 16) and
// in exponent notation otherwise (at least two exponent digits, explicit
// sign: 1e-05, 1e+16, 1.5e+20). Integral values in fixed notation get ".0".
// Special values are inf, -inf and nan.
func FormatFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	// Finite values are written as JSON writes them (the same repr).
	return pyjson.FormatFloat(f)
}

// exponentSuffix renders e+XX / e-XX with at least two digits.
func exponentSuffix(exp int) string {
	sign := "+"
	if exp < 0 {
		sign = "-"
		exp = -exp
	}
	e := strconv.Itoa(exp)
	if len(e) < 2 {
		e = "0" + e
	}
	return "e" + sign + e
}

// fixedFromDigits places the decimal point for digits whose first digit has
// decimal exponent exp. With dotZero, integral results end in ".0".
func fixedFromDigits(digits string, exp int, dotZero bool) string {
	var intPart, frac string
	switch {
	case exp < 0:
		intPart = "0"
		frac = strings.Repeat("0", -exp-1) + digits
	case exp+1 >= len(digits):
		intPart = digits + strings.Repeat("0", exp+1-len(digits))
	default:
		intPart = digits[:exp+1]
		frac = digits[exp+1:]
	}
	if frac == "" {
		if dotZero {
			return intPart + ".0"
		}
		return intPart
	}
	return intPart + "." + frac
}

// mantissa renders digits as d[.ddd].
func mantissa(digits string) string {
	if len(digits) == 1 {
		return digits
	}
	return digits[:1] + "." + digits[1:]
}

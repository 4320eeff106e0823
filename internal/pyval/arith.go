package pyval

import (
	"errors"
	"math"
	"strconv"
	"strings"
)

// ErrZeroDivision is returned by the integer helpers on a zero divisor.
var ErrZeroDivision = errors.New("integer division or modulo by zero")

// Round implements Python's round(v, ndigits) for floats: round half to
// even on the exact binary value (round(2.675, 2) == 2.67, round(0.5) ==
// 0.0, round(1.5) == 2.0). Negative ndigits round to tens, hundreds, ….
// NaN and infinities are returned unchanged.
func Round(v float64, ndigits int) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) || v == 0 {
		return v
	}
	if ndigits > 330 {
		return v
	}
	if ndigits < -330 {
		return math.Copysign(0, v)
	}
	// The exact decimal expansion of any float64 has at most 1074 fraction
	// digits, so this text is exact.
	exact := strconv.FormatFloat(math.Abs(v), 'f', 1100, 64)
	intPart, frac, _ := strings.Cut(exact, ".")
	digits := intPart + frac
	point := len(intPart) // digits[:point] is the integer part
	keep := point + ndigits
	var rounded string
	switch {
	case keep < 0:
		rounded = "0"
		point = 1
		keep = 1
	case keep >= len(digits):
		return v
	default:
		rounded = roundDigitsHalfEven(digits, keep)
		if len(rounded) > keep { // carry added a leading digit
			point++
			keep++
		}
	}
	var text string
	if keep <= point {
		text = rounded + strings.Repeat("0", point-keep)
	} else {
		text = rounded[:point] + "." + rounded[point:]
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil && !isRangeErr(err) {
		return v
	}
	return math.Copysign(f, v)
}

// roundDigitsHalfEven keeps the first keep digits of digits, rounding the
// rest half to even. The result may be one digit longer after a carry.
func roundDigitsHalfEven(digits string, keep int) string {
	head := []byte(digits[:keep])
	rest := digits[keep:]
	up := false
	if rest != "" {
		switch {
		case rest[0] > '5':
			up = true
		case rest[0] == '5':
			if strings.TrimRight(rest[1:], "0") != "" {
				up = true
			} else {
				up = keep > 0 && (head[keep-1]-'0')%2 == 1
			}
		}
	}
	if !up {
		if keep == 0 {
			return "0"
		}
		return string(head)
	}
	i := keep - 1
	for i >= 0 {
		if head[i] == '9' {
			head[i] = '0'
			i--
			continue
		}
		head[i]++
		break
	}
	if i < 0 {
		head = append([]byte{'1'}, head...)
	}
	return string(head)
}

// FloatMod implements Python's float a % b: the result has the sign of b
// (floored modulo). b == 0 yields NaN; callers report the error.
func FloatMod(a, b float64) float64 {
	if b == 0 {
		return math.NaN()
	}
	m := math.Mod(a, b)
	if m != 0 {
		if (b < 0) != (m < 0) {
			m += b
		}
	} else {
		m = math.Copysign(0, b)
	}
	return m
}

// FloatFloorDiv implements Python's float a // b (floor of the quotient).
func FloatFloorDiv(a, b float64) float64 {
	if b == 0 {
		return math.NaN()
	}
	m := math.Mod(a, b)
	div := (a - m) / b
	if m != 0 && (b < 0) != (m < 0) {
		div--
	}
	if div == 0 {
		return math.Copysign(0, a/b)
	}
	f := math.Floor(div)
	if div-f > 0.5 {
		f++
	}
	return f
}

// FloorDiv implements Python's int a // b (rounds toward negative infinity).
func FloorDiv(a, b int64) (int64, error) {
	if b == 0 {
		return 0, ErrZeroDivision
	}
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q, nil
}

// IntMod implements Python's int a % b (the result has the sign of b).
func IntMod(a, b int64) (int64, error) {
	if b == 0 {
		return 0, ErrZeroDivision
	}
	m := a % b
	if m != 0 && ((m < 0) != (b < 0)) {
		m += b
	}
	return m, nil
}

// Errors of FloatPow, one for each exception CPython's float ** raises.
var (
	// ErrPowZeroToNegative is Python's ZeroDivisionError for 0.0 ** -y.
	ErrPowZeroToNegative = errors.New("0.0 cannot be raised to a negative power")
	// ErrPowComplex stands for a negative base with a non-integral
	// exponent, where Python 3 returns a complex number.
	ErrPowComplex = errors.New("negative number cannot be raised to a fractional power (complex result)")
	// ErrPowOverflow is Python's OverflowError (errno ERANGE).
	ErrPowOverflow = errors.New("numerical result out of range")
)

// FloatPow implements Python's float ** float bit for bit as CPython 3.11
// on Linux computes it: the special cases of float_pow
// (Objects/floatobject.c) are settled here exactly as CPython orders them,
// and the rest goes to libmPow, a port of glibc's pow (see pow.go).
//
// Its errors are those of Python: zero to a negative finite power
// (ErrPowZeroToNegative), a negative finite base with a finite
// non-integral exponent (ErrPowComplex; Python would produce a complex
// number) and overflow (ErrPowOverflow, also when the modulus of that
// complex result overflows, as Python raises OverflowError then). An
// infinite exponent is never an error (0.0 ** -inf is inf), as CPython
// settles it before looking at a zero base; underflow is not an error
// either (it gives 0.0 or -0.0).
func FloatPow(base, exp float64) (float64, error) {
	return floatPow(base, exp, powFused)
}

// floatPow is FloatPow with libmPow's rounding flavour chosen by fused.
func floatPow(base, exp float64, fused bool) (float64, error) {
	switch {
	case exp == 0: // x**0 is 1, even for a NaN x
		return 1, nil
	case math.IsNaN(base):
		return base, nil
	case math.IsNaN(exp): // 1**nan is 1
		if base == 1 {
			return 1, nil
		}
		return exp, nil
	case math.IsInf(exp, 0):
		a := math.Abs(base)
		switch {
		case a == 1:
			return 1, nil
		case (exp > 0) == (a > 1):
			return math.Inf(1), nil
		default:
			return 0, nil
		}
	case math.IsInf(base, 0):
		odd := isOddInteger(exp)
		if exp > 0 {
			if odd {
				return base, nil
			}
			return math.Abs(base), nil
		}
		if odd {
			return math.Copysign(0, base), nil
		}
		return 0, nil
	case base == 0:
		if exp < 0 {
			return 0, ErrPowZeroToNegative
		}
		if isOddInteger(exp) {
			return base, nil // keeps the sign of a -0.0 base
		}
		return 0, nil
	}
	negate := false
	if base < 0 {
		if exp != math.Floor(exp) {
			// Python hands this to complex **, whose modulus is
			// pow(|base|, exp): it raises OverflowError when that
			// overflows and returns a complex number otherwise.
			if math.IsInf(libmPow(-base, exp, fused), 0) {
				return 0, ErrPowOverflow
			}
			return 0, ErrPowComplex
		}
		// An integral exponent: pow(|base|, exp), negated when exp is odd.
		base = -base
		negate = isOddInteger(exp)
	}
	if base == 1 { // also (-1) ** huge integer
		if negate {
			return -1, nil
		}
		return 1, nil
	}
	r := libmPow(base, exp, fused)
	if math.IsInf(r, 0) {
		return 0, ErrPowOverflow
	}
	if negate {
		r = -r
	}
	return r, nil
}

// isOddInteger reports whether v is an odd integer, as CPython's
// DOUBLE_IS_ODD_INTEGER (fmod(fabs(v), 2.0) == 1.0).
func isOddInteger(v float64) bool {
	return math.Mod(math.Abs(v), 2) == 1
}

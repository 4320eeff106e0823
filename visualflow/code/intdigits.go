package code

import (
	"fmt"
	"strings"
	"unicode"

	"go.starlark.net/starlark"

	"github.com/abstractframework/abstractgateway/internal/pyval"
)

// Converting between an int and its decimal text is one math/big call,
// superlinear in the number of digits, that neither the watchdog nor the
// step budget can interrupt: int("7" * 2000000) runs for seconds past any
// timeout. Python (3.10.7 and later) refuses both directions past
// maxIntDigits digits in a base that is not a power of two; so does the
// sandbox, with Python's messages.

// maxIntDigits is Python's default sys.get_int_max_str_digits().
const maxIntDigits = 4300

// checkIntDigits fails as Python does when x has more than maxIntDigits
// decimal digits (its sign not counted), without writing it: the bit
// length settles all but a narrow band around the limit.
func checkIntDigits(x starlark.Int) error {
	if _, ok := x.Int64(); ok {
		return nil
	}
	z := x.BigInt()
	// digits = floor(log10 |x|) + 1, and bits*log10(2) - 1 < log10 |x| <
	// bits*log10(2): 14,000 bits are at most 4,215 digits, 14,600 at
	// least 4,395.
	switch bits := z.BitLen(); {
	case bits < 14000:
		return nil
	case bits <= 14600 && len(strings.TrimPrefix(z.Text(10), "-")) <= maxIntDigits:
		return nil
	}
	return fmt.Errorf("Exceeds the limit (%d digits) for integer string conversion; use sys.set_int_max_str_digits() to increase the limit", maxIntDigits)
}

// checkIntStringDigits fails as Python's int(s, base) does when s has
// more than maxIntDigits digits in a base that is not a power of two
// (base 0 reads a 0b, 0o or 0x prefix, else decimal). Digits are counted
// as the letters and numerals of s, before it is parsed: a longer string
// that is not a number gets this error rather than the syntax error.
func checkIntStringDigits(s string, base int) error {
	if base == 0 {
		t := strings.TrimLeft(pyval.Strip(s), "+-")
		if len(t) > 1 && t[0] == '0' && strings.ContainsRune("bBoOxX", rune(t[1])) {
			return nil
		}
		base = 10
	}
	if base&(base-1) == 0 || len(s) <= maxIntDigits {
		return nil // a power of two: linear; or too short to pass
	}
	n := 0
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			n++
		}
	}
	if n <= maxIntDigits {
		return nil
	}
	return fmt.Errorf("Exceeds the limit (%d digits) for integer string conversion: value has %d digits; use sys.set_int_max_str_digits() to increase the limit", maxIntDigits, n)
}

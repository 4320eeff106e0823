package pyval

import (
	"math"
	"math/big"
)

// Equal implements Python ==: numbers compare by value across int, float
// and bool (1 == 1.0 == True); strings by content; lists element-wise;
// dicts by key set and values; None only equals None; other kind pairs are
// unequal. NaN is unequal to everything.
func Equal(a, b any) bool {
	na, nb := asNumber(a), asNumber(b)
	if na.kind != notNumber || nb.kind != notNumber {
		if na.kind == notNumber || nb.kind == notNumber {
			return false
		}
		c, ok := compareNumbers(na, nb)
		return ok && c == 0
	}
	switch x := a.(type) {
	case nil:
		return b == nil
	case string:
		y, ok := b.(string)
		return ok && x == y
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !Equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !Equal(xv, yv) {
				return false
			}
		}
		return true
	}
	return false
}

// Compare implements Python ordering. It returns -1, 0 or +1 and ok=true
// when a and b are orderable: numbers (incl. bools) with numbers, strings
// with strings (code-point order), lists with lists (lexicographic,
// recursively). Everything else (None, dicts, mixed kinds, NaN) is
// unsupported and returns ok=false, which the compare node maps to false.
func Compare(a, b any) (cmp int, ok bool) {
	na, nb := asNumber(a), asNumber(b)
	if na.kind != notNumber && nb.kind != notNumber {
		return compareNumbers(na, nb)
	}
	switch x := a.(type) {
	case string:
		y, ok := b.(string)
		if !ok {
			return 0, false
		}
		switch {
		case x < y: // UTF-8 byte order equals code-point order
			return -1, true
		case x > y:
			return 1, true
		}
		return 0, true
	case []any:
		y, ok := b.([]any)
		if !ok {
			return 0, false
		}
		for i := 0; i < len(x) && i < len(y); i++ {
			if Equal(x[i], y[i]) {
				continue
			}
			return Compare(x[i], y[i])
		}
		switch {
		case len(x) < len(y):
			return -1, true
		case len(x) > len(y):
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

// Less reports a < b with Python ordering; ok is false when the operands
// are not orderable.
func Less(a, b any) (less bool, ok bool) {
	c, ok := Compare(a, b)
	return ok && c < 0, ok
}

// compareNumbers compares exactly (an int64 and a float64 are compared
// without rounding). NaN is unordered.
func compareNumbers(a, b number) (int, bool) {
	if a.digits != "" || b.digits != "" {
		// A Python int past int64 compares by value, not as the float64
		// it is held in for arithmetic.
		if (a.kind == floatNumber && a.digits == "" && math.IsNaN(a.f)) || (b.kind == floatNumber && b.digits == "" && math.IsNaN(b.f)) {
			return 0, false
		}
		switch {
		case a.digits == "" && a.kind == floatNumber && math.IsInf(a.f, 0):
			return int(math.Copysign(1, a.f)), true // ±inf against an int
		case b.digits == "" && b.kind == floatNumber && math.IsInf(b.f, 0):
			return -int(math.Copysign(1, b.f)), true
		}
		x, y := exactOf(a), exactOf(b)
		if x == nil || y == nil {
			return 0, false
		}
		return x.Cmp(y), true
	}
	if a.kind != floatNumber && b.kind != floatNumber {
		switch {
		case a.i < b.i:
			return -1, true
		case a.i > b.i:
			return 1, true
		}
		return 0, true
	}
	if a.kind == floatNumber && b.kind == floatNumber {
		if math.IsNaN(a.f) || math.IsNaN(b.f) {
			return 0, false
		}
		switch {
		case a.f < b.f:
			return -1, true
		case a.f > b.f:
			return 1, true
		}
		return 0, true
	}
	if (a.kind == floatNumber && math.IsNaN(a.f)) || (b.kind == floatNumber && math.IsNaN(b.f)) {
		return 0, false
	}
	return bigOf(a).Cmp(bigOf(b)), true
}

func bigOf(n number) *big.Float {
	if n.kind == floatNumber {
		return new(big.Float).SetFloat64(n.f)
	}
	return new(big.Float).SetInt64(n.i)
}

// exactOf is n as an exact rational: a big int from its digits, an
// int64, or a finite float's exact binary value; nil for ±inf (the
// caller orders those first).
func exactOf(n number) *big.Rat {
	switch {
	case n.digits != "":
		r, ok := new(big.Rat).SetString(n.digits)
		if !ok {
			return nil
		}
		return r
	case n.kind == floatNumber:
		if math.IsInf(n.f, 0) {
			return nil
		}
		return new(big.Rat).SetFloat64(n.f)
	}
	return new(big.Rat).SetInt64(n.i)
}

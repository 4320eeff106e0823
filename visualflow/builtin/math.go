package builtin

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"

	"github.com/abstractframework/abstractgateway/internal/pyval"
)

// binaryFloat evaluates op(float(a), float(b)) with per-pin defaults.
func binaryFloat(node string, inputs map[string]any, defA, defB float64, op func(a, b float64) (float64, error)) (any, error) {
	a, err := floatInput(node, inputs, "a", defA)
	if err != nil {
		return nil, err
	}
	b, err := floatInput(node, inputs, "b", defB)
	if err != nil {
		return nil, err
	}
	return op(a, b)
}

func addNode(_ *Env, inputs map[string]any) (any, error) {
	return binaryFloat("add", inputs, 0, 0, func(a, b float64) (float64, error) { return a + b, nil })
}

func subtractNode(_ *Env, inputs map[string]any) (any, error) {
	return binaryFloat("subtract", inputs, 0, 0, func(a, b float64) (float64, error) { return a - b, nil })
}

func multiplyNode(_ *Env, inputs map[string]any) (any, error) {
	return binaryFloat("multiply", inputs, 0, 0, func(a, b float64) (float64, error) { return a * b, nil })
}

// divideNode reads b before a, like the reference (so a zero divisor is
// reported even when a is invalid).
func divideNode(_ *Env, inputs map[string]any) (any, error) {
	b, err := floatInput("divide", inputs, "b", 1)
	if err != nil {
		return nil, err
	}
	if b == 0 {
		return nil, errors.New("Division by zero")
	}
	a, err := floatInput("divide", inputs, "a", 0)
	if err != nil {
		return nil, err
	}
	return a / b, nil
}

func moduloNode(_ *Env, inputs map[string]any) (any, error) {
	b, err := floatInput("modulo", inputs, "b", 1)
	if err != nil {
		return nil, err
	}
	if b == 0 {
		return nil, errors.New("Modulo by zero")
	}
	a, err := floatInput("modulo", inputs, "a", 0)
	if err != nil {
		return nil, err
	}
	return pyval.FloatMod(a, b), nil
}

func powerNode(_ *Env, inputs map[string]any) (any, error) {
	base, err := floatInput("power", inputs, "base", 0)
	if err != nil {
		return nil, err
	}
	exp, err := floatInput("power", inputs, "exp", 1)
	if err != nil {
		return nil, err
	}
	r, err := pyval.FloatPow(base, exp)
	if err != nil {
		return nil, fmt.Errorf("power: %w", err)
	}
	return r, nil
}

func absNode(_ *Env, inputs map[string]any) (any, error) {
	v, err := floatInput("abs", inputs, "value", 0)
	if err != nil {
		return nil, err
	}
	return math.Abs(v), nil
}

// roundNode: round(float(value), int(decimals)); the result is a float.
func roundNode(_ *Env, inputs map[string]any) (any, error) {
	v, err := floatInput("round", inputs, "value", 0)
	if err != nil {
		return nil, err
	}
	d, err := pyval.ToIndex(get(inputs, "decimals", int64(0)))
	if err != nil {
		return nil, fmt.Errorf("round: input 'decimals': %w", err)
	}
	if d > math.MaxInt32 {
		d = math.MaxInt32
	} else if d < math.MinInt32 {
		d = math.MinInt32
	}
	r := pyval.Round(v, int(d))
	if math.IsInf(r, 0) && !math.IsInf(v, 0) {
		return nil, errors.New("round: rounded value too large to represent") // Python's OverflowError
	}
	return r, nil
}

// randomIntNode: uniform int in [min, max] (bounds via int(float(x)),
// fallbacks 0 and 100, swapped when reversed). As in Python, an int bound
// is rounded to a float64 first and a bound past int64 (1e20) stays exact,
// so the draw falls back to math/big when the range leaves int64.
func randomIntNode(env *Env, inputs map[string]any) (any, error) {
	lo := intBoundViaFloat(get(inputs, "min", int64(0)), 0)
	hi := intBoundViaFloat(get(inputs, "max", int64(100)), 100)
	if hi.Cmp(lo) < 0 {
		lo, hi = hi, lo
	}
	span := new(big.Int).Sub(hi, lo)
	span.Add(span, big.NewInt(1))
	if lo.IsInt64() && hi.IsInt64() && span.IsInt64() {
		return lo.Int64() + env.int64N(span.Int64()), nil
	}
	return pyval.BigIntValue(new(big.Int).Add(lo, env.bigIntN(span))), nil
}

// intBoundViaFloat is int(float(v)) as a big int, def when Python's
// conversion raises.
func intBoundViaFloat(v any, def int64) *big.Int {
	r, err := pyval.IntViaFloat(v)
	if err != nil {
		return big.NewInt(def)
	}
	switch x := r.(type) {
	case int64:
		return big.NewInt(x)
	case json.Number:
		if b, ok := new(big.Int).SetString(string(x), 10); ok {
			return b
		}
	}
	return big.NewInt(def)
}

// randomFloatNode: min + (max-min)*U[0,1) (fallbacks 0 and 1).
func randomFloatNode(env *Env, inputs map[string]any) (any, error) {
	lo, err := pyval.ToFloat(get(inputs, "min", int64(0)))
	if err != nil {
		lo = 0
	}
	hi, err := pyval.ToFloat(get(inputs, "max", int64(1)))
	if err != nil {
		hi = 1
	}
	if hi < lo {
		lo, hi = hi, lo
	}
	if hi == lo {
		return lo, nil
	}
	return lo + (hi-lo)*env.float64(), nil
}

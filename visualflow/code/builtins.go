package code

import (
	"fmt"
	"math"
	"math/big"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/abstractframework/abstractgateway/internal/pyval"
)

// predeclared returns the names visible to user code besides Starlark's
// universe (len, str, int, float, bool, list, dict, tuple, range,
// enumerate, zip, sorted, reversed, min, max, abs, any, all, type, print,
// set, …): the RestrictedPython builtins Starlark lacks.
func predeclared() starlark.StringDict {
	return starlark.StringDict{
		"sum":        starlark.NewBuiltin("sum", builtinSum),
		"round":      starlark.NewBuiltin("round", builtinRound),
		"map":        starlark.NewBuiltin("map", builtinMap),
		"filter":     starlark.NewBuiltin("filter", builtinFilter),
		"isinstance": starlark.NewBuiltin("isinstance", builtinIsinstance),
	}
}

func builtinSum(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var it starlark.Iterable
	var start starlark.Value = starlark.MakeInt(0)
	if err := starlark.UnpackPositionalArgs("sum", args, kwargs, 1, &it, &start); err != nil {
		return nil, err
	}
	acc := start
	iter := it.Iterate()
	defer iter.Done()
	var x starlark.Value
	for iter.Next(&x) {
		v, err := starlark.Binary(syntax.PLUS, acc, x)
		if err != nil {
			return nil, err
		}
		acc = v
	}
	return acc, nil
}

func builtinRound(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var x starlark.Value
	var nd starlark.Value = starlark.None
	if err := starlark.UnpackArgs("round", args, kwargs, "number", &x, "ndigits?", &nd); err != nil {
		return nil, err
	}
	if b, isBool := x.(starlark.Bool); isBool { // a Python bool is an int
		x = starlark.MakeInt(0)
		if b {
			x = starlark.MakeInt(1)
		}
	}
	f, ok := starlark.AsFloat(x)
	if !ok {
		return nil, fmt.Errorf("round: got %s, want number", x.Type())
	}
	if i, isInt := x.(starlark.Int); isInt {
		// Python rounds an int as an int, whatever ndigits.
		if nd == starlark.None {
			return i, nil
		}
		n, err := starlark.AsInt32(nd)
		if err != nil {
			return nil, fmt.Errorf("round: ndigits: %w", err)
		}
		return starlark.MakeBigInt(roundInt(i.BigInt(), n)), nil
	}
	if nd == starlark.None {
		r := pyval.Round(f, 0)
		if math.IsNaN(r) || math.IsInf(r, 0) {
			return nil, fmt.Errorf("round: cannot convert %v to integer", r)
		}
		return starlark.NumberToInt(starlark.Float(r))
	}
	n, err := starlark.AsInt32(nd)
	if err != nil {
		return nil, fmt.Errorf("round: ndigits: %w", err)
	}
	return starlark.Float(pyval.Round(f, n)), nil
}

func builtinMap(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var fn starlark.Callable
	var it starlark.Iterable
	if err := starlark.UnpackPositionalArgs("map", args, kwargs, 2, &fn, &it); err != nil {
		return nil, err
	}
	var out []starlark.Value
	iter := it.Iterate()
	defer iter.Done()
	var x starlark.Value
	for iter.Next(&x) {
		v, err := starlark.Call(th, fn, starlark.Tuple{x}, nil)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return starlark.NewList(out), nil
}

func builtinFilter(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var fn starlark.Value
	var it starlark.Iterable
	if err := starlark.UnpackPositionalArgs("filter", args, kwargs, 2, &fn, &it); err != nil {
		return nil, err
	}
	var out []starlark.Value
	iter := it.Iterate()
	defer iter.Done()
	var x starlark.Value
	for iter.Next(&x) {
		keep := x.Truth()
		if c, ok := fn.(starlark.Callable); ok {
			v, err := starlark.Call(th, c, starlark.Tuple{x}, nil)
			if err != nil {
				return nil, err
			}
			keep = v.Truth()
		}
		if keep {
			out = append(out, x)
		}
	}
	return starlark.NewList(out), nil
}

// builtinIsinstance supports the builtin type constructors (str, int,
// float, bool, list, dict, tuple, set) and tuples of them.
func builtinIsinstance(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var x, t starlark.Value
	if err := starlark.UnpackPositionalArgs("isinstance", args, kwargs, 2, &x, &t); err != nil {
		return nil, err
	}
	types := starlark.Tuple{t}
	if tt, ok := t.(starlark.Tuple); ok {
		types = tt
	}
	for _, ty := range types {
		bi, ok := ty.(*starlark.Builtin)
		if !ok {
			return nil, fmt.Errorf("isinstance: arg 2 must be a type or tuple of types")
		}
		name := bi.Name()
		if name == "str" {
			name = "string" // Starlark's name for the type str builds
		}
		got := x.Type()
		if got == name || (name == "int" && got == "bool") || (name == "float" && got == "float") {
			return starlark.True, nil
		}
	}
	return starlark.False, nil
}

// roundInt is Python's int.__round__(ndigits): x itself for ndigits >= 0,
// else x rounded to a multiple of 10**-ndigits, half to even.
func roundInt(x *big.Int, ndigits int) *big.Int {
	if ndigits >= 0 {
		return x
	}
	abs := new(big.Int).Abs(x)
	if len(abs.String()) < -ndigits { // |x| < 10**-ndigits / 10: rounds to 0
		return new(big.Int)
	}
	m := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-ndigits)), nil)
	q, r := new(big.Int).DivMod(x, m, new(big.Int)) // floor division: 0 <= r < m
	switch c := new(big.Int).Lsh(r, 1).Cmp(m); {
	case c > 0, c == 0 && q.Bit(0) == 1:
		q.Add(q, big.NewInt(1))
	}
	return q.Mul(q, m)
}

package code

import (
	"errors"
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
		"str":        starlark.NewBuiltin("str", builtinStr),
		"repr":       starlark.NewBuiltin("repr", builtinRepr),
		"int":        starlark.NewBuiltin("int", builtinInt),
		"float":      starlark.NewBuiltin("float", builtinFloat),
		"list":       universeSized("list", nil),
		"tuple":      universeSized("tuple", nil),
		"set":        universeSized("set", nil),
		"dict":       universeSized("dict", nil),
		"sorted":     sized("sorted", dropNoneKey, starlark.NewBuiltin("sorted", builtinSorted)),
		"enumerate":  universeSized("enumerate", startAsPositional),
		"max":        sized("max", withDefault, starlark.NewBuiltin("max", builtinMinMax)),
		"min":        sized("min", withDefault, starlark.NewBuiltin("min", builtinMinMax)),
		"hash":       starlark.NewBuiltin("hash", builtinHash),
		"reversed":   universeSized("reversed", nil),
		// The builtins whose result can be far larger than their
		// arguments (amplify.go).
		"zip":     starlark.NewBuiltin("zip", builtinZip),
		"bytes":   starlark.NewBuiltin("bytes", builtinBytes),
		"getattr": starlark.NewBuiltin("getattr", builtinGetattr),
		"fail":    starlark.NewBuiltin("fail", builtinFail),
		"print":   starlark.NewBuiltin("print", builtinPrint),
		"range":   starlark.NewBuiltin("range", builtinRange),
	}
}

// universeSized wraps Starlark's builtin name: adapt, when not nil, first
// turns Python's arguments into Starlark's (or answers the call itself);
// then a sized first argument longer than the memory limit allows is
// refused before Starlark allocates for all of it at once (a fatal
// out-of-memory error otherwise: list(range(1 << 40))).
func universeSized(name string, adapt func(args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Tuple, []starlark.Tuple, starlark.Value, error)) *starlark.Builtin {
	return sized(name, adapt, starlark.Universe[name])
}

// sized is universeSized with inner in place of Starlark's builtin.
func sized(name string, adapt func(args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Tuple, []starlark.Tuple, starlark.Value, error), inner starlark.Value) *starlark.Builtin {
	return starlark.NewBuiltin(name, func(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		if adapt != nil {
			var answer starlark.Value
			var err error
			if args, kwargs, answer, err = adapt(args, kwargs); err != nil || answer != nil {
				return answer, err
			}
		}
		if g := threadGuard(th); g != nil && len(args) > 0 {
			// A codepoints iterable's items are new values (itemCost).
			if n := itemBound(args[0]); g.maxItems >= 0 && int64(n) > g.maxItems/itemCost(args[0]) {
				return nil, g.refuse(th, name+"()", n)
			}
			if name == "set" || name == "dict" {
				// Colliding hashes make the insertions quadratic
				// (watched.go): watched with or without a memory limit.
				args = append(starlark.Tuple{watchIterable(th, g, args[0])}, args[1:]...)
			}
		}
		return starlark.Call(th, inner, args, kwargs)
	})
}

// dropNoneKey drops sorted's key=None, Python's "no key".
func dropNoneKey(args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Tuple, []starlark.Tuple, starlark.Value, error) {
	return args, withoutKwarg(kwargs, "key", func(v starlark.Value) bool { return v == starlark.None }), nil, nil
}

// startAsPositional passes enumerate's start= as Starlark's second
// positional argument.
func startAsPositional(args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Tuple, []starlark.Tuple, starlark.Value, error) {
	for _, kv := range kwargs {
		if kv[0] == starlark.String("start") && len(args) == 1 {
			return starlark.Tuple{args[0], kv[1]}, withoutKwarg(kwargs, "start", nil), nil, nil
		}
	}
	return args, kwargs, nil, nil
}

// withDefault is Python's default= of min and max: the answer for an
// empty iterable (only with one iterable argument, as Python allows).
func withDefault(args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Tuple, []starlark.Tuple, starlark.Value, error) {
	for _, kv := range kwargs {
		if kv[0] != starlark.String("default") {
			continue
		}
		if len(args) != 1 {
			return nil, nil, nil, errors.New("cannot specify a default with multiple positional arguments")
		}
		rest := withoutKwarg(kwargs, "default", nil)
		it, ok := args[0].(starlark.Iterable)
		if !ok {
			return args, rest, nil, nil // Starlark's own error
		}
		iter := it.Iterate()
		var first starlark.Value
		empty := !iter.Next(&first)
		iter.Done()
		if empty {
			return nil, nil, kv[1], nil
		}
		return args, rest, nil, nil
	}
	return args, kwargs, nil, nil
}

// withoutKwarg returns kwargs without name (only when drop, if given,
// says so of its value).
func withoutKwarg(kwargs []starlark.Tuple, name string, drop func(starlark.Value) bool) []starlark.Tuple {
	var out []starlark.Tuple
	for _, kv := range kwargs {
		if kv[0] == starlark.String(name) && (drop == nil || drop(kv[1])) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// builtinInt is Starlark's int() except for a string argument, alone or
// with a base (0 or 2..36), which is read with Python's syntax:
// surrounding whitespace and underscores between digits are allowed, and
// the value may be of any size.
//
// A string of more than maxIntDigits digits in a base that is not a power
// of two is refused as Python refuses it (intdigits.go).
func builtinInt(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if s, ok := soleString(args, kwargs); ok {
		if err := checkIntStringDigits(s, 10); err != nil {
			return nil, err
		}
		if z, ok := pyval.ParseBigInt(s); ok {
			return starlark.MakeBigInt(z), nil
		}
		return nil, fmt.Errorf("invalid literal for int() with base 10: %s", pyval.QuoteString(s))
	}
	if s, base, ok := stringAndBase(args, kwargs); ok && (base == 0 || 2 <= base && base <= 36) {
		if err := checkIntStringDigits(s, base); err != nil {
			return nil, err
		}
		// Python's syntax with a base too (Starlark's refuses whitespace
		// and underscores, and "0x_1f").
		if z, ok := pyval.ParseBigIntBase(s, base); ok {
			return starlark.MakeBigInt(z), nil
		}
		return nil, fmt.Errorf("invalid literal for int() with base %d: %s", base, pyval.QuoteString(s))
	}
	return starlark.Call(th, starlark.Universe["int"], args, kwargs)
}

// builtinFloat is Starlark's float() except for a string argument, read
// with Python's syntax (whitespace, underscores, inf/infinity/nan).
func builtinFloat(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if s, ok := soleString(args, kwargs); ok {
		f, err := pyval.ToFloat(s)
		if err != nil {
			return nil, err
		}
		return starlark.Float(f), nil
	}
	return starlark.Call(th, starlark.Universe["float"], args, kwargs)
}

// stringAndBase returns the arguments of int(s, base) or int(s,
// base=base) with a string s and an int base; not ok otherwise (Starlark
// reports the errors).
func stringAndBase(args starlark.Tuple, kwargs []starlark.Tuple) (string, int, bool) {
	var baseArg starlark.Value
	switch {
	case len(args) == 2 && len(kwargs) == 0:
		baseArg = args[1]
	case len(args) == 1 && len(kwargs) == 1 && kwargs[0][0] == starlark.String("base"):
		baseArg = kwargs[0][1]
	default:
		return "", 0, false
	}
	s, ok := args[0].(starlark.String)
	if !ok {
		return "", 0, false
	}
	base, err := starlark.AsInt32(baseArg)
	if err != nil {
		return "", 0, false
	}
	return string(s), base, true
}

// soleString returns the argument of a call with one positional string.
func soleString(args starlark.Tuple, kwargs []starlark.Tuple) (string, bool) {
	if len(args) != 1 || len(kwargs) != 0 {
		return "", false
	}
	s, ok := args[0].(starlark.String)
	return string(s), ok
}

func builtinSum(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var it starlark.Iterable
	var start starlark.Value = starlark.MakeInt(0)
	if err := starlark.UnpackArgs("sum", args, kwargs, "iterable", &it, "start?", &start); err != nil {
		return nil, err
	}
	acc := boolAsInt(start)
	iter := it.Iterate()
	defer iter.Done()
	var x starlark.Value
	for i := 0; iter.Next(&x); i++ {
		if err := pulse(th, i); err != nil {
			return nil, err
		}
		v, err := starlark.Binary(syntax.PLUS, acc, boolAsInt(x))
		if err != nil {
			return nil, err
		}
		acc = v
	}
	return acc, nil
}

// boolAsInt is x, or 0 or 1 for a bool: a Python bool is an int
// (sum([True, True]) is 2), a Starlark one is not.
func boolAsInt(x starlark.Value) starlark.Value {
	if b, isBool := x.(starlark.Bool); isBool {
		if b {
			return starlark.MakeInt(1)
		}
		return starlark.MakeInt(0)
	}
	return x
}

func builtinRound(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var x starlark.Value
	var nd starlark.Value = starlark.None
	if err := starlark.UnpackArgs("round", args, kwargs, "number", &x, "ndigits?", &nd); err != nil {
		return nil, err
	}
	x = boolAsInt(x) // a Python bool is an int
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
	r := pyval.Round(f, n)
	if math.IsInf(r, 0) && !math.IsInf(f, 0) {
		return nil, errors.New("round: rounded value too large to represent") // Python's OverflowError
	}
	return starlark.Float(r), nil
}

// builtinMap is Python's map(fn, *iterables): fn of one item of each,
// until the shortest ends.
func builtinMap(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if len(kwargs) > 0 {
		return nil, errors.New("map: unexpected keyword arguments")
	}
	if len(args) < 2 {
		return nil, fmt.Errorf("map: got %d arguments, want at least 2", len(args))
	}
	fn, ok := args[0].(starlark.Callable)
	if !ok {
		return nil, fmt.Errorf("map: got %s, want a function", args[0].Type())
	}
	iters := make([]starlark.Iterator, len(args)-1)
	for i, a := range args[1:] {
		it, ok := a.(starlark.Iterable)
		if !ok {
			return nil, fmt.Errorf("map: argument %d: got %s, want an iterable", i+2, a.Type())
		}
		iters[i] = it.Iterate()
		defer iters[i].Done()
	}
	var out []starlark.Value
	for n := 0; ; n++ {
		if err := pulse(th, n); err != nil {
			return nil, err
		}
		call := make(starlark.Tuple, len(iters))
		for i, it := range iters {
			if !it.Next(&call[i]) {
				return starlark.NewList(out), nil
			}
		}
		v, err := starlark.Call(th, fn, call, nil)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
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
	for i := 0; iter.Next(&x); i++ {
		if err := pulse(th, i); err != nil {
			return nil, err
		}
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

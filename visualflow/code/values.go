package code

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"sort"
	"strings"

	"go.starlark.net/starlark"
)

// ToStarlark converts a JSON value to a Starlark value.
func ToStarlark(v any) (starlark.Value, error) {
	switch x := v.(type) {
	case nil:
		return starlark.None, nil
	case bool:
		return starlark.Bool(x), nil
	case string:
		return starlark.String(x), nil
	case int:
		return starlark.MakeInt(x), nil
	case int64:
		return starlark.MakeInt64(x), nil
	case float64:
		return starlark.Float(x), nil
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return starlark.MakeInt64(i), nil
		}
		if !strings.ContainsAny(string(x), ".eE") {
			// An int past int64 (kept as its digits) stays an int, as in Python.
			if n, ok := new(big.Int).SetString(string(x), 10); ok {
				return starlark.MakeBigInt(n), nil
			}
		}
		f, err := x.Float64()
		if err != nil {
			return nil, fmt.Errorf("invalid number %q", x)
		}
		return starlark.Float(f), nil
	case []any:
		elems := make([]starlark.Value, len(x))
		for i, e := range x {
			sv, err := ToStarlark(e)
			if err != nil {
				return nil, err
			}
			elems[i] = sv
		}
		return starlark.NewList(elems), nil
	case map[string]any:
		d := starlark.NewDict(len(x))
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			sv, err := ToStarlark(x[k])
			if err != nil {
				return nil, err
			}
			if err := d.SetKey(starlark.String(k), sv); err != nil {
				return nil, err
			}
		}
		return d, nil
	}
	return nil, fmt.Errorf("cannot convert %T to a Starlark value", v)
}

// FromStarlark converts a Starlark value back to JSON. Dict keys that are
// not strings are converted with str(); tuples and sets become lists.
func FromStarlark(v starlark.Value) (any, error) {
	return fromStarlark(v, 0)
}

func fromStarlark(v starlark.Value, depth int) (any, error) {
	if depth > 200 {
		return nil, fmt.Errorf("value nested too deeply")
	}
	switch x := v.(type) {
	case starlark.NoneType:
		return nil, nil
	case starlark.Bool:
		return bool(x), nil
	case starlark.String:
		return string(x), nil
	case starlark.Int:
		if i, ok := x.Int64(); ok {
			return i, nil
		}
		f, _ := new(big.Float).SetInt(x.BigInt()).Float64()
		return f, nil
	case starlark.Float:
		f := float64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return f, nil
		}
		return f, nil
	case *starlark.List:
		return iterList(x, x.Len(), depth)
	case starlark.Tuple:
		return iterList(x, x.Len(), depth)
	case *starlark.Set:
		return iterList(x, x.Len(), depth)
	case *starlark.Dict:
		out := make(map[string]any, x.Len())
		for _, item := range x.Items() {
			k := item[0]
			ks, ok := k.(starlark.String)
			key := string(ks)
			if !ok {
				key = k.String()
			}
			val, err := fromStarlark(item[1], depth+1)
			if err != nil {
				return nil, err
			}
			out[key] = val
		}
		return out, nil
	}
	return nil, fmt.Errorf("cannot return a value of type %s", v.Type())
}

func iterList(it starlark.Iterable, n, depth int) ([]any, error) {
	out := make([]any, 0, n)
	iter := it.Iterate()
	defer iter.Done()
	var e starlark.Value
	for iter.Next(&e) {
		v, err := fromStarlark(e, depth+1)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

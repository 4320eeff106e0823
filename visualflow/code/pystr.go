package code

import (
	"strings"

	"go.starlark.net/starlark"

	"github.com/abstractframework/abstractgateway/internal/pyval"
)

// builtinStr and builtinRepr are Python's str() and repr() over Starlark
// values: floats as Python writes them (1000000.0, not 1e+06) and strings
// inside containers in Python's quotes ('a', not "a"). Values with no
// Python counterpart (functions) are written as Starlark writes them.
func builtinStr(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var x starlark.Value = starlark.String("")
	if err := starlark.UnpackPositionalArgs("str", args, kwargs, 0, &x); err != nil {
		return nil, err
	}
	if s, ok := x.(starlark.String); ok {
		return s, nil
	}
	var sb strings.Builder
	writePyRepr(&sb, x, nil)
	return starlark.String(sb.String()), nil
}

func builtinRepr(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var x starlark.Value
	if err := starlark.UnpackPositionalArgs("repr", args, kwargs, 1, &x); err != nil {
		return nil, err
	}
	var sb strings.Builder
	writePyRepr(&sb, x, nil)
	return starlark.String(sb.String()), nil
}

// writePyRepr writes Python's repr of x. open holds the containers being
// written around x: one met again is a cycle, which Python writes as
// [...] or {...} (Starlark's own str stops there too; recursing on would
// overflow the stack and kill the process).
func writePyRepr(sb *strings.Builder, x starlark.Value, open []starlark.Value) {
	switch x.(type) {
	case *starlark.List, *starlark.Dict, *starlark.Set:
		for _, o := range open {
			if o == x {
				if _, ok := x.(*starlark.List); ok {
					sb.WriteString("[...]")
				} else {
					sb.WriteString("{...}")
				}
				return
			}
		}
		open = append(open, x)
	}
	switch v := x.(type) {
	case starlark.String:
		sb.WriteString(pyval.Repr(string(v)))
	case starlark.Float:
		sb.WriteString(pyval.Repr(float64(v)))
	case *starlark.List:
		sb.WriteByte('[')
		for i := 0; i < v.Len(); i++ {
			if i > 0 {
				sb.WriteString(", ")
			}
			writePyRepr(sb, v.Index(i), open)
		}
		sb.WriteByte(']')
	case starlark.Tuple:
		sb.WriteByte('(')
		for i, e := range v {
			if i > 0 {
				sb.WriteString(", ")
			}
			writePyRepr(sb, e, open)
		}
		if len(v) == 1 {
			sb.WriteByte(',')
		}
		sb.WriteByte(')')
	case *starlark.Dict:
		sb.WriteByte('{')
		for i, kv := range v.Items() { // insertion order, as Python's
			if i > 0 {
				sb.WriteString(", ")
			}
			writePyRepr(sb, kv[0], open)
			sb.WriteString(": ")
			writePyRepr(sb, kv[1], open)
		}
		sb.WriteByte('}')
	case *starlark.Set:
		if v.Len() == 0 {
			sb.WriteString("set()")
			return
		}
		sb.WriteByte('{')
		iter := v.Iterate()
		defer iter.Done()
		var e starlark.Value
		for i := 0; iter.Next(&e); i++ {
			if i > 0 {
				sb.WriteString(", ")
			}
			writePyRepr(sb, e, open)
		}
		sb.WriteByte('}')
	default: // None, True/False, ints: the same text in both languages
		sb.WriteString(x.String())
	}
}

package code

import (
	"errors"
	"fmt"
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
	return pyRepr(th, x)
}

func builtinRepr(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var x starlark.Value
	if err := starlark.UnpackPositionalArgs("repr", args, kwargs, 1, &x); err != nil {
		return nil, err
	}
	return pyRepr(th, x)
}

// pyRepr is Python's repr of x; th (may be nil) gives the sandbox's
// cancellation.
func pyRepr(th *starlark.Thread, x starlark.Value) (starlark.String, error) {
	var sb strings.Builder
	w := &reprWriter{sb: &sb, th: th}
	if th != nil {
		w.g = limitGuard(th)
	}
	if err := w.checkAmplified(x); err != nil {
		return "", err
	}
	if err := w.write(x); err != nil {
		return "", err
	}
	if err := w.checkSize(); err != nil {
		return "", err
	}
	return starlark.String(sb.String()), nil
}

// checkAmplified refuses the repr of a container whose text would be
// past the memory limit before writing any of it: a list sharing one long
// string many times has a text far larger than the list. (The walk
// counts a lower bound, each shared container once.)
func (w *reprWriter) checkAmplified(x starlark.Value) error {
	if w.g == nil {
		return nil
	}
	switch x.(type) {
	case *starlark.List, starlark.Tuple, *starlark.Dict, *starlark.Set:
		z := newTextSize(w.th, w.g)
		z.python, z.lower = true, true
		z.value(x)
		return z.refusal("str() or repr()")
	}
	return nil
}

// checkSize refuses a text past the memory limit. It is checked before
// each value is written, so the text passes the limit by at most one
// value's repr (a string's, which is in memory): a list sharing one long
// string many times has a text far larger than the list, which
// strings.Builder would grow in one allocation between two pulses.
func (w *reprWriter) checkSize() error {
	if w.g == nil || int64(w.sb.Len()) <= w.g.maxBytes {
		return nil
	}
	return w.g.refuseReason(w.th, fmt.Sprintf("str() or repr() would build a string of at least %s, which would exceed the memory limit of %s",
		sizeText(int64(w.sb.Len())), sizeText(w.g.maxBytes)))
}

// maxReprDepth is how deep repr nests, as Python's default recursion
// limit lets it (past it Python raises RecursionError).
const maxReprDepth = 1000

// reprWriter writes Python's repr of Starlark values.
type reprWriter struct {
	sb *strings.Builder
	th *starlark.Thread // for the sandbox's cancellation; may be nil
	g  *guard           // th's guard when it has a memory limit, else nil
	// open holds the containers being written around the current value:
	// one met again is a cycle, which Python writes as [...] or {...}
	// (recursing on would overflow the stack and kill the process).
	open  []starlark.Value
	count int
}

func (w *reprWriter) write(x starlark.Value) error {
	if w.th != nil {
		if err := pulse(w.th, w.count); err != nil {
			return err
		}
		if err := w.checkSize(); err != nil {
			return err
		}
	}
	w.count++
	sb := w.sb
	switch x.(type) {
	case *starlark.List, *starlark.Dict, *starlark.Set, starlark.Tuple:
		_, isTuple := x.(starlark.Tuple) // a slice: not comparable, and never its own member
		for _, o := range w.open {
			if _, ot := o.(starlark.Tuple); !isTuple && !ot && o == x {
				if _, ok := x.(*starlark.List); ok {
					sb.WriteString("[...]")
				} else {
					sb.WriteString("{...}")
				}
				return nil
			}
		}
		if len(w.open) >= maxReprDepth {
			return errors.New("maximum recursion depth exceeded while getting the repr of an object")
		}
		w.open = append(w.open, x)
		defer func() { w.open = w.open[:len(w.open)-1] }()
	}
	switch v := x.(type) {
	case starlark.String:
		// Its repr is at least as long as it is: refused before quoting.
		if w.g != nil && int64(sb.Len())+int64(len(v))+2 > w.g.maxBytes {
			return w.g.refuseReason(w.th, fmt.Sprintf("str() or repr() would build a string of at least %s, which would exceed the memory limit of %s",
				sizeText(int64(sb.Len())+int64(len(v))+2), sizeText(w.g.maxBytes)))
		}
		sb.WriteString(pyval.QuoteString(string(v))) // pyval.Repr of a string
	case starlark.Float:
		sb.WriteString(pyval.Repr(float64(v)))
	case starlark.Int:
		if err := checkIntDigits(v); err != nil {
			return err // Python's limit; writing it would not stop in time
		}
		sb.WriteString(v.String())
	case *starlark.List:
		sb.WriteByte('[')
		for i := 0; i < v.Len(); i++ {
			if i > 0 {
				sb.WriteString(", ")
			}
			if err := w.write(v.Index(i)); err != nil {
				return err
			}
		}
		sb.WriteByte(']')
	case starlark.Tuple:
		sb.WriteByte('(')
		for i, e := range v {
			if i > 0 {
				sb.WriteString(", ")
			}
			if err := w.write(e); err != nil {
				return err
			}
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
			if err := w.write(kv[0]); err != nil {
				return err
			}
			sb.WriteString(": ")
			if err := w.write(kv[1]); err != nil {
				return err
			}
		}
		sb.WriteByte('}')
	case *starlark.Set:
		if v.Len() == 0 {
			sb.WriteString("set()")
			return nil
		}
		sb.WriteByte('{')
		iter := v.Iterate()
		defer iter.Done()
		var e starlark.Value
		for i := 0; iter.Next(&e); i++ {
			if i > 0 {
				sb.WriteString(", ")
			}
			if err := w.write(e); err != nil {
				return err
			}
		}
		sb.WriteByte('}')
	default: // None, True/False: the same text in both languages
		sb.WriteString(x.String())
	}
	return nil
}

package code

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"sort"
	"strconv"
	"strings"

	"go.starlark.net/starlark"

	"github.com/abstractframework/abstractgateway/internal/pyjson"
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
// not strings are converted with Python's str(); tuples and sets become
// lists.
func FromStarlark(v starlark.Value) (any, error) {
	return (&converter{}).value(v)
}

// converter turns a result into JSON. It keeps the key path for its
// errors and, under a sandbox, stops when the watchdog does: a result
// sharing sub-lists expands to far more values than Starlark held.
type converter struct {
	g *guard // nil outside a sandbox
	// th is the sandbox's thread (nil outside one): the repr of a key that
	// is not a string is guarded by its limits, as str() is.
	th    *starlark.Thread
	path  []string
	count int
	// bytes counts the strings' bytes: a result sharing one long string
	// many times is small in Starlark and in Go, but its JSON, which the
	// run's stores write in one buffer, is not.
	bytes int64
}

func (c *converter) value(v starlark.Value) (any, error) {
	if len(c.path) > pyjson.MaxDepth {
		// Deeper than the run's stores write (Python's json.dumps stops near
		// its recursion limit of 1,000): refused here, naming the path.
		return nil, c.errorf("value nested too deeply")
	}
	if c.count++; c.g != nil && c.count&1023 == 0 {
		if r := c.g.stop.Load(); r != nil {
			return nil, errors.New(*r)
		}
	}
	switch x := v.(type) {
	case starlark.NoneType:
		return nil, nil
	case starlark.Bool:
		return bool(x), nil
	case starlark.String:
		if err := c.countBytes(len(x)); err != nil {
			return nil, err
		}
		return string(x), nil
	case starlark.Int:
		if i, ok := x.Int64(); ok {
			return i, nil
		}
		f, _ := new(big.Float).SetInt(x.BigInt()).Float64()
		return f, nil
	case starlark.Float:
		return float64(x), nil
	case *starlark.List:
		return c.list(x, x.Len())
	case starlark.Tuple:
		return c.list(x, x.Len())
	case *starlark.Set:
		return c.list(x, x.Len())
	case *starlark.Dict:
		out := make(map[string]any, x.Len())
		for _, item := range x.Items() {
			key, ok := item[0].(starlark.String)
			if !ok {
				var err error
				if key, err = pyRepr(c.th, item[0]); err != nil {
					return nil, c.errorf("key: %v", err)
				}
			}
			if err := c.countBytes(len(key)); err != nil {
				return nil, err
			}
			c.path = append(c.path, "."+string(key))
			val, err := c.value(item[1])
			c.path = c.path[:len(c.path)-1]
			if err != nil {
				return nil, err
			}
			out[string(key)] = val
		}
		return out, nil
	}
	return nil, c.errorf("cannot return a value of type %s", v.Type())
}

func (c *converter) list(it starlark.Iterable, n int) ([]any, error) {
	out := make([]any, 0, n)
	iter := it.Iterate()
	defer iter.Done()
	var e starlark.Value
	for i := 0; iter.Next(&e); i++ {
		c.path = append(c.path, "["+strconv.Itoa(i)+"]")
		v, err := c.value(e)
		c.path = c.path[:len(c.path)-1]
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// countBytes counts n bytes of strings, and under a memory limit stops
// the conversion (as the watchdog would) when the result's strings pass
// it.
func (c *converter) countBytes(n int) error {
	c.bytes += int64(n)
	if c.g == nil || c.g.maxBytes < 0 || c.bytes <= c.g.maxBytes {
		return nil
	}
	reason := fmt.Sprintf("the result's strings (at least %s) would exceed the memory limit of %s", sizeText(c.bytes), sizeText(c.g.maxBytes))
	c.g.stop.CompareAndSwap(nil, &reason)
	return errors.New(reason)
}

// errorf is an error naming the key path of the value being converted.
func (c *converter) errorf(format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if len(c.path) == 0 {
		return errors.New(msg)
	}
	return fmt.Errorf("%s (at result%s)", msg, strings.Join(c.path, ""))
}

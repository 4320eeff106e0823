package code

import (
	"strings"
	"unicode"

	"go.starlark.net/starlark"
)

// watchedIterable is an iterable a Go loop of go.starlark.net takes
// whole, out of the watchdog's reach: its iterator stops (as a
// sandboxRange's does) when the watchdog stopped the code or the heap
// grew past the memory limit, and Starlark's next step reports the stop.
//
//   - set(l), dict(l), set.update(l), dict.update(l), ...: inserting
//     keys whose hashes collide (Starlark hashes an int by its low 32
//     bits: i << 32 all collide) is quadratic, minutes in one Go call.
//   - s.codepoints() and s.codepoint_ords() have no length, so the size
//     checks of list(), sorted(), list.extend, ... would not see them;
//     items (when not -1) is how many they yield: len(s), a bound.
type watchedIterable struct {
	v     starlark.Iterable
	items int
	th    *starlark.Thread
	g     *guard
}

var _ starlark.Iterable = watchedIterable{}

func (x watchedIterable) String() string        { return x.v.String() }
func (x watchedIterable) Type() string          { return x.v.Type() }
func (x watchedIterable) Freeze()               { x.v.Freeze() }
func (x watchedIterable) Truth() starlark.Bool  { return x.v.Truth() }
func (x watchedIterable) Hash() (uint32, error) { return x.v.Hash() }

func (x watchedIterable) Iterate() starlark.Iterator {
	return &rangeIterator{it: x.v.Iterate(), th: x.th, g: x.g}
}

// itemBound is how many items x yields at most, -1 when unknown: its
// length, or the bound of a watchedIterable.
func itemBound(x starlark.Value) int {
	if w, ok := x.(watchedIterable); ok {
		if w.items >= 0 {
			return w.items
		}
		x = w.v
	}
	return starlark.Len(x)
}

// itemCost is the memory, in Starlark values, that one item of x costs
// the builtin taking it: a codepoint is a new string or int besides its
// slot (unknown for other values: their items exist already).
func itemCost(x starlark.Value) int64 {
	if w, ok := x.(watchedIterable); ok && w.items >= 0 {
		return 2
	}
	return 1
}

// watchIterable returns x as a watchedIterable of unknown length when it
// is an iterable other than a mapping (Starlark takes a mapping's items
// whole: dict(d) is left as it is).
func watchIterable(th *starlark.Thread, g *guard, x starlark.Value) starlark.Value {
	if _, isMapping := x.(starlark.IterableMapping); isMapping {
		return x
	}
	if _, watched := x.(watchedIterable); watched {
		return x
	}
	if it, ok := x.(starlark.Iterable); ok {
		return watchedIterable{v: it, items: -1, th: th, g: g}
	}
	return x
}

// splitPieces is how many strings s.split(sep, maxsplit) (rsplit's are
// as many) makes; sep "" is Starlark's error (0).
func splitPieces(s string, sep starlark.Value, maxsplit int) int64 {
	var n int64
	if sep == nil || sep == starlark.None {
		in := false // Fields: runs of non-space runes
		for _, r := range s {
			if unicode.IsSpace(r) {
				in = false
			} else if !in {
				in = true
				n++
			}
		}
	} else if sepStr, ok := sep.(starlark.String); ok && sepStr != "" {
		n = int64(strings.Count(s, string(sepStr))) + 1
	}
	if maxsplit >= 0 && n > int64(maxsplit)+1 {
		n = int64(maxsplit) + 1
	}
	return n
}

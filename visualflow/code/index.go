package code

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// A missing dict key makes go.starlark.net's getIndex fail with "key %v
// not in dict", the whole key written into the error: a tuple sharing one
// long string many times is small in memory but its text is not (8 GiB
// for 8,192 references to a 1 MiB string), built in one Go call the
// watchdog cannot stop. So, when the execution has a memory limit, x[k]
// is rewritten as indexGuardName(x)[k]: the guard wraps a dict in a
// dictIndex, which looks the key up itself and, on a miss, writes a key
// longer than maxKeyText in the error only up to that size. Other values
// are returned as they are, and a key of a normal size gets Starlark's own
// error. (The wrapper also stores, for x[k] = v and x[k] += v.)

// indexGuardName is the predeclared name the rewritten code calls. It is
// not an identifier, so user code can neither call, shadow nor reassign it.
const indexGuardName = "<index guard>"

// maxKeyText is the longest text of a missing key an error quotes whole.
const maxKeyText = 1 << 10

// guardIndexes rewrites the index expressions in n (a parsed file or
// expression, before it is resolved) as the comment at the top of this
// file says.
func guardIndexes(n syntax.Node) {
	syntax.Walk(n, func(n syntax.Node) bool {
		if x, ok := n.(*syntax.IndexExpr); ok {
			x.X = guardCall(indexGuardName, x.X)
		}
		return true
	})
}

// newIndexGuard returns the builtin indexGuardName names.
func newIndexGuard() *starlark.Builtin {
	return starlark.NewBuiltin(indexGuardName, func(th *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
		if d, ok := args[0].(*starlark.Dict); ok { // the rewrite always passes one
			return dictIndex{d: d, th: th}, nil
		}
		return args[0], nil
	})
}

// dictIndex is the dict d in indexGuardName(d)[k]. It exists only while
// Starlark indexes it: getIndex and setIndex return what its Get and
// SetKey return, never the wrapper.
type dictIndex struct {
	d  *starlark.Dict
	th *starlark.Thread
}

var (
	_ starlark.Mapping   = dictIndex{}
	_ starlark.HasSetKey = dictIndex{}
)

func (x dictIndex) String() string        { return x.d.String() }
func (x dictIndex) Type() string          { return x.d.Type() }
func (x dictIndex) Freeze()               { x.d.Freeze() }
func (x dictIndex) Truth() starlark.Bool  { return x.d.Truth() }
func (x dictIndex) Hash() (uint32, error) { return x.d.Hash() }

// SetKey is the dict's, with its errors (a frozen dict, an unhashable key),
// a bool key updating the int key it equals (pyops.go dictSetKey). A
// tuple key is walked first with the watchdog (hashWalk).
func (x dictIndex) SetKey(k, v starlark.Value) error {
	if err := hashWalkKey(x.th, k); err != nil {
		return err
	}
	return dictSetKey(x.d, k, v)
}

// Get is the dict's lookup (a bool found under the int it equals, a
// tuple key walked first with the watchdog: pyops.go). A miss is reported by Starlark (found false:
// its own error text) unless the key's text is longer than maxKeyText:
// then the error quotes its beginning and says how long it is.
func (x dictIndex) Get(k starlark.Value) (starlark.Value, bool, error) {
	if err := hashWalkKey(x.th, k); err != nil {
		return nil, false, err
	}
	v, found, err := dictLookup(x.d, k)
	if err != nil || found {
		return v, found, err
	}
	if keyTextFits(x.th, k) {
		return nil, false, nil
	}
	return nil, false, fmt.Errorf("key %s… (a text of more than %d bytes) not in %s", cutKeyText(k), maxKeyText, x.d.Type())
}

// cutKeyText is the beginning of Starlark's text of k (a key whose text
// is longer than maxKeyText): maxKeyText bytes at most, ending at a
// rune's end.
func cutKeyText(k starlark.Value) string {
	var b strings.Builder
	writePrefix(&b, k, maxKeyText)
	text := b.String()
	if len(text) > maxKeyText {
		// Cut before the rune that crosses the bound: where the next byte
		// starts a rune, the text ends at one's end.
		i := maxKeyText
		for i > 0 && !utf8.RuneStart(text[i]) {
			i--
		}
		text = text[:i]
	}
	return text
}

// keyTextFits reports whether Starlark's text of k is at most maxKeyText
// bytes, counting no further than past that.
func keyTextFits(th *starlark.Thread, k starlark.Value) bool {
	z := newTextSize(th, &guard{maxBytes: maxKeyText})
	z.value(k)
	return z.overAt < 0 && z.err == nil && !z.stopped
}

// writePrefix writes Starlark's text of k (a hashable value: a string,
// bytes, a tuple of them, a number, ...) to b, stopping soon after limit
// bytes.
func writePrefix(b *strings.Builder, k starlark.Value, limit int) {
	if b.Len() > limit {
		return
	}
	switch k := k.(type) {
	case starlark.String:
		s := string(k)
		if len(s) > limit {
			s = s[:limit]
		}
		b.WriteString(syntax.Quote(s, false))
	case starlark.Bytes:
		s := string(k)
		if len(s) > limit {
			s = s[:limit]
		}
		b.WriteString(syntax.Quote(s, true))
	case starlark.Tuple:
		b.WriteByte('(')
		for i, e := range k {
			if i > 0 {
				b.WriteString(", ")
			}
			if b.Len() > limit {
				return
			}
			writePrefix(b, e, limit)
		}
		if len(k) == 1 {
			b.WriteByte(',')
		}
		b.WriteByte(')')
	case starlark.Int:
		if intTextLen(k, 10) > int64(limit) {
			b.WriteString("<an int of more than " + fmt.Sprint(limit) + " digits>")
			return
		}
		b.WriteString(k.String())
	default:
		b.WriteString(k.String()) // hashable values of a short text
	}
}

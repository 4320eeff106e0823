package code

import (
	"errors"
	"fmt"
	"unicode/utf8"

	"go.starlark.net/starlark"
)

// str.upper() and str.lower() with Python's full Unicode case mapping
// (pyval.Upper, pyval.Lower: "straße".upper() is "STRASSE", a final
// capital sigma lowers to ς), where go.starlark.net maps one rune to one
// rune; and dict.popitem() removing the last inserted pair, as Python's
// (go.starlark.net's removes the first).

// stringCase is the method str.upper or str.lower done by convert.
func stringCase(convert func(string) string) func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
	return func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 0); err != nil {
			return nil, err
		}
		return starlark.String(convert(string(b.Receiver().(starlark.String)))), nil
	}
}

// maxCaseGrowth is how many times longer than s a case mapping of s can
// be, in bytes: a two-byte letter upper-cases to up to three two-byte
// ones (ΐ), an invalid byte becomes U+FFFD (three bytes).
const maxCaseGrowth = 3

// checkCase returns the check of s.name() (upper or lower, done by convert): the
// result may not pass the memory limit. Only a string long enough to
// pass it when grown maxCaseGrowth times is measured, rune by rune.
func checkCase(name string, convert func(string) string) methodCheck {
	return func(th *starlark.Thread, g *guard, recv starlark.Value, _ starlark.Tuple, _ []starlark.Tuple) error {
		s := string(recv.(starlark.String))
		if int64(len(s)) <= g.maxBytes/maxCaseGrowth {
			return nil
		}
		var n int64
		for i, k := 0, 0; i < len(s); k++ {
			if err := pulse(th, k); err != nil {
				return err
			}
			if s[i] < utf8.RuneSelf {
				n, i = n+1, i+1
				continue
			}
			_, w := utf8.DecodeRuneInString(s[i:])
			// One rune's mapping: the final sigma (ς or σ) is two bytes
			// either way.
			n += int64(len(convert(s[i : i+w])))
			i += w
		}
		if n <= g.maxBytes {
			return nil
		}
		return g.refuseReason(th, fmt.Sprintf("str.%s would build a string of %s, which would exceed the memory limit of %s",
			name, sizeText(n), sizeText(g.maxBytes)))
	}
}

// dictPopitem is dict.popitem(): removes and returns the last inserted
// (key, value) pair. Starlark's dict has no link to its last entry, so
// finding it walks the entries (a Go loop of no allocation).
func dictPopitem(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := starlark.UnpackPositionalArgs("popitem", args, kwargs, 0); err != nil {
		return nil, err
	}
	d := b.Receiver().(*starlark.Dict)
	if d.Len() == 0 {
		return nil, errors.New("popitem(): dictionary is empty")
	}
	var k, last starlark.Value
	iter := d.Iterate()
	for iter.Next(&k) {
		last = k
	}
	iter.Done()
	v, _, err := d.Delete(last)
	if err != nil {
		return nil, fmt.Errorf("popitem: %w", err)
	}
	return starlark.Tuple{last, v}, nil
}

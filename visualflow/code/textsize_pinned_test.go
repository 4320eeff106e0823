package code

import (
	"testing"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// The size counted for a %g or %G of an integral float is the length of
// what Starlark's % builds, which writes it with ".0" ("2.0", "100.0").
func TestTextSizeOfIntegralFloatG(t *testing.T) {
	th := &starlark.Thread{}
	g := &guard{maxItems: 1 << 40, maxBytes: 1 << 40}
	format := starlark.String("%g|%G|%g")
	args := starlark.Tuple{starlark.Float(2), starlark.Float(100), starlark.Float(-3)}
	want, err := starlark.Binary(syntax.PERCENT, format, args)
	if err != nil {
		t.Fatal(err)
	}
	z := newTextSize(th, g)
	z.percent(string(format), args)
	if z.n != int64(len(want.(starlark.String))) {
		t.Fatalf("%s %% %v: counted %d, Starlark builds %d bytes (%s)", format, args, z.n, len(want.(starlark.String)), want)
	}
}

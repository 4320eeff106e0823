package code

import (
	"testing"

	"go.starlark.net/starlark"
)

// A repeat whose result is exactly the memory limit is allowed; one unit
// more is refused: "ab" * 50 under a 100-byte limit builds 100 bytes,
// [0, 0] * 3 under a 6-item limit 6 items.
func TestRepeatOfExactlyTheLimitIsAllowed(t *testing.T) {
	g := &guard{maxBytes: 100, maxItems: 6}
	for _, tc := range []struct {
		seq     starlark.Value
		n       int
		refused bool
	}{
		{starlark.String("ab"), 50, false},
		{starlark.String("ab"), 51, true},
		{starlark.NewList([]starlark.Value{starlark.MakeInt(0), starlark.MakeInt(0)}), 3, false},
		{starlark.NewList([]starlark.Value{starlark.MakeInt(0), starlark.MakeInt(0)}), 4, true},
	} {
		err := g.checkRepeat(&starlark.Thread{}, tc.seq, starlark.MakeInt(tc.n))
		if (err != nil) != tc.refused {
			t.Errorf("%s * %d: %v, want refused %v", tc.seq, tc.n, err, tc.refused)
		}
	}
}

// Sizes in limit errors switch to MiB at 1 MiB exactly.
func TestSizeTextSwitchesToMiBAtOneMiB(t *testing.T) {
	for b, want := range map[int64]string{1<<20 - 1: "1048575 bytes", 1 << 20: "1 MiB", 3<<20 + 5: "3 MiB"} {
		if got := sizeText(b); got != want {
			t.Errorf("sizeText(%d) = %q, want %q", b, got, want)
		}
	}
}

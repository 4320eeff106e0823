package code

import (
	"strings"
	"testing"

	"go.starlark.net/starlark"
)

// sorted() checked the watchdog's stop only inside lists, tuples and
// dicts: sorting millions of numbers was one Go sort that never looked at
// it (6M ints ran ~3 s under a 300 ms timeout). Each comparison now
// ticks, and a stop ends the sort at once. The key function here stops
// the watchdog as it computes the last key, after the items were
// collected and before the sort: only a sort that checks the stop itself
// can end with it.
func TestSortedOfScalarsHonoursTimeout(t *testing.T) {
	const n = 10_000
	g := &guard{maxItems: -1, maxBytes: -1}
	th := &starlark.Thread{Name: "sorted"}
	th.SetLocal(guardKey, g)
	calls := 0
	key := starlark.NewBuiltin("key", func(_ *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
		if calls++; calls == n {
			why := "timeout: stopped by the test"
			g.stop.Store(&why)
		}
		return args[0], nil
	})
	items := make([]starlark.Value, n)
	for i := range items {
		items[i] = starlark.MakeInt(n - i)
	}
	for _, reverse := range []bool{false, true} {
		calls = 0
		g.stop.Store(nil)
		out, err := builtinSorted(th, nil, starlark.Tuple{starlark.NewList(items)},
			[]starlark.Tuple{{starlark.String("key"), key}, {starlark.String("reverse"), starlark.Bool(reverse)}})
		if err == nil || !strings.Contains(err.Error(), "stopped by the test") {
			t.Fatalf("sorted(reverse=%v) with the watchdog stopped before the sort = %v, %v; want the stop's error", reverse, out, err)
		}
	}
	// Without a stop the same items sort.
	g.stop.Store(nil)
	out, err := builtinSorted(th, nil, starlark.Tuple{starlark.NewList(items)}, nil)
	if err != nil {
		t.Fatalf("sorted() without a stop: %v", err)
	}
	if first := out.(*starlark.List).Index(0); first != starlark.MakeInt(1) {
		t.Fatalf("sorted() without a stop starts with %v, want 1", first)
	}
}

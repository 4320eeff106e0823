package code

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"
)

// deepTupleSrc builds a tuple nested 3,000,000 levels deep (150,000 loop
// iterations of 20 levels: ~3.5M execution steps of the 10M budget, well
// under the memory limit), then runs op on it.
func deepTupleSrc(op string) string {
	return "def f(_input):\n" +
		"    x = ()\n" +
		"    for i in range(150000):\n" +
		"        x = ((((((((((((((((((((x,),),),),),),),),),),),),),),),),),),),)\n" +
		"    " + op + "\n" +
		"    return 1\n"
}

// deepLimits are the default limits with a timeout that building the
// tuple (~3.5M steps) cannot reach on a loaded machine under -race: the
// tests are about the recursion limit, and at the default 5 s they failed
// with the timeout instead (seen with two other test suites running).
var deepLimits = Limits{Timeout: time.Minute}

// The memory guards measure a value's text (textsize.go) by Go
// recursion: unbounded, a value nested millions deep overflowed the
// goroutine stack, a fatal error that killed the gateway with every run in
// it. The guard of a list repeat walks the items; Python's repeat does
// not, so [x] * 2 succeeds (the too-deep part is left out of the count).
// Run in a child process because the failure was fatal.
func TestRepeatOfDeeplyNestedValueDoesNotKillProcess(t *testing.T) {
	got, errText, child := codeInChild(t, "CODE_DEEP_REPEAT_CHILD", func() error { return nil },
		deepTupleSrc("y = [x] * 2"), deepLimits)
	if child {
		return
	}
	if errText != "" || got != float64(1) { // through JSON
		t.Fatalf("[x] * 2 of a 3M-deep tuple: got %v, %q; want 1 (Python does not walk the items)", got, errText)
	}
}

// Formatting a value nested past Python's recursion limit (1,000 levels,
// as str() already did) fails as Python's RecursionError, for %, format
// and fail alike, rather than overflowing the stack in the guard or in
// Starlark's own writer.
func TestFormatOfDeeplyNestedValueFails(t *testing.T) {
	for _, tc := range []struct{ name, op string }{
		{"percent", `s = "%s" % (x,)`},
		{"format", `s = "{}".format(x)`},
		{"fail", `fail(x)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errText, child := codeInChild(t, "CODE_DEEP_FORMAT_CHILD_"+tc.name, func() error { return nil }, deepTupleSrc(tc.op), deepLimits)
			if child {
				return
			}
			if !strings.Contains(errText, "maximum recursion depth exceeded") {
				t.Fatalf("%s of a 3M-deep tuple: error %q, want Python's RecursionError", tc.op, errText)
			}
		})
	}
}

// A tuple key is walked before a dict hashes it (pyops.go hashWalk): the
// walk, and Starlark's hash after it, are Go recursion, so a key nested
// past the recursion limit is refused.
func TestHashOfDeeplyNestedKeyFails(t *testing.T) {
	_, errText, child := codeInChild(t, "CODE_DEEP_KEY_CHILD", func() error { return nil },
		deepTupleSrc("d = {x: 1}"), deepLimits)
	if child {
		return
	}
	if !strings.Contains(errText, "maximum recursion depth exceeded") {
		t.Fatalf("a 3M-deep tuple as a dict key: error %q, want a recursion error", errText)
	}
}

// Comparisons (==, in, sorted, min, max, list.index/remove) go as deep as
// Python's recursion limit, not go.starlark.net's CompareLimit (10), which
// refused two equal JSON documents nested 12 levels deep.
func TestCompareModeratelyNestedJSON(t *testing.T) {
	doc := `{"a": [{"b": [{"c": [{"d": [{"e": [{"f": [1]}]}]}]}]}]}`
	src := "def transform(_input):\n" +
		"    x = " + doc + "\n" +
		"    y = " + doc + "\n" +
		"    return [x == y, x in [y]]\n"
	got, _, err := Run(context.Background(), src, "transform", map[string]any{}, Limits{})
	if err != nil {
		t.Fatalf("comparing two equal 12-level JSON values failed: %v (Python: [True, True])", err)
	}
	if !reflect.DeepEqual(got, []any{true, true}) {
		t.Fatalf("got %#v, want [true true]", got)
	}
}

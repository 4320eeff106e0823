package code

import (
	"strings"
	"testing"
)

// nestedList is 1 inside depth lists.
func nestedList(depth int) any {
	var v any = int64(1)
	for range depth {
		v = []any{v}
	}
	return v
}

// str(), ==, % and str.format go 1,000 containers deep and fail past
// that, as docs/visualflow.md says (python3 3.11 raises RecursionError near there:
// repr of 999 nested lists already fails from `python3 -c`, the exact
// depth depending on the stack): the bound is maxReprDepth, not one more.
func TestStrCompareAndFormatNestThousandDeep(t *testing.T) {
	// With the memory limit the text's size is measured first
	// (textsize.go); without it str() meets the bound itself (pystr.go)
	// and % and format are still measured for depth alone (before that,
	// they went past the bound: Starlark's writer has none, and a value
	// nested a million deep ran past the timeout).
	for _, lim := range []Limits{{}, {MaxMemory: -1}} {
		for _, expr := range []string{"len(str(a)) > 0", "a == b", `len("%s" % a) > 0`, `len("{}".format(a)) > 0`} {
			for _, tc := range []struct {
				depth int
				fails bool
			}{{maxReprDepth, false}, {maxReprDepth + 1, true}} {
				names := map[string]any{"a": nestedList(tc.depth), "b": nestedList(tc.depth)}
				v, _, err := Eval(t.Context(), expr, names, lim)
				switch {
				case !tc.fails && (err != nil || v != true):
					t.Errorf("%s at depth %d (MaxMemory %d) = %v, %v; want true", expr, tc.depth, lim.MaxMemory, v, err)
				case tc.fails && (err == nil || !strings.Contains(err.Error(), "maximum recursion depth")):
					t.Errorf("%s at depth %d (MaxMemory %d) = %v, %v; want the recursion depth error", expr, tc.depth, lim.MaxMemory, v, err)
				}
			}
		}
	}
}

// fail(a) of a value nested past maxReprDepth fails with the recursion
// depth error, not with fail's message, also without a memory limit
// (the message is measured for depth as % measures its operand).
func TestFailOfTooDeepValueIsTheRecursionError(t *testing.T) {
	for _, lim := range []Limits{{}, {MaxMemory: -1}} {
		_, _, err := Eval(t.Context(), "fail(a)", map[string]any{"a": nestedList(maxReprDepth + 1)}, lim)
		if err == nil || !strings.Contains(err.Error(), "maximum recursion depth") {
			t.Errorf("fail(a) at depth %d (MaxMemory %d) = %.80v; want the recursion depth error", maxReprDepth+1, lim.MaxMemory, err)
		}
	}
}

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
	// With the memory limit the text's size is measured first (textsize.go);
	// without it str() meets the bound itself (pystr.go). (Formatting
	// without a memory limit: TestFormatPastThousandDeepFailsWithoutMemoryLimit.)
	for _, lim := range []Limits{{}, {MaxMemory: -1}} {
		exprs := []string{"len(str(a)) > 0", "a == b"}
		if lim.MaxMemory == 0 {
			exprs = append(exprs, `len("%s" % a) > 0`, `len("{}".format(a)) > 0`)
		}
		for _, expr := range exprs {
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

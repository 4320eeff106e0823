package code

import (
	"strings"
	"testing"
	"time"

	"go.starlark.net/starlark"
)

// set.update counts the items of all its arguments together: two ranges
// of 600,000 items under a 16 MiB limit (1,048,576 values) are refused,
// though each alone would fit.
func TestSetUpdateCountsAllArguments(t *testing.T) {
	src := "def f(_input):\n    s = set()\n    s.update(range(600000), range(600000))\n    return len(s)\n"
	_, _, err := Run(t.Context(), src, "f", map[string]any{}, Limits{MaxMemory: 16 << 20, Timeout: 10 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "set.update() of more than") {
		t.Fatalf("err = %v, want the set.update() refusal", err)
	}
}

// zip of iterables of unknown length counts each row as a tuple of its
// items plus its slot (cols + 1 values): 20 rows of two items under a
// 30-value limit are refused after 10 rows. (Called directly, without
// the heap watchdog, which under a real limit may stop the rows first.)
func TestZipOfUnsizedIterablesCountsRowsWithTheirItems(t *testing.T) {
	th := &starlark.Thread{}
	th.SetLocal(guardKey, &guard{maxItems: 30, maxBytes: 30 * valueSize})
	elems, err := starlark.EvalOptions(fileOptions, th, "elems", `b"`+strings.Repeat("a", 20)+`".elems()`, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = builtinZip(th, nil, starlark.Tuple{elems, elems}, nil)
	if err == nil || !strings.Contains(err.Error(), "zip() of more than 10 rows of 2 items") {
		t.Fatalf("err = %v, want the zip() refusal", err)
	}
}

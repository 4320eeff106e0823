package code

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// Promise: docs/visualflow.md ("Code nodes"): "One builtin call may not
// allocate past the memory limit at once". str.split, rsplit and
// splitlines build a []string and then a list, ~48 bytes of Go memory per
// piece, in one Go call: a 4 MiB string of separators allocated ~130 MiB
// under an 8 MiB limit. The pieces are now counted first (amplify.go
// checkSplit) and a split past the limit is refused.
func TestSplitPastMemoryLimitIsRefusedBeforeAllocating(t *testing.T) {
	for _, body := range []string{
		"s = \",\" * (4 << 20)\n    return len(s.split(\",\"))",
		"s = \",\" * (4 << 20)\n    return len(s.rsplit(\",\"))",
		"s = \"a \" * (2 << 20)\n    return len(s.split())",
		"s = \"\\n\" * (4 << 20)\n    return len(s.splitlines())",
		"s = \",\" * (4 << 20)\n    sp = getattr(s, \"split\")\n    return len(sp(\",\"))",
	} {
		src := "def f(_input):\n    " + body + "\n"
		var err error
		var got any
		alloc := totalAllocDuring(func() {
			got, _, err = Run(context.Background(), src, "f", map[string]any{}, Limits{MaxMemory: 8 << 20, Timeout: 10 * time.Second})
		})
		if !errors.Is(err, ErrLimit) || alloc > 64<<20 {
			t.Errorf("%q: got %v, err = %v after allocating %d MiB under an 8 MiB limit; want the limit error before it builds", body, got, err, alloc>>20)
		}
	}
}

// The guard keeps Starlark's results and errors.
func TestSplitKeepsStarlarkBehaviour(t *testing.T) {
	const src = "def f(_input):\n    return [\"a,b,,c\".split(\",\"), \"a,b,c\".split(\",\", 1), \"a,b,c\".rsplit(\",\", 1), \" x  y \".split(), \"a\\nb\\n\".splitlines(), \"a\\nb\".splitlines(True)]\n"
	got, _, err := Run(context.Background(), src, "f", map[string]any{}, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if want := "[[a b  c] [a b,c] [a,b c] [x y] [a b] [a\n b]]"; fmt.Sprint(got) != want {
		t.Errorf("got %q, want %q", fmt.Sprint(got), want)
	}
	_, _, err = Run(context.Background(), "def f(_input):\n    return \"a\".split(\"\")\n", "f", map[string]any{}, Limits{})
	if err == nil || !strings.Contains(err.Error(), "empty separator") {
		t.Errorf("split(\"\"): err = %v, want Starlark's", err)
	}
}

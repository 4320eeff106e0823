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
// allocate past the memory limit at once". s.codepoints() and
// s.codepoint_ords() have no length, so the size checks of list(),
// sorted(), list.extend, ... did not see them, and ~100 bytes of Go
// memory per byte of s were built in one Go loop. Under a memory limit
// they now count as len(s) items, each a new value (watched.go), and
// their iteration stops when the watchdog stops the code (x += ...).
func TestCodepointsAreSizedAgainstTheMemoryLimit(t *testing.T) {
	for _, body := range []string{
		"return len(list(s.codepoints()))",
		"return len(sorted(s.codepoint_ords()))",
		"x = []\n    x.extend(s.codepoint_ords())\n    return len(x)",
		"x = []\n    getattr(s, \"codepoints\")()\n    x.extend(getattr(s, \"codepoints\")())\n    return len(x)",
		"x = []\n    x += s.codepoints()\n    return len(x)",
	} {
		src := "def f(_input):\n    s = \"a\" * (2 << 20)\n    " + body + "\n"
		var err error
		alloc := totalAllocDuring(func() {
			_, _, err = Run(context.Background(), src, "f", map[string]any{}, Limits{MaxMemory: 8 << 20, Timeout: 10 * time.Second})
		})
		if !errors.Is(err, ErrLimit) {
			t.Errorf("%q: err = %v, want the sandbox limit error", body, err)
		}
		if alloc > 64<<20 {
			t.Errorf("%q: the process allocated %d MiB under an 8 MiB limit before stopping", body, alloc>>20)
		}
	}
}

// The wrapper keeps Starlark's values, type and errors.
func TestCodepointsKeepStarlarkBehaviour(t *testing.T) {
	const src = "def f(_input):\n    s = \"héllo\"\n    return [list(s.codepoints()), list(s.codepoint_ords())[:2], type(s.codepoints()), str(\"ab\".codepoints())]\n"
	got, _, err := Run(context.Background(), src, "f", map[string]any{}, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if want := `[[h é l l o] [104 233] string.codepoints "ab".codepoints()]`; fmt.Sprint(got) != want {
		t.Errorf("got %v, want %s", got, want)
	}
	_, _, err = Run(context.Background(), "def f(_input):\n    return len(\"ab\".codepoints())\n", "f", map[string]any{}, Limits{})
	if err == nil || !strings.Contains(err.Error(), "has no len") {
		t.Errorf("len of codepoints: err = %v, want Starlark's", err)
	}
}

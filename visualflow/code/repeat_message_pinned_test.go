package code

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// repeatLimits is an 8 MiB memory limit.
var repeatLimits = Limits{MaxMemory: 8 << 20, Timeout: 10 * time.Second}

// A bytes repeat past the memory limit is refused by the sandbox, as a
// string's is, before Starlark allocates it, whichever side the bytes
// value is on.
func TestBytesRepeatPastMemoryLimitIsRefused(t *testing.T) {
	for _, src := range []string{
		"def f(_input):\n    return len(b\"ab\" * (16 << 20))\n",
		"def f(_input):\n    return len((16 << 20) * b\"ab\")\n",
		"def f(_input):\n    n = 16 << 20\n    n *= b\"ab\"\n    return len(n)\n",
	} {
		_, _, err := Run(context.Background(), src, "f", map[string]any{}, repeatLimits)
		if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "repeat of a bytes value (2 bytes)") {
			t.Errorf("%q: err = %v, want the sandbox's repeat refusal", src, err)
		}
	}
}

// A refused list repeat names its item count (singular for one) and the
// result's size in memory: 2^30 items of 16 bytes are 16384 MiB.
func TestListRepeatRefusalNamesItsSize(t *testing.T) {
	_, _, err := Run(context.Background(), "def f(_input):\n    return len([0] * (1 << 30))\n", "f", map[string]any{}, repeatLimits)
	want := "repeat of a list (1 item) 1073741824 times, 16384 MiB, would exceed the memory limit of 8 MiB"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want it to contain %q", err, want)
	}
}

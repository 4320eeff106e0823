package code

import (
	"strings"
	"testing"
)

// A repeat refused for its text names a size it can write: a list whose
// text is about 10^13 bytes (one item doubled forty times, shared)
// repeated two million times would be past int64, so the error says
// "more than" the limit rather than an overflowed size.
func TestRepeatTextRefusalPastInt64SaysMoreThanTheLimit(t *testing.T) {
	src := "def f(_input):\n    l = [\"a\"]\n    for i in range(40):\n        l = [l, l]\n    return len(l * 2000000)\n"
	_, _, err := Run(t.Context(), src, "f", map[string]any{}, Limits{})
	if err == nil || !strings.Contains(err.Error(), "(more than 256 MiB)") {
		t.Fatalf("err = %v, want the text refusal saying \"more than 256 MiB\"", err)
	}
}

package code

import (
	"context"
	"strings"
	"testing"
	"time"
)

// A result nested 300 levels deep converts, as in Python (json.dumps of
// it works under the default recursion limit of 1,000): the conversion
// refuses only what the run's stores cannot write (pyjson.MaxDepth).
func TestResultNestedPast200LevelsConverts(t *testing.T) {
	src := "def f(_input):\n    x = 1\n    for i in range(300):\n        x = [x]\n    return x\n"
	got := runSource(t, src, map[string]any{})
	for i := 0; i < 300; i++ {
		l, ok := got.([]any)
		if !ok || len(l) != 1 {
			t.Fatalf("level %d: got %#v, want a one-item list", i, got)
		}
		got = l[0]
	}
	if got != int64(1) {
		t.Fatalf("innermost: got %#v, want 1", got)
	}
}

// A result nested deeper than the run's stores write is refused by the
// conversion, naming the limit, rather than by the commit that follows.
func TestResultNestedPastTheStoresDepthIsRefused(t *testing.T) {
	src := "def f(_input):\n    x = 1\n    for i in range(1000):\n        x = [x]\n    return x\n"
	_, _, err := Run(context.Background(), src, "f", map[string]any{}, Limits{Timeout: time.Minute})
	if err == nil || !strings.Contains(err.Error(), "nested too deeply") {
		t.Fatalf("a result nested 1,000 levels: error %v, want \"value nested too deeply\"", err)
	}
}

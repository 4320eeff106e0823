package code

import (
	"context"
	"testing"
	"time"
)

// str.replace's size check counts at most count replacements: replacing
// 2 of 100,000 "a"s by 100 bytes builds ~100 KB and is not refused under
// an 8 MiB limit (all of them would build ~10 MB).
func TestReplaceWithCountIsNotRefused(t *testing.T) {
	src := "def f(_input):\n    s = \"a\" * 100000\n    return len(s.replace(\"a\", \"x\" * 100, 2))\n"
	got, _, err := Run(context.Background(), src, "f", map[string]any{}, Limits{MaxMemory: 8 << 20, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatalf("replace with count 2: %v, want 100198 (Python)", err)
	}
	if got != int64(100198) {
		t.Fatalf("got %#v, want 100198 (Python)", got)
	}
}

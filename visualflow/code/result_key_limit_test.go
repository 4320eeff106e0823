package code

import (
	"context"
	"errors"
	"testing"
	"time"
)

// Promise: execute's "the watchdog also covers the result's conversion"
// (sandbox.go) and docs/visualflow.md ("Code nodes": the conversion of
// the result stops at the timeout or the memory limit). A result dict's
// key that is not a string is written with Python's repr: it now goes
// through the same guard as str() (pyRepr with the sandbox's thread), so
// a key whose text is past the memory limit is refused before it is
// written.
func TestResultKeyOfHugeTextIsRefusedAtTheLimit(t *testing.T) {
	// 512 references to a 1 MiB string: a 512 MiB key text, over the
	// default 256 MiB limit.
	const src = "def f(_input):\n    s = \"a\" * (1 << 20)\n    t = tuple([s for _ in range(512)])\n    return {t: 1}\n"
	var err error
	alloc := totalAllocDuring(func() {
		_, _, err = Run(context.Background(), src, "f", map[string]any{}, Limits{Timeout: 10 * time.Second})
	})
	if !errors.Is(err, ErrLimit) {
		t.Fatalf("err = %v, want the sandbox limit error", err)
	}
	if alloc > 64<<20 {
		t.Errorf("the process allocated %d MiB: the key's text was written", alloc>>20)
	}
}

func TestResultKeyOfSmallTextIsStillWritten(t *testing.T) {
	got, _, err := Run(context.Background(), "def f(_input):\n    return {(1, \"a\"): 2, 3: None}\n", "f", map[string]any{}, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := got.(map[string]any)
	if _, ok := m["(1, 'a')"]; !ok || len(m) != 2 {
		t.Errorf("got %v, want the keys written as Python's repr", got)
	}
}

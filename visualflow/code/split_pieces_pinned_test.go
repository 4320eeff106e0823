package code

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"
)

// splitLimits is a memory limit (3 MiB) under which 100,000 separators
// are cheap as a string but too many pieces (48 bytes each) for a split.
var splitLimits = Limits{MaxMemory: 3 << 20, Timeout: 10 * time.Second}

// A split's size check counts the pieces maxsplit allows, not every
// separator: s.split(",", 1) of a string of 100,000 commas makes two
// pieces, as in Python, and is not refused; s.split(",", 0) makes one.
func TestSplitWithMaxsplitIsNotRefused(t *testing.T) {
	src := "def f(_input):\n    s = \",\" * 100000\n" +
		"    return [len(s.split(\",\", 1)), len(s.rsplit(\",\", 2)), len((\" a\" * 100000).split(None, 1)), len(s.split(\",\", 0))]\n"
	got, _, err := Run(context.Background(), src, "f", map[string]any{}, splitLimits)
	if err != nil {
		t.Fatalf("split with maxsplit under a 3 MiB limit: %v, want [2, 3, 2, 1] (Python)", err)
	}
	if want := []any{int64(2), int64(3), int64(2), int64(1)}; !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v, want %#v", got, want)
	}
}

// A split refused at the memory limit names how many pieces it would
// make: n separators make n + 1 pieces.
func TestSplitRefusalCountsThePieces(t *testing.T) {
	src := "def f(_input):\n    s = \",\" * 100000\n    return len(s.split(\",\"))\n"
	_, _, err := Run(context.Background(), src, "f", map[string]any{}, splitLimits)
	if err == nil || !strings.Contains(err.Error(), "str.split into 100001 pieces") {
		t.Fatalf("err = %v, want the refusal of a split into 100001 pieces", err)
	}
}

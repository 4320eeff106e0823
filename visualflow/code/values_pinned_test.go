package code

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"
)

// An input dict (a Go map, which has no order) reaches the code with its
// keys in sorted order (docs/visualflow.md, "Dict order"), whatever the
// map's iteration order.
func TestInputDictKeysAreSorted(t *testing.T) {
	in := map[string]any{"d": map[string]any{"b": 1, "a": 2, "c": 3, "e": 4, "aa": 5}}
	got := runSource(t, "def f(_input):\n    return list(_input[\"d\"].keys())\n", in)
	if want := []any{"a", "aa", "b", "c", "e"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("keys = %#v, want %#v (sorted)", got, want)
	}
}

// The result's size check counts the text of its dict keys too: 16 keys
// sliced from one 1 MiB string (sharing its memory in Starlark, not in
// the result's JSON) are ~16 MiB of text, refused under an 8 MiB limit.
func TestResultKeysCountTowardsTheMemoryLimit(t *testing.T) {
	src := "def f(_input):\n    s = \"a\" * (1 << 20)\n    return {s[i:]: i for i in range(16)}\n"
	_, _, err := Run(context.Background(), src, "f", map[string]any{}, Limits{MaxMemory: 8 << 20, Timeout: 10 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "the result's strings") {
		t.Fatalf("err = %v, want the refusal of the result's strings", err)
	}
}

package pyjson

import (
	"reflect"
	"testing"
)

// A cycle entered past the first shallowPath levels of the copy path
// (where the path is a set, not scanned) is still a cycle: the copy
// holds its own copy where the original holds itself, not a chain
// unrolled down to the nesting limit whose end is the original.
func TestCloneKeepsACycleEnteredPastTheShallowPath(t *testing.T) {
	t.Parallel()
	const depth, back = shallowPath + 8, shallowPath + 3
	levels := make([]map[string]any, depth)
	for i := range levels {
		levels[i] = map[string]any{"i": int64(i)}
		if i > 0 {
			levels[i-1]["next"] = levels[i]
		}
	}
	levels[depth-1]["back"] = levels[back] // a cycle through levels back..depth-1
	c := CloneObject(levels[0])
	copies := make([]map[string]any, depth)
	copies[0] = c
	for i := 1; i < depth; i++ {
		copies[i] = copies[i-1]["next"].(map[string]any)
	}
	for i, m := range copies {
		if reflect.ValueOf(m).Pointer() == reflect.ValueOf(levels[i]).Pointer() {
			t.Fatalf("the copy shares level %d with the original", i)
		}
	}
	got := copies[depth-1]["back"].(map[string]any)
	if reflect.ValueOf(got).Pointer() != reflect.ValueOf(copies[back]).Pointer() {
		t.Errorf("the copy's back reference at level %d is not the copy of level %d: the cycle was unrolled", depth-1, back)
	}
}

// Objects nested past the encoder's MaxDepth (a document another writer
// nested deeper, which Decode still reads) are copied, not shared, down
// to the decoder's limit, as arrays are.
func TestCloneCopiesObjectsNestedPastMaxDepth(t *testing.T) {
	t.Parallel()
	leaf := map[string]any{"v": int64(1)}
	var v any = leaf
	for range MaxDepth + 10 {
		v = map[string]any{"k": v}
	}
	c := Clone(v)
	m := c.(map[string]any)
	for range MaxDepth + 10 {
		m = m["k"].(map[string]any)
	}
	m["v"] = int64(2)
	if leaf["v"] != int64(1) {
		t.Error("writing the deepest object of the copy changed the original: it was shared")
	}
}

// A container held twice without a cycle (two members sharing one map),
// deeper than shallowPath, is copied once per holder, as at any depth and
// as a decode of the value's encoding gives it: the copies share nothing,
// so writing through one leaves the other as it was.
func TestCloneCopiesASharedContainerPerHolderPastTheShallowPath(t *testing.T) {
	t.Parallel()
	shared := map[string]any{"v": int64(1)}
	var v any = map[string]any{"a": map[string]any{"x": shared}, "b": map[string]any{"x": shared}}
	for range shallowPath + 4 {
		v = []any{v}
	}
	c := Clone(v)
	for range shallowPath + 4 {
		c = c.([]any)[0]
	}
	m := c.(map[string]any)
	a := m["a"].(map[string]any)["x"].(map[string]any)
	b := m["b"].(map[string]any)["x"].(map[string]any)
	a["v"] = int64(2)
	if b["v"] != int64(1) || shared["v"] != int64(1) {
		t.Errorf("writing through one copy of the shared map set the other to %v (original %v): want copies apart", b["v"], shared["v"])
	}
}

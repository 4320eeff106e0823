package pyjson

import (
	"os"
	"os/exec"
	"reflect"
	"testing"
	"time"
)

// Copied branch by branch down to the nesting limit, a container that
// holds itself twice (two members, or two elements, pointing back) was
// unfolded as a binary tree 10,000 levels deep: 2^10000 calls, a hang
// where Normalize and IsNormalized return at once. Clone now sees the
// repeat on its copy path and copies the value container by container:
// the copy has the same shape (the same cycles, which the encoder
// refuses) and shares no container with the original.
func TestCloneOfValueHoldingItselfTwiceEnds(t *testing.T) {
	m := map[string]any{"k": int64(1)}
	m["a"] = m
	m["b"] = m
	l := []any{int64(1), nil, nil}
	l[1] = l
	l[2] = l
	// Maps that each hold all the others: no container repeats on a path
	// shorter than the whole set, and there are 11! such paths.
	ring := make([]map[string]any, 12)
	for i := range ring {
		ring[i] = map[string]any{}
	}
	for i, r := range ring {
		for j, o := range ring {
			if i != j {
				r[string(rune('a'+j))] = o
			}
		}
	}
	if os.Getenv("PYJSON_CLONE_CHILD") == "1" {
		// In a child process, so that a Clone that never ends spins there
		// and is killed, not left running beside the other tests.
		cm := CloneObject(m)
		cl := Clone(l).([]any)
		cr := CloneObject(ring[0])
		if reflect.ValueOf(cm).Pointer() == reflect.ValueOf(m).Pointer() ||
			reflect.ValueOf(cm["a"]).Pointer() != reflect.ValueOf(cm).Pointer() || cm["k"] != int64(1) {
			t.Fatal("CloneObject of a map holding itself: want a copy holding the copy")
		}
		if &cl[0] == &l[0] || &cl[1].([]any)[0] != &cl[0] || &cl[2].([]any)[0] != &cl[0] {
			t.Fatal("Clone of an array holding itself: want a copy holding the copy")
		}
		if reflect.ValueOf(cr["b"].(map[string]any)["a"]).Pointer() != reflect.ValueOf(cr).Pointer() {
			t.Fatal("CloneObject of mutually held maps: want copies holding the copies")
		}
		return
	}
	if _, err := Normalize(m); err == nil {
		t.Fatal("Normalize accepted a cyclic value")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestCloneOfValueHoldingItselfTwiceEnds$", "-test.count=1")
	cmd.Env = append(os.Environ(), "PYJSON_CLONE_CHILD=1")
	out := make(chan []byte, 1)
	done := make(chan error, 1)
	go func() {
		b, err := cmd.CombinedOutput()
		out <- b
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("child: %v\n%s", err, <-out)
		}
	case <-time.After(5 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatal("Clone of values that hold themselves more than once did not end within 5 s")
	}
}

// Legitimate nesting is not a cycle, however deep: 10,000 levels of
// arrays are copied (in linear time: the copy path past its first levels
// is a set, not scanned), and a prefix of an array held by the array is
// another value, copied too.
func TestCloneCopiesDeepAndPrefixValues(t *testing.T) {
	var v any = int64(1)
	for range maxDecodeDepth - 1 {
		v = []any{v}
	}
	start := time.Now()
	c := Clone(v)
	if d := time.Since(start); d > time.Second {
		t.Errorf("Clone of 10,000 nested arrays took %v", d)
	}
	if !reflect.DeepEqual(c, v) {
		t.Fatal("Clone of 10,000 nested arrays differs from its source")
	}
	for o, n := v.([]any), c.([]any); len(o) > 0; {
		if &o[0] == &n[0] {
			t.Fatal("Clone of nested arrays shares one")
		}
		next, ok := o[0].([]any)
		if !ok {
			break
		}
		o, n = next, n[0].([]any)
	}
	l := []any{int64(1), nil}
	l[1] = l[:1]
	cl := Clone(l).([]any)
	if p := cl[1].([]any); &p[0] == &l[0] || p[0] != int64(1) || len(p) != 1 {
		t.Errorf("Clone of an array holding its own prefix = %#v; want [1, [1]], its own", cl)
	}
}

// The cycle check keyed a slice-backed container by the address of its
// first element only, so a prefix of an array or Ordered written as one
// of its own later members (same address, fewer members) was taken for
// the container itself. It is no cycle: its members are the ones before
// it, and encoding/json writes it. A repeat is a cycle only when the
// whole container (address and length) comes back.
func TestPrefixOfContainerAsItsOwnMemberIsNoCycle(t *testing.T) {
	l := []any{int64(1), nil}
	l[1] = l[:1]
	o := Ordered{{Key: "a", Value: int64(1)}, {Key: "b"}}
	o[1].Value = o[:1]
	type floats []any
	f := floats{1.5, nil}
	f[1] = f[:1]
	for name, tc := range map[string]struct {
		v    any
		want string
	}{
		"array":       {l, `[1, [1]]`},
		"ordered":     {o, `{"a": 1, "b": {"a": 1}}`},
		"typed slice": {f, `[1.5, [1.5]]`},
	} {
		b, err := Marshal(tc.v, Line)
		if err != nil || string(b) != tc.want {
			t.Errorf("%s: Marshal = %s, %v; want %s", name, b, err, tc.want)
		}
	}
	// The whole container coming back is still a cycle.
	l2 := []any{int64(1), nil}
	l2[1] = l2[:2]
	if err := Check(l2, "v"); err == nil || err.(*Error).Path != "v[1]" {
		t.Errorf("Check of an array holding itself = %v; want a cycle at v[1]", err)
	}
}

// The memoising copy of a value that contains itself shares no container
// with the original: a container first copied past the nesting limit and
// met again near the root is copied whole, not reused half-made.
func TestCloneOfCyclicValueSharesNoShallowContainer(t *testing.T) {
	y := []any{int64(1)}
	x := []any{y}
	var chain any = x
	for range maxDecodeDepth - 1 { // x at depth maxDecodeDepth under root[0]
		chain = []any{chain}
	}
	root := []any{chain, x, nil}
	root[2] = root // a cycle: Clone takes the memoising path
	c := Clone(root).([]any)
	cy := c[1].([]any)[0].([]any)
	if &cy[0] == &y[0] {
		cy[0] = int64(2)
		t.Fatalf("Clone(root)[1][0] is the original root[1][0] (writing through the copy set it to %v): "+
			"a container two levels down is shared with the original", y[0])
	}
}

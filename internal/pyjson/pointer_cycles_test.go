package pyjson

import (
	"math/big"
	"runtime/debug"
	"strings"
	"testing"
)

// boundStack makes a runaway recursion die quickly (a fatal error either
// way, but not after filling a gigabyte of stack).
func boundStack(t *testing.T) {
	prev := debug.SetMaxStack(64 << 20)
	t.Cleanup(func() { debug.SetMaxStack(prev) })
}

// The encoder followed a pointer without its cycle check or counting a
// level: a pointer to itself through an interface recursed until the
// stack overflowed (a fatal error), and an array holding a pointer to
// itself, copied at every level, was refused only as nested too deep
// with a path 10,000 levels long. Both are cycles, named at their path.
func TestPointerCyclesAreRefusedAsCycles(t *testing.T) {
	boundStack(t)
	var x any
	x = &x
	var a [1]any
	a[0] = &a
	o := Ordered{{Key: "k"}}
	o[0].Value = o
	for name, tc := range map[string]struct {
		v    any
		path string
	}{
		"self pointer":         {map[string]any{"a": x}, "v.a"},
		"array pointer":        {map[string]any{"a": a}, "v.a[0][0]"},
		"pointer to pointer":   {&x, "v"},
		"ordered holds itself": {o, "v.k"},
	} {
		err := Check(tc.v, "v")
		if err == nil || !strings.Contains(err.Error(), "cycle") || len(err.Error()) > 200 {
			t.Errorf("%s: Check = %.200v; want a cycle", name, err)
			continue
		}
		if p := err.(*Error).Path; p != tc.path {
			t.Errorf("%s: cycle at %q; want %q", name, p, tc.path)
		}
		if _, err := Marshal(tc.v, Pretty); err == nil || !strings.Contains(err.Error(), "cycle") {
			t.Errorf("%s: Marshal = %v; want a cycle", name, err)
		}
	}
}

// A chain of distinct pointers repeats nothing, but each is a level of
// the walk: past the nesting limit it is refused, not followed until the
// stack overflows.
func TestLongPointerChainIsTooDeep(t *testing.T) {
	boundStack(t)
	var v any = int64(1)
	for range 3 * maxDepth {
		p := new(any)
		*p = v
		v = p
	}
	if err := Check(v, "v"); err == nil || !strings.Contains(err.Error(), "nesting too deep") {
		t.Errorf("Check of a chain of %d pointers = %v; want nesting too deep", 3*maxDepth, err)
	}
}

// A pointer counts towards the nesting limit, not towards the depth that
// indents the output: pretty-printed, a value behind a pointer is written
// as the value itself.
func TestPointerDoesNotIndent(t *testing.T) {
	inner := []any{int64(1), map[string]any{"b": "c"}}
	want, err := Marshal(map[string]any{"a": inner}, Pretty)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Marshal(map[string]any{"a": &inner}, Pretty)
	if err != nil || string(got) != string(want) {
		t.Errorf("Marshal through a pointer = %s, %v; want %s", got, err, want)
	}
}

// Normalize, IsNormalized and Clone walk the generic tree themselves: a
// map or an array that contains itself made them recurse without end.
// Normalize gives the encoder's error, IsNormalized false, and Clone
// copies it with its cycle (see clone_cycles_test.go).
func TestGenericWalkersStopOnCycles(t *testing.T) {
	boundStack(t)
	m := map[string]any{"k": int64(1)}
	m["self"] = []any{m}
	if _, err := Normalize([]any{m}); err == nil || !strings.Contains(err.Error(), "cycle") {
		t.Errorf("Normalize = %v; want a cycle", err)
	}
	if _, err := NormalizeObject(m); err == nil || !strings.Contains(err.Error(), "cycle") {
		t.Errorf("NormalizeObject = %v; want a cycle", err)
	}
	if IsNormalized(m) || IsNormalizedObject(m) {
		t.Error("IsNormalized of a cyclic value = true")
	}
	if c := CloneObject(m); c["k"] != int64(1) {
		t.Errorf("CloneObject = %v", c["k"])
	}
}

// The fast paths of Normalize count levels as the encoder does: a typed
// value deep inside a generic tree is refused where the whole would be.
func TestNormalizeNestingLimitIsTheWholeValues(t *testing.T) {
	var v any = []float64{1}
	for range maxDepth {
		v = []any{v}
	}
	if _, err := Marshal(v, Line); err == nil {
		t.Fatal("Marshal past the limit succeeded")
	}
	if _, err := Normalize(v); err == nil || !strings.Contains(err.Error(), "nesting too deep") {
		t.Errorf("Normalize past the limit = %v; want nesting too deep", err)
	}
}

// A pointer to the first element of an array or slice has the address of
// the container, but is not a cycle unless it comes back to itself.
func TestPointerToOwnElementIsNoCycle(t *testing.T) {
	arr := [2]any{int64(1)}
	arr[1] = &arr[0]
	s := []any{int64(1), nil}
	s[1] = &s[0]
	for name, v := range map[string]any{"array": &arr, "slice": s} {
		b, err := Marshal(v, Line)
		if err != nil || string(b) != `[1, 1]` {
			t.Errorf("%s: Marshal = %s, %v; want [1, 1]", name, b, err)
		}
	}
}

// A pointer whose type marshals itself (*big.Int's MarshalJSON has a
// pointer receiver) is written as encoding/json writes it: followed to
// the value first, the method was lost and the number written as {}.
func TestPointerMarshalerIsHonoured(t *testing.T) {
	b, err := Marshal(map[string]any{"n": big.NewInt(5), "none": (*big.Int)(nil)}, Line)
	if err != nil || string(b) != `{"n": 5, "none": null}` {
		t.Errorf("Marshal = %s, %v; want {\"n\": 5, \"none\": null}", b, err)
	}
}

type namedMap map[string]any

type namedSlice []any

// Check and the encoder report a cycle (not a nesting error MaxDepth levels
// later) for a value that contains itself through a named map or slice
// type, which the encoder reads member by member.
func TestCycleThroughNamedTypesIsReported(t *testing.T) {
	t.Parallel()
	m := namedMap{"a": int64(1)}
	m["self"] = m
	s := namedSlice{int64(1), nil}
	s[1] = s
	for name, v := range map[string]any{"map": m, "slice": s} {
		err := Check(v, "v")
		if err == nil || !strings.Contains(err.Error(), "cycle") {
			t.Errorf("Check(%s containing itself) = %v; want a cycle error", name, err)
		}
		if _, err := Marshal(v, Line); err == nil || !strings.Contains(err.Error(), "cycle") {
			t.Errorf("Marshal(%s containing itself) = %v; want a cycle error", name, err)
		}
	}
}

// Typed slices are read element by element "so a float stays a float",
// also behind a pointer (encoding/json would write 1.0 as 1).
func TestPointerToTypedValuesKeepsFloats(t *testing.T) {
	t.Parallel()
	fs := []float64{1, 2.5}
	f := 3.0
	for v, want := range map[any]string{
		&fs: `[1.0, 2.5]`,
		&f:  `3.0`,
	} {
		b, err := Marshal(v, Line)
		if err != nil || string(b) != want {
			t.Errorf("Marshal(%T) = %s, %v; want %s", v, b, err, want)
		}
	}
}

// A nil pointer is written as null, as encoding/json (which the package
// doc defers to for other Go values) writes it, not as an object.
func TestNilPointerIsNull(t *testing.T) {
	t.Parallel()
	type rec struct{ A int }
	for _, v := range []any{(*int)(nil), (*rec)(nil), (*map[string]any)(nil)} {
		b, err := Marshal(map[string]any{"p": v}, Line)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != `{"p": null}` {
			t.Errorf("Marshal of a nil %T = %s; want {\"p\": null}", v, b)
		}
	}
}

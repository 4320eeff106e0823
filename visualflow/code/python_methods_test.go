package code

import (
	"context"
	"reflect"
	"strings"
	"testing"
)

// dict.popitem() removes and returns the last inserted pair, as Python's
// (LIFO since 3.7); go.starlark.net's removed the first.
func TestDictPopitemIsLIFO(t *testing.T) {
	src := "def transform(_input):\n" +
		"    d = {\"a\": 1, \"b\": 2}\n" +
		"    d[\"c\"] = 3\n" +
		"    item = d.popitem()\n" +
		"    return {\"item\": item, \"rest\": d}\n"
	got, _, err := Run(context.Background(), src, "transform", map[string]any{}, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"item": []any{"c", int64(3)}, "rest": map[string]any{"a": int64(1), "b": int64(2)}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("popitem: got %#v, want %#v (Python pops the last inserted pair)", got, want)
	}
	_, _, err = Eval(context.Background(), `{}.popitem()`, map[string]any{}, Limits{})
	if err == nil || !strings.Contains(err.Error(), "popitem(): dictionary is empty") {
		t.Fatalf("popitem of an empty dict: %v, want Python's error", err)
	}
}

// str.upper() and str.lower() use Python's full Unicode case mapping
// (SpecialCasing, the final sigma), not Go's one-rune mapping.
func TestUnicodeCaseMappingAsPython(t *testing.T) {
	got, _, err := Eval(context.Background(),
		`["straße".upper(), "ﬁne".upper(), "ΟΔΟΣ".lower(), "İ".lower(), getattr("ß", "upper")()]`,
		map[string]any{}, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	want := []any{"STRASSE", "FINE", "οδος", "i\u0307", "SS"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q, want %q (Python's full case mapping)", got, want)
	}
}

// A case mapping can grow a string (ΐ upper-cases to three runes): one
// whose result would pass the memory limit is refused before it is built.
// The string takes half the limit: the rest is room for what the process
// allocates meanwhile, which the watchdog's heap check also counts (with
// 212 KiB of room, under -race, the watchdog stopped the code first).
func TestUpperPastMemoryLimitRefused(t *testing.T) {
	src := "def transform(_input):\n" +
		"    s = \"\\u0390\" * 1000000\n" + // 2 MB, upper-cased to 6 MB
		"    return len(s.upper())\n"
	_, _, err := Run(context.Background(), src, "transform", map[string]any{}, Limits{MaxMemory: 4 << 20})
	if err == nil || !strings.Contains(err.Error(), "str.upper would build a string of") {
		t.Fatalf("upper() past a 4 MiB limit: %v, want the limit error", err)
	}
}

package code

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/internal/pyjson"
)

// A result nested exactly pyjson.MaxDepth levels converts, and the run's
// stores write it; one level more is refused by the conversion, naming
// the limit (docs/visualflow.md: more than 900 levels fail).
func TestResultAtTheStoresDepthConverts(t *testing.T) {
	src := func(depth int) string {
		return "def f(_input):\n    x = 1\n    for i in range(" + strconv.Itoa(depth) + "):\n        x = [x]\n    return x\n"
	}
	got, _, err := Run(t.Context(), src(pyjson.MaxDepth), "f", map[string]any{}, Limits{Timeout: time.Minute})
	if err != nil {
		t.Fatalf("a result nested %d levels: %v, want it converted", pyjson.MaxDepth, err)
	}
	if err := pyjson.Check(got, "result"); err != nil {
		t.Fatalf("the stores refuse the converted result: %v", err)
	}
	_, _, err = Run(t.Context(), src(pyjson.MaxDepth+1), "f", map[string]any{}, Limits{Timeout: time.Minute})
	if err == nil || !strings.Contains(err.Error(), "nested too deeply") {
		t.Fatalf("a result nested %d levels: error %v, want \"value nested too deeply\"", pyjson.MaxDepth+1, err)
	}
}

// An error converting a list item names its index from 0, as Python
// writes it: the second item is result[1].
func TestConversionErrorNamesListIndexFromZero(t *testing.T) {
	_, _, err := Eval(t.Context(), `[1, {"k": len}]`, nil, Limits{})
	if err == nil || !strings.Contains(err.Error(), "(at result[1].k)") {
		t.Fatalf("err = %v, want it to name result[1].k", err)
	}
}

// The result's strings may total exactly the memory limit: the
// conversion refuses only past it. (1,024 references to one 64 KiB string
// hold 64 KiB of memory, appended in a loop so no repeat guard refuses
// them first.)
func TestResultStringsExactlyAtTheMemoryLimitConvert(t *testing.T) {
	src := "def f(_input):\n    s = \"a\" * 65536\n    l = []\n    for i in range(1024):\n        l.append(s)\n    return l\n"
	got, _, err := Run(t.Context(), src, "f", map[string]any{}, Limits{MaxMemory: 64 << 20, Timeout: time.Minute})
	if err != nil {
		t.Fatalf("strings of exactly the limit: %v, want them converted", err)
	}
	if l, ok := got.([]any); !ok || len(l) != 1024 {
		t.Fatalf("got %T of %d items, want 1024 strings", got, len(l))
	}
}

package code

import (
	"context"
	"encoding/json"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"
)

// The repeat operators (list, tuple, string and bytes `*` an int, either
// way round, and `*=`) are under the code node's memory limit as one
// builtin call is (docs/visualflow.md, "Code nodes": "One builtin call may
// not allocate past the memory limit at once"): Starlark evaluates a
// repeat in one allocation of up to 2^30 items, which the 5ms watchdog
// sees only afterwards, and where the process cannot get the memory the
// Go runtime aborts the whole gateway.

// repeatCases are code bodies (of f(_input)) each making one repeat of
// about 128 MiB or more; under an 8 MiB limit each must be refused.
var repeatCases = map[string]string{
	"list * int":           "return len([0] * (1 << 23))",
	"int * list":           "return len((1 << 23) * [0])",
	"tuple * int":          "return len((0,) * (1 << 23))",
	"int * tuple":          "return len((1 << 23) * (0, 1))",
	"string * int":         `return len("a" * (1 << 27))`,
	"int * string":         `return len((1 << 27) * "ab")`,
	"bytes * int":          `return len(b"a" * (1 << 27))`,
	"big count":            "return len([0] * (1 << 100))",
	"long string * small":  "s = \"a\" * (1 << 20)\n    return len(s * 200)",
	"list *= int":          "x = [0]\n    x *= 1 << 23\n    return len(x)",
	"int *= list":          "x = 1 << 23\n    x *= [0]\n    return len(x)",
	"string *= int":        "s = \"ab\"\n    s *= 1 << 27\n    return len(s)",
	"index *= int":         "d = {\"k\": [0, 0]}\n    d[\"k\"] *= 1 << 22\n    return len(d[\"k\"])",
	"nested repeat":        "return len([[0] * (1 << 23)] * 2)",
	"in a comprehension":   "return [len(x * (1 << 23)) for x in [[0]]]",
	"in a lambda":          "g = lambda n: [0] * n\n    return len(g(1 << 23))",
	"in a default value":   "def h(x = [0] * (1 << 23)):\n        return len(x)\n    return h()",
	"parenthesised":        "return len(([0]) * ((1 << 23)))",
	"in a nested function": "def h(n):\n        return [0] * n\n    return len(h(1 << 23))",
}

// totalAllocDuring returns how many bytes the process allocated while fn
// ran (the package's other tests are parallel, so they do not run now).
// It collects first: the memory limit is on the heap's growth from its
// size at the start, and garbage earlier tests left uncollected would
// count in that size, giving the code that much more room before its
// first collection (approximate, as docs/visualflow.md says).
func totalAllocDuring(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func TestRepeatPastMemoryLimitIsRefusedBeforeAllocating(t *testing.T) {
	for name, body := range repeatCases {
		t.Run(name, func(t *testing.T) {
			src := "def f(_input):\n    " + body + "\n"
			var err error
			var got any
			alloc := totalAllocDuring(func() {
				got, _, err = Run(context.Background(), src, "f", map[string]any{}, Limits{MaxMemory: 8 << 20, Timeout: 10 * time.Second})
			})
			if !errors.Is(err, ErrLimit) {
				t.Fatalf("got %v, err = %v; want a sandbox limit error", got, err)
			}
			if msg := err.Error(); !strings.Contains(msg, "repeat") || !strings.Contains(msg, "memory limit of 8 MiB") {
				t.Errorf("err = %q; want it to name the repeat, its sizes and the memory limit", msg)
			}
			if alloc > 64<<20 {
				t.Errorf("the process allocated %d MiB before the refusal; the repeat must be refused before Starlark allocates", alloc>>20)
			}
		})
	}
}

// The legacy function node's expression goes through Eval, which must be
// guarded too.
func TestRepeatPastMemoryLimitIsRefusedInExpressions(t *testing.T) {
	var err error
	alloc := totalAllocDuring(func() {
		_, _, err = Eval(context.Background(), "len(x * (1 << 23))", map[string]any{"x": []any{int64(0)}}, Limits{MaxMemory: 8 << 20})
	})
	if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "repeat") {
		t.Fatalf("err = %v; want the repeat refused with a sandbox limit error", err)
	}
	if alloc > 64<<20 {
		t.Errorf("the process allocated %d MiB before the refusal", alloc>>20)
	}
}

// [0] * (1 << 29) is 8 GiB in one make: under the default limits it must
// be refused, not abort the process. It runs in a child process whose
// address space is capped at 8 GiB, so the allocation, if tried, fails at
// once with Go's fatal "out of memory" on any machine.
func TestHugeRepeatIsALimitNotAFatalError(t *testing.T) {
	const src = "def f(_input):\n    return len([0] * (1 << 29))\n"
	errText, died, hung, out, child := codeInTimedChild(t, "CODE_REPEAT_CHILD", 8<<30, src, Limits{Timeout: 5 * time.Second}, time.Minute)
	if child {
		return
	}
	wantChildLimitError(t, "repeat", errText, died, hung, out)
	if !strings.Contains(errText, "repeat") {
		t.Errorf("child error %q, want the repeat refused with a sandbox limit error", errText)
	}
}

// Repeats within the limit, and every other `*`, keep Starlark's meaning,
// results and error messages.
func TestRepeatWithinLimitKeepsStarlarkSemantics(t *testing.T) {
	for expr, want := range map[string]string{
		`[1, 2] * 3`:                   `[1,2,1,2,1,2]`,
		`3 * [1]`:                      `[1,1,1]`,
		`(1,) * 2`:                     `[1,1]`,
		`2 * (1, "a")`:                 `[1,"a",1,"a"]`,
		`"ab" * 3`:                     `"ababab"`,
		`3 * "ab"`:                     `"ababab"`,
		`len(b"ab" * 3)`:               `6`,
		`[0] * 0`:                      `[]`,
		`[0] * -5`:                     `[]`,
		`"" * (1 << 100)`:              `""`,
		`[] * (1 << 100)`:              `[]`,
		`len([[0] * 1000] * 1000)`:     `1000`,
		`6 * 7`:                        `42`,
		`-3 * 7`:                       `-21`,
		`2.5 * 2`:                      `5`,
		`2 * 2.5`:                      `5`,
		`1.5 * 1.5`:                    `2.25`,
		`str((1 << 70) * 3)`:           `"3541774862152233910272"`,
		`(1 << 62) * 4 == 1 << 64`:     `true`,
		`str((1 << 100) * (1 << 100))`: `"1606938044258990275541962092341162602522202993782792835301376"`,
		`[x * 2 for x in [1, 2]]`:      `[2,4]`,
		`(lambda n: "x" * n)(2)`:       `"xx"`,
	} {
		got, _, err := Eval(context.Background(), expr, nil, Limits{})
		if err != nil {
			t.Errorf("%s: %v", expr, err)
			continue
		}
		b, _ := json.Marshal(got)
		if string(b) != want {
			t.Errorf("%s = %s, want %s", expr, b, want)
		}
	}

	src := `
def f(_input):
    calls = []
    def key():
        calls.append(1)
        return "k"
    x = [1, 2]
    y = x
    x *= 2
    n = 3
    n *= 4
    s = "ab"
    s *= 2
    t = 2
    t *= [0]
    d = {"k": [7]}
    d[key()] *= 3
    return {"x": x, "y": y, "n": n, "s": s, "t": t, "d": d, "calls": len(calls)}
`
	got, _, err := Run(context.Background(), src, "f", map[string]any{}, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(got)
	// *= on a list makes a new list in Starlark (y keeps [1, 2]); the
	// target's index is evaluated once.
	if want := `{"calls":1,"d":{"k":[7,7,7]},"n":12,"s":"abab","t":[0,0],"x":[1,2,1,2],"y":[1,2]}`; string(b) != want {
		t.Errorf("*= results %s, want %s", b, want)
	}

	for expr, want := range map[string]string{
		`"a" * "b"`:    "unknown binary op: string * string",
		`[0] * 1.5`:    "unknown binary op: list * float",
		`{} * 2`:       "unknown binary op: dict * int",
		`True * [0]`:   "unknown binary op: bool * list",
		`None * None`:  "unknown binary op: NoneType * NoneType",
		`[0] * (1, 2)`: "unknown binary op: list * tuple",
		`"a" * [1]`:    "unknown binary op: string * list",
		`1.5 * "a"`:    "unknown binary op: float * string",
		`(1 << 511) * (1 << 511) * (1 << 511) * 1.0`: "int too large to convert to float",
	} {
		_, _, err := Eval(context.Background(), expr, nil, Limits{})
		if err == nil || errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want Starlark's %q", expr, err, want)
		}
	}
	_, _, err = Run(context.Background(), "def f(_input):\n    x = \"a\"\n    x *= None\n    return x\n", "f", map[string]any{}, Limits{})
	if err == nil || !strings.Contains(err.Error(), "unknown binary op: string * NoneType") {
		t.Errorf("x *= None: err = %v, want Starlark's type error", err)
	}

	// Without a memory limit Starlark's own bound answers.
	_, _, err = Eval(context.Background(), "[0] * (1 << 40)", nil, Limits{MaxMemory: -1})
	if err == nil || errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "too large") {
		t.Errorf("[0] * (1 << 40) without a memory limit: err = %v, want Starlark's repeat count error", err)
	}
}

// The rewritten code calls the guard by a name that is not an identifier,
// so user code can neither shadow nor reassign it to escape the check.
func TestRepeatGuardNameIsNotAnIdentifier(t *testing.T) {
	if identRE.MatchString(repeatGuardName) {
		t.Fatalf("repeatGuardName %q is an identifier user code could rebind", repeatGuardName)
	}
	src := "def f(_input):\n    repeat = None\n    guard = None\n    return len([0] * (1 << 23))\n"
	if _, _, err := Run(context.Background(), src, "f", map[string]any{}, Limits{MaxMemory: 8 << 20}); !errors.Is(err, ErrLimit) {
		t.Fatalf("err = %v; want a sandbox limit error", err)
	}
}

package code

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.starlark.net/starlark"
)

// Tests of the sandbox's limits and conversions; each test's comment
// gives the rule it checks and the failure it guards against.

// runNoPanic calls Run and turns a panic escaping it into a test failure
// (so the test binary survives to report it).
func runNoPanic(t *testing.T, src string, lim Limits) (got, panicked any, err error) {
	t.Helper()
	func() {
		defer func() { panicked = recover() }()
		got, _, err = Run(context.Background(), src, "f", map[string]any{}, lim)
	}()
	return got, panicked, err
}

// A Go panic inside Starlark's library (here list() preallocating a
// range's length: "makeslice: cap out of range") escapes Run: execute has
// no recover, so the caller gets a panic instead of an error, and the
// watchdog goroutine is left running until its timer fires (close(done)
// is skipped). In a flow the runtime's callNode turns it into a failed run
// ("panic: ..."), bypassing the code node's failure record.
func TestStarlarkPanicBecomesAnError(t *testing.T) {
	src := "def f(_input):\n    return len(list(range(1 << 62)))\n"
	// Without a memory limit nothing refuses the call before Starlark's
	// make panics.
	for _, lim := range []Limits{{Timeout: 50 * time.Millisecond}, {Timeout: 50 * time.Millisecond, MaxMemory: -1}} {
		_, p, err := runNoPanic(t, src, lim)
		if p != nil {
			t.Fatalf("Run panicked (%v); a panic inside the sandbox must come back as an error", p)
		}
		if err == nil {
			t.Fatalf("Run returned no error for list(range(1 << 62))")
		}
	}
}

// list(range(1 << 40)) preallocates 16 TiB in one Go call: the runtime
// throws "fatal error: out of memory", which no recover, step budget or
// memory watchdog can stop, and the whole process (every run in the
// gateway) dies. The memory limit must refuse it before the allocation.
// The call runs in a child process (address space capped at 8 GiB, so the
// allocation fails at once on any machine) because the failure is fatal.
func TestHugePreallocationIsALimitNotAFatalError(t *testing.T) {
	const src = "def f(_input):\n    return len(list(range(1 << 40)))\n"
	_, errText, child := codeInChild(t, "CODE_PREALLOC_CHILD", func() error {
		return syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: 8 << 30, Max: 8 << 30})
	}, src, Limits{Timeout: 2 * time.Second})
	if child {
		return
	}
	if !strings.Contains(errText, "limit") {
		t.Errorf("child error %q, want a sandbox limit error", errText)
	}
}

// str() of a deeply nested list ignores the timeout: writePyRepr runs in Go
// (no pulse) and its cycle check scans every enclosing container at each
// level, so the time is quadratic in the depth. 40,000 levels take ~5s
// under a 100ms timeout; the ~1.1M levels the default 10M-step budget can
// build (in ~100 MB) would take about an hour, holding a worker and
// ignoring run cancellation. (Python raises RecursionError at ~1,000.)
func TestStrOfDeepNestingHonoursTimeout(t *testing.T) {
	src := "def f(_input):\n    x = []\n    for i in range(40000):\n        x = [x]\n    return len(str(x))\n"
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		_, _, err := Run(context.Background(), src, "f", map[string]any{}, Limits{Timeout: 100 * time.Millisecond})
		done <- err
	}()
	select {
	case <-done:
		if took := time.Since(start); took > 2*time.Second {
			t.Fatalf("str() of a 40,000-deep list under a 100ms timeout returned after %v", took)
		}
	case <-time.After(2 * time.Second):
		t.Fatalf("str() of a 40,000-deep list under a 100ms timeout still running after 2s")
	}
}

// The result is converted (FromStarlark) after close(done) stopped the
// watchdog, and nothing else bounds it: a result sharing sub-lists
// (x = [x, x] twenty times: 20 small Starlark lists) expands to 2 million
// Go values (~70 MB) under a 4 MiB memory limit and is accepted. Forty
// levels need 2^40 values: the process is OOM-killed.
func TestResultConversionIsUnderTheMemoryLimit(t *testing.T) {
	src := "def f(_input):\n    x = [1]\n    for i in range(20):\n        x = [x, x]\n    return x\n"
	_, _, err := Run(context.Background(), src, "f", map[string]any{}, Limits{MaxMemory: 4 << 20})
	if !errors.Is(err, ErrLimit) {
		t.Fatalf("err = %v; a result expanding to ~70 MB under a 4 MiB limit must fail with ErrLimit", err)
	}
}

// FromStarlark promises that dict keys that are not strings "are converted
// with str()" (TestNonStringDictKeysUseStr pins ints, None, bools, 1.5),
// but it uses Starlark's String(), not the package's Python str(): a float
// key 1e6 becomes "1e+06" (Python's str() and json.dumps give
// "1000000.0"), a tuple key ("a", 1) becomes `("a", 1)` (str(): "('a', 1)").
func TestNonStringDictKeysUsePythonStr(t *testing.T) {
	got, _, err := Eval(context.Background(), `{1e6: "f", ("a", 1): "t"}`, nil, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := got.(map[string]any)
	for _, k := range []string{"1000000.0", "('a', 1)"} {
		if _, ok := m[k]; !ok {
			t.Errorf("key %q missing (as Python's str() writes it); got keys %v", k, keysOf(m))
		}
	}
}

func keysOf(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// execute classifies errors by searching the message for "too many
// steps": a user error whose text holds those words (a missing dict key,
// a bad int() literal from data) is reported as "sandbox limit exceeded:
// exceeded 10000000 execution steps", hiding the real error.
func TestUserErrorIsNotMistakenForStepLimit(t *testing.T) {
	src := "def f(_input):\n    return {\"a\": 1}[\"too many steps\"]\n"
	_, _, err := Run(context.Background(), src, "f", map[string]any{}, Limits{})
	if err == nil {
		t.Fatal("no error")
	}
	if errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "not in dict") {
		t.Fatalf("err = %q; want the key error, not a step-limit error", err)
	}
}

// A result that cannot cross the boundary (a function inside a dict) fails
// with "cannot return a value of type builtin_function_or_method", naming
// neither key: in a large result the author cannot find the culprit. The
// stores name the path of a value they refuse
// ("vars._temp.node_outputs.code.v is not JSON-serialisable ...").
func TestUnconvertibleResultErrorNamesKeyPath(t *testing.T) {
	src := "def f(_input):\n    return {\"outer_key\": {\"inner_key\": [1, len]}}\n"
	_, _, err := Run(context.Background(), src, "f", map[string]any{}, Limits{})
	if err == nil {
		t.Fatal("no error")
	}
	if !strings.Contains(err.Error(), "outer_key") || !strings.Contains(err.Error(), "inner_key") {
		t.Fatalf("err = %q; want it to name the key path outer_key/inner_key", err)
	}
}

// Builtins the spec lists for the code node (RestrictedPython's min, max,
// enumerate, sorted) refuse arguments Python accepts and flows use; none of
// these is among the differences docs/visualflow.md lists, and each can
// be wrapped in predeclared() as int/float/sum are.
func TestBuiltinKeywordArgumentsAsPython(t *testing.T) {
	for expr, want := range map[string]string{
		`max([], default=0)`:                   `0`,
		`min([3, 1], default=None)`:            `1`,
		`list(enumerate(["a", "b"], start=1))`: `[[1,"a"],[2,"b"]]`,
		`sorted([2, 1], key=None)`:             `[1,2]`,
	} {
		got, _, err := Eval(context.Background(), expr, nil, Limits{})
		if err != nil {
			t.Errorf("%s: %v (Python gives %s)", expr, err, want)
			continue
		}
		b, _ := json.Marshal(got)
		if string(b) != want {
			t.Errorf("%s = %s, want %s", expr, b, want)
		}
	}
	_ = fmt.Sprint
}

// The memory limit is on what the code holds, not on garbage not yet
// collected: the heap the watchdog reads counts both, and in a process
// with a few hundred MB of live heap the GC lets garbage pass 256 MiB
// before collecting. Here: 400 MB of unrelated live data, and a loop
// that builds a 4 KB string 300,000 times (1.2 GB allocated, 4 KB live).
// Past the limit checkHeap collects and checks again.
func TestGarbageDoesNotCountAgainstMemoryLimit(t *testing.T) {
	ballast := make([][]byte, 0, 400)
	for i := 0; i < 400; i++ {
		b := make([]byte, 1<<20)
		b[0] = 1
		ballast = append(ballast, b)
	}
	defer runtime.KeepAlive(ballast)
	src := "def f(_input):\n" +
		"    n = 0\n" +
		"    for i in range(300000):\n" +
		"        s = \"x\" * 4000\n" +
		"        n += len(s)\n" +
		"    return n\n"
	got, _, err := Run(context.Background(), src, "f", map[string]any{}, Limits{Timeout: 30 * time.Second})
	if err != nil {
		t.Fatalf("err = %v; want 1200000000: the code never holds more than one 4 KB string", err)
	}
	if got != int64(1200000000) {
		t.Fatalf("got %#v", got)
	}
}

// Guards Limits.MaxMemory = -1, which disables the memory watchdog: a run
// whose heap grows is not cancelled for it.
func TestNegativeMaxMemoryDisablesWatchdog(t *testing.T) {
	t.Parallel()
	src := "def transform(_input):\n    x = []\n    for i in range(300000):\n        x.append('abcdefghij' * 4)\n    return len(x)"
	got, _, err := Run(context.Background(), src, "transform", map[string]any{}, Limits{MaxMemory: -1, Timeout: 30 * time.Second})
	if err != nil || got != int64(300000) {
		t.Fatalf("got %v, %v; want 300000", got, err)
	}
}

// Guards cancellation through the context: a cancelled context stops a
// running program with a limit error well before its timeout.
func TestContextCancellationStopsRun(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, _, err := Run(ctx, "def transform(_input):\n    while True:\n        pass", "transform", map[string]any{},
		Limits{Timeout: 10 * time.Second, MaxSteps: 1 << 62})
	if err == nil || !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "context cancelled") {
		t.Fatalf("err = %v, want a limit error for the cancelled context", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("cancellation took %s", d)
	}
}

// Guards the default step budget of 10,000,000 (Limits doc comment): a
// runaway loop under zero Limits stops on steps, well before the timeout.
func TestDefaultStepBudgetIsTenMillion(t *testing.T) {
	t.Parallel()
	_, st, err := Run(context.Background(), "def transform(_input):\n    while True:\n        pass", "transform", map[string]any{},
		Limits{Timeout: 20 * time.Second})
	if err == nil || !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "exceeded 10000000 execution steps") {
		t.Fatalf("err = %v, want the 10,000,000 step limit", err)
	}
	if st.Steps < 10_000_000 || st.Steps > 10_100_000 {
		t.Fatalf("steps = %d", st.Steps)
	}
}

// The watchdog's own stop names a limit under one MiB in bytes: it read
// "memory limit of 0 MiB exceeded". (Collected first: garbage earlier
// tests left counts in the heap the limit is measured from.)
func TestWatchdogNamesASubMiBLimit(t *testing.T) {
	src := "def f(_input):\n" +
		"    x = []\n" +
		"    for i in range(10000000):\n" +
		"        x.append(str(i) * 100)\n" +
		"    return len(x)\n"
	runtime.GC()
	_, _, err := Run(context.Background(), src, "f", map[string]any{}, Limits{MaxMemory: 512 << 10, MaxSteps: 1 << 40, Timeout: 30 * time.Second})
	if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "memory limit of 524288 bytes exceeded") {
		t.Fatalf("err = %v; want the watchdog's stop naming the limit in bytes", err)
	}
}

// Guards Limits' defaults: a negative Timeout is taken as unset, as zero
// is (withDefaults: "<= 0"), not as a budget already spent; a run that
// takes a few milliseconds completes.
func TestNegativeTimeoutTakesTheDefault(t *testing.T) {
	t.Parallel()
	src := "def transform(_input):\n    n = 0\n    for i in range(300000):\n        n += 1\n    return n"
	got, _, err := Run(context.Background(), src, "transform", map[string]any{}, Limits{Timeout: -time.Second})
	if err != nil || got != int64(300000) {
		t.Fatalf("got %v, %v; want 300000: a negative timeout means the default of 5s", got, err)
	}
}

// Guards guard.cancel recording the first reason: when a second stop
// (the timeout, a cancelled context) comes after the first, the error
// still names the limit that stopped the code.
func TestGuardKeepsTheFirstStopReason(t *testing.T) {
	t.Parallel()
	th := &starlark.Thread{}
	g := &guard{maxItems: -1, maxBytes: -1}
	g.cancel(th, "memory limit of 1 MiB exceeded")
	g.cancel(th, "timeout after 5s")
	got := "<none>"
	if r := g.stop.Load(); r != nil {
		got = *r
	}
	if got != "memory limit of 1 MiB exceeded" {
		t.Fatalf("stop reason = %q; want the first one, %q", got, "memory limit of 1 MiB exceeded")
	}
}

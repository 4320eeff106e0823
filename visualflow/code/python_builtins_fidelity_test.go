package code

import (
	"context"
	"errors"
	"reflect"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

// str() and repr() of a container that holds itself. Python writes the back reference as [...] / {...}:
//
//	>>> l = [1]; l.append(l); str(l)
//	'[1, [...]]'
//	>>> d = {}; d['k'] = d; repr(d)
//	"{'k': {...}}"
//
// Without a cycle check in writePyRepr, user code in the sandbox overflows
// the goroutine stack: "fatal error: stack overflow", which no recover,
// step budget, timeout or memory watchdog stops, and the process dies.
//
// The call runs in a child process (with a small max stack, so the
// overflow is quick and cheap) because the failure is fatal.
func TestStrOfSelfContainingContainer(t *testing.T) {
	const src = "def f(x):\n" +
		"  l = [1]\n" +
		"  l.append(l)\n" +
		"  d = {}\n" +
		"  d['k'] = d\n" +
		"  return [str(l), repr(d)]\n"
	got, errText, child := codeInChild(t, "CODE_STR_CYCLE_CHILD", func() error {
		debug.SetMaxStack(32 << 20)
		return nil
	}, src, Limits{})
	if child {
		return
	}
	want := []any{"[1, [...]]", "{'k': {...}}"}
	if errText != "" || !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v (err %q), want %#v as Python writes them", got, errText, want)
	}
}

// int() and float() of a string accept what Python's accept (Starlark's
// refuse surrounding whitespace and underscores between digits): a code
// node doing float(x['price']) on "12.5\n" (text from an LLM or a file)
// must not fail.
//
//	>>> [int(" 3 "), float(" 2.5\n"), int("1_000"), float("1_000.5"), int("\t-7\n")]
//	[3, 2.5, 1000, 1000.5, -7]
func TestIntFloatOfStringsAsPython(t *testing.T) {
	got, _, err := Eval(context.Background(),
		`[int(" 3 "), float(" 2.5\n"), int("1_000"), float("1_000.5"), int("\t-7\n")]`,
		map[string]any{}, Limits{})
	if err != nil {
		t.Fatalf("Eval: %v (Python gives [3, 2.5, 1000, 1000.5, -7])", err)
	}
	want := []any{int64(3), 2.5, int64(1000), 1000.5, int64(-7)}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v, want %#v", got, want)
	}
}

// The sandbox's timeout and memory watchdog stop code through
// Thread.Cancel, which Starlark observes only between its own steps; the
// Go loops of our sum(), filter() and map() must look at it too, or one
// call over a huge range runs on for minutes. Each call below would take
// minutes without that; the bound is generous so that a slow machine
// never fails it.
func TestLoopingBuiltinsHonourTimeout(t *testing.T) {
	for _, expr := range []string{
		`sum(range(1000000000))`,
		`len(filter(None, range(1000000000)))`,
		`len(map(abs, range(1000000000)))`,
	} {
		start := time.Now()
		_, _, err := Eval(context.Background(), expr, map[string]any{}, Limits{Timeout: 20 * time.Millisecond})
		took := time.Since(start)
		if err == nil || !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "timeout") {
			t.Fatalf("%s: err = %v, want the timeout (ErrLimit)", expr, err)
		}
		if took > 5*time.Second {
			t.Errorf("%s: a 20ms timeout stopped it only after %v", expr, took)
		}
	}
}

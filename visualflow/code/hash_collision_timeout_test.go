package code

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// Promise: Limits.Timeout "is the wall-clock budget" (sandbox.go) and
// docs/visualflow.md ("Code nodes"): Go loops stop at the timeout like
// Starlark code. Starlark hashes an int by its low 32 bits, so the ints
// i << 32 all collide: building a set or dict of 50,000 of them in one
// builtin call is quadratic, minutes in one Go loop. set(), dict() and the
// set and dict updates now take their iterable through a watched iterator
// (watched.go) that stops when the watchdog does.
func TestCollidingHashesStopAtTheTimeout(t *testing.T) {
	cases := map[string]string{
		"set":         "return len(set(l))",
		"dict":        "return len(dict(zip(l, l)))",
		"set.update":  "x = set()\n    x.update(l)\n    return len(x)",
		"set.union":   "return len(set().union(l))",
		"dict.update": "x = {}\n    x.update([(i, i) for i in l])\n    return len(x)",
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			src := "def f(_input):\n    l = [i << 32 for i in range(50000)]\n    " + body + "\n"
			wantLimitErrorInChild(t, "HASH_COLLIDE_CHILD", 0, src, Limits{Timeout: 500 * time.Millisecond}, 4*time.Second, name+" of colliding ints")
		})
	}
}

// Without a memory limit the timeout still stops set() and dict().
func TestCollidingHashesStopAtTheTimeoutWithoutMemoryLimit(t *testing.T) {
	const src = "def f(_input):\n    l = [i << 32 for i in range(50000)]\n    return len(set(l))\n"
	wantLimitErrorInChild(t, "HASH_COLLIDE_NOMEM_CHILD", 0, src, Limits{Timeout: 500 * time.Millisecond, MaxMemory: -1}, 4*time.Second, "set() of colliding ints")
}

// The watched iterables keep Starlark's results and errors.
func TestSetAndDictKeepStarlarkBehaviour(t *testing.T) {
	const src = "def f(_input):\n    d = dict([(\"a\", 1)], b = 2)\n    d.update({\"c\": 3})\n    d.update([(\"e\", 5)], f = 6)\n    s = set([1, 2, 2])\n    s.update([3])\n    return [d, sorted(s), sorted(s.union([9])), dict(d)[\"a\"], sorted(set(\"ab\".elems()))]\n"
	got, _, err := Run(context.Background(), src, "f", map[string]any{}, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if want := "[map[a:1 b:2 c:3 e:5 f:6] [1 2 3] [1 2 3 9] 1 [a b]]"; fmt.Sprint(got) != want {
		t.Errorf("got %v, want %s", got, want)
	}
	for body, want := range map[string]string{
		"set([[1]])":        "set: unhashable type: list",
		"dict([1])":         "dict: dictionary update sequence element #0 is not iterable (int)",
		"dict([(1, 2, 3)])": "dict: dictionary update sequence element #0 has length 3, want 2",
		"set(1)":            "got int, want iterable",
	} {
		_, _, err := Run(context.Background(), "def f(_input):\n    return "+body+"\n", "f", map[string]any{}, Limits{})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", body, err, want)
		}
	}
}

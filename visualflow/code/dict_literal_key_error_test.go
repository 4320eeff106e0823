package code

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Promise: docs/visualflow.md ("Code nodes"): an operation "fails with
// the limit error instead of exhausting the process"; the sandbox's
// guards run before go.starlark.net allocates (sandbox.go guardCode).
// A dict literal whose key is met twice fails in Starlark's interpreter
// (SETDICTUNIQ) with "duplicate key: %v", the whole key written into the
// error: for a tuple sharing one 1 MiB string that is one string far
// larger than the tuple, built in one Go call. The literal is now built
// by the sandbox (dictlit.go), which quotes only the beginning of a long
// key; a short key keeps Starlark's exact text.

func TestDuplicateKeyOfHugeTextIsNotWrittenWhole(t *testing.T) {
	// 512 references to a 1 MiB string: a 512 MiB text.
	const src = "def f(_input):\n    s = \"a\" * (1 << 20)\n    t = tuple([s for _ in range(512)])\n    return {t: 1, t: 2}\n"
	var err error
	alloc := totalAllocDuring(func() {
		_, _, err = Run(context.Background(), src, "f", map[string]any{}, Limits{Timeout: 10 * time.Second})
	})
	if alloc > 64<<20 {
		t.Errorf("the process allocated %d MiB: the key's text was written", alloc>>20)
	}
	if err == nil || !strings.Contains(err.Error(), "duplicate key") {
		t.Fatalf("err = %.200v, want the duplicate key error", err)
	}
	if msg := err.Error(); len(msg) > 2*maxKeyText || !strings.HasPrefix(msg, runtimeError+`duplicate key: ("aaa`) || !strings.Contains(msg, "more than 1024 bytes") {
		t.Errorf("err = %.200q... (%d bytes); want the key's beginning and its size, under %d bytes", msg, len(msg), 2*maxKeyText)
	}
}

func TestDuplicateKeyOfHugeTextDoesNotKillTheProcess(t *testing.T) {
	hugeKeyInChild(t, "DUPLICATE_KEY_CHILD", "{t: 1, t: 2}", "duplicate key error of a huge key")
}

// A dict literal built by the guard is Starlark's: same entries in the
// same order, operands evaluated once and in the same order, and the
// same errors, guarded (default limits) as unguarded (no memory limit,
// nothing rewritten).
func TestDictLiteralGuardKeepsStarlarkBehaviour(t *testing.T) {
	many := make([]string, 300) // more entries than a call has arguments
	for i := range many {
		many[i] = "k + " + strconv.Itoa(i) + ": i()"
	}
	bodies := []string{
		`return {}`,
		`return {"a": 1}`,
		`return {"a": 1, "b": [2], "c": {"d": 3}}`,
		`return {"a": 1, "a": 2}`,
		`k = (1, "b")` + "\n    return {k: 1, (1, \"b\"): 2}",
		`k = "x"` + "\n    return {k: 1, \"y\": 2, k + \"\": 3}",
		`return {[1]: 2, "a": 1}`,
		`return {"a": 1, [1]: 2}`,
		`k = "z"` + "\n    return {k: 1, {}: 2}",
		`k = "z"` + "\n    return {k: 1, \"z\": undefined_name}",
		"log = []\n    def i(x):\n        log.append(x)\n        return x\n    d = {i(\"b\"): i(1), i(\"a\"): i(2), i(\"b\"): i(3)}\n    return [d, log]",
		"log = []\n    def i(x):\n        log.append(x)\n        return x\n    d = {i(\"b\"): i(1), i(\"a\"): i(2)}\n    return [d, log, list(d)]",
		"n = [0]\n    def i():\n        n[0] += 1\n        return n[0]\n    k = 1000\n    d = {" + strings.Join(many, ", ") + "}\n    return [len(d), d[k + 299], n[0]]",
		"k = 1\n    d = {k: [1], k + 1: [2]}\n    d[1].append(3)\n    d[3] = 4\n    return sorted(d.items())",
		"k = (1,)\n    return [{x: k, k: x} for x in range(3)]",
		"k = [1]\n    return {(1, 2): k, 1.0: 2, 1: 3}",
		"k = 1\n    return {k: 2, True: 3, 1.0: 4}",
		// The error comes before the later operands are evaluated.
		"k = 1\n    return {k: 2, k: 3, \"x\": fail(\"later\")}",
		"k = [1]\n    return {k: 2, \"x\": fail(\"later\")}",
	}
	for _, body := range bodies {
		src := "def f(_input):\n    " + body + "\n"
		guarded, plain := runBoth(t, src)
		if guarded != plain {
			t.Errorf("%s:\n guarded   %s\n unguarded %s", body, guarded, plain)
		}
	}
}

// An expression that is a dict literal (Eval) is rewritten as a whole.
func TestDictLiteralGuardInExpression(t *testing.T) {
	for expr, want := range map[string]string{
		`{k: 1, "b": [k]}`:    `map[a:1 b:[a]]`,
		`{k: 1, "a": 2}`:      `error: duplicate key: "a"`,
		`[{k: 1, k + "": 2}]`: `error: duplicate key: "a"`,
	} {
		for _, lim := range []Limits{{}, {MaxMemory: -1}} {
			got, _, err := Eval(context.Background(), expr, map[string]any{"k": "a"}, lim)
			text := fmt.Sprint(got)
			if err != nil {
				text = "error: " + err.Error()
			}
			if text != want {
				t.Errorf("%s (%+v): got %s, want %s", expr, lim, text, want)
			}
		}
	}
	const huge = `{t: 1, t: 2}`
	_, _, err := Eval(context.Background(), `{t: 1, t: 2}`, map[string]any{"t": strings.Repeat("a", 4*maxKeyText)}, Limits{})
	if err == nil || !strings.Contains(err.Error(), "more than 1024 bytes") || len(err.Error()) > 2*maxKeyText {
		t.Errorf("%s: err = %.200v, want the key's beginning and its size", huge, err)
	}
}

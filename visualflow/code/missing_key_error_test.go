package code

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// Promise: docs/visualflow.md ("Code nodes"): an operation "fails with
// the limit error instead of exhausting the process"; the sandbox's
// guards run before go.starlark.net allocates (sandbox.go guardCode).
// Starlark's getIndex writes a missing key whole into "key %v not in
// dict": for a tuple sharing one 1 MiB string that is one string far
// larger than the tuple, built in one Go call. The key is now looked up
// by the sandbox (index.go), which quotes only the beginning of a long
// key; a short key keeps Starlark's exact text.

func TestMissingKeyOfHugeTextIsNotWrittenWhole(t *testing.T) {
	// 512 references to a 1 MiB string: a 512 MiB text (built by a
	// comprehension: a repeat this large is refused itself).
	const src = "def f(_input):\n    s = \"a\" * (1 << 20)\n    t = tuple([s for _ in range(512)])\n    return {}[t]\n"
	var err error
	alloc := totalAllocDuring(func() {
		_, _, err = Run(context.Background(), src, "f", map[string]any{}, Limits{Timeout: 10 * time.Second})
	})
	if err == nil || !strings.Contains(err.Error(), "not in dict") {
		t.Fatalf("err = %v, want the missing key error", err)
	}
	if msg := err.Error(); len(msg) > 2*maxKeyText || !strings.HasPrefix(msg, runtimeError+`key ("aaa`) || !strings.Contains(msg, "more than 1024 bytes") {
		t.Errorf("err = %.200q... (%d bytes); want the key's beginning and its size, under %d bytes", msg, len(msg), 2*maxKeyText)
	}
	if alloc > 64<<20 {
		t.Errorf("the process allocated %d MiB: the key's text was written", alloc>>20)
	}
}

func TestMissingKeyOfHugeTextDoesNotKillTheProcess(t *testing.T) {
	// A tuple of 8192 shared 1 MiB strings, missing from an empty dict.
	hugeKeyInChild(t, "MISSING_KEY_CHILD", "{}[t]", "missing key error of a huge key")
}

// hugeKeyInChild runs, in a child process capped at 6 GiB of address
// space under the default limits, code whose result is use (an expression
// of t), t being a tuple whose text is 8 GiB: 8,192 references to one
// 1 MiB string. (Built by a comprehension: the repeat (s,) * 8192 is
// refused itself, before the key is met.) The child must end with the
// code's error, neither killed at its cap nor hung. Hashing the key reads
// its 8 GiB before the error is made: ~1-2 s on an idle machine, longer
// under a loaded CI, in a Go loop the timeout cannot stop (documented).
// The child gets 20 s: a child that writes the key's text dies at its cap
// at once, whatever the wait.
func hugeKeyInChild(t *testing.T, env, use, what string) {
	t.Helper()
	src := "def f(_input):\n    s = \"a\" * (1 << 20)\n    t = tuple([s for _ in range(1 << 13)])\n    return " + use + "\n"
	errText, died, hung, out, child := codeInTimedChild(t, env, 6<<30, src, Limits{Timeout: time.Second}, 20*time.Second)
	if child {
		return
	}
	if died || hung {
		wantChildLimitError(t, what, errText, died, hung, out)
	}
}

// Starlark's own texts and semantics stay for the indexes the guard sees.
func TestIndexGuardKeepsStarlarkBehaviour(t *testing.T) {
	for body, want := range map[string]string{
		`return {}["a"]`:                          `key "a" not in dict`,
		`return {}[(1, "b")]`:                     `key (1, "b") not in dict`,
		`return {"a": 1}[[1]]`:                    `unhashable type: list`,
		`return [1][5]`:                           `list index 5 out of range [-1:0]`,
		"d = {}\n    d[\"x\"] += 1\n    return d": `key "x" not in dict`,
	} {
		_, _, err := Run(context.Background(), "def f(_input):\n    "+body+"\n", "f", map[string]any{}, Limits{})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", body, err, want)
		}
	}
	const src = "def f(_input):\n    d = {\"a\": 1, (1, 2): 2}\n    d[\"a\"] += 10\n    d[\"b\"] = d[(1, 2)]\n    l = [0, 1]\n    l[1] += 5\n    s = \"xy\"\n    return [d, l, s[1], {\"k\": [7]}[\"k\"][0]]\n"
	got, _, err := Run(context.Background(), src, "f", map[string]any{}, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if want := `[map[(1, 2):2 a:11 b:2] [0 6] y 7]`; fmt.Sprint(got) != want {
		t.Errorf("got %v, want %s", got, want)
	}
}

// Promise: the sandbox returns an error of user code as its message, cut
// to maxMessage bytes with its size (sandbox.go capMessage): such a
// message is stored with the run.
func TestLongErrorMessageIsCut(t *testing.T) {
	const src = "def f(_input):\n    fail(\"x\" * 100000)\n"
	_, _, err := Run(context.Background(), src, "f", map[string]any{}, Limits{})
	if err == nil || errors.Is(err, ErrLimit) {
		t.Fatalf("err = %v, want fail's error", err)
	}
	if msg := err.Error(); len(msg) > maxMessage+64 || !strings.HasSuffix(msg, "… (100006 bytes)") || !strings.HasPrefix(msg, runtimeError+"fail: xxx") {
		t.Errorf("err = %.100q... (%d bytes); want it cut to %d bytes with its size", msg, len(msg), maxMessage)
	}
}

// Promise (docs/visualflow.md): error messages are cut to 4 KiB. A
// message of exactly 4,096 bytes is kept whole; a longer one keeps its
// first 4,096 bytes, or fewer so as not to split a rune (the message
// stays valid UTF-8), followed by its length.
func TestCapMessageCutsAt4KiBOnARuneStart(t *testing.T) {
	t.Parallel()
	x4096 := strings.Repeat("x", 4096)
	// "é" is two bytes: after one "x", byte 4,096 is the second byte of
	// an "é", so the cut moves back to 4,095.
	accents := "x" + strings.Repeat("é", 2100)
	for _, tc := range []struct{ name, in, want string }{
		{"exactly 4 KiB", x4096, x4096},
		{"one byte more", x4096 + "y", x4096 + "… (4097 bytes)"},
		{"cut inside a rune", accents, accents[:4095] + "… (4201 bytes)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := capMessage(tc.in)
			if got != tc.want {
				t.Errorf("capMessage(%d bytes) = %.40q... (%d bytes); want %.40q... (%d bytes)", len(tc.in), got, len(got), tc.want, len(tc.want))
			}
			if !utf8.ValidString(got) {
				t.Errorf("capMessage(%d bytes) is not valid UTF-8: a rune was split", len(tc.in))
			}
		})
	}
}

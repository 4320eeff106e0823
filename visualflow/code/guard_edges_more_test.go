package code

import (
	"strings"
	"testing"
	"time"

	"go.starlark.net/starlark"
)

// s.split("") fails with the empty-separator error (python3: ValueError
// "empty separator") also for a string long enough that a split into
// len(s) + 2 pieces would pass the memory limit: the pieces are counted
// only for a separator that splits.
func TestSplitOnEmptySeparatorIsNotCountedAsPieces(t *testing.T) {
	src := "def f(_input):\n    s = \"a\" * 30000\n    return s.split(\"\")\n"
	_, _, err := Run(t.Context(), src, "f", map[string]any{}, Limits{MaxMemory: 1 << 20, Timeout: 10 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "empty separator") {
		t.Fatalf("err = %v, want the empty separator error (python3: ValueError)", err)
	}
}

// str() and repr() may build a text of exactly the memory limit; one byte
// more is refused: repr("abc") is 5 bytes under a 5-byte limit.
func TestReprOfExactlyTheLimitIsAllowed(t *testing.T) {
	th := &starlark.Thread{}
	th.SetLocal(guardKey, &guard{maxItems: 1, maxBytes: 5})
	if s, err := pyRepr(th, starlark.String("abc")); err != nil || s != "'abc'" {
		t.Fatalf("repr(\"abc\") under a 5-byte limit = %q, %v; want 'abc'", s, err)
	}
	if s, err := pyRepr(th, starlark.String("abcd")); err == nil {
		t.Fatalf("repr(\"abcd\") under a 5-byte limit = %q, want the limit error", s)
	}
}

// bytes() of an iterable is bounded by the memory limit in bytes (one a
// byte), not in values: bytes(range(100)) under a 160-byte limit (10
// values) is allowed (python3: b'\x00\x01...'), bytes(range(161)) is not.
func TestBytesOfIterableIsBoundedInBytes(t *testing.T) {
	th := &starlark.Thread{}
	th.SetLocal(guardKey, &guard{maxItems: 10, maxBytes: 160})
	for _, tc := range []struct {
		n       int
		refused bool
	}{{100, false}, {161, true}} {
		r, err := starlark.Call(th, starlark.Universe["range"], starlark.Tuple{starlark.MakeInt(tc.n)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := builtinBytes(th, nil, starlark.Tuple{r}, nil)
		if (err != nil) != tc.refused {
			t.Errorf("bytes(range(%d)) under a 160-byte limit = %v, %v; want refused %v", tc.n, b, err, tc.refused)
		}
	}
}

// dict.get of a tuple sharing its sub-tuples forty levels deep (2^40
// hash calls in one Go call) stops at the timeout: the key is walked
// with the watchdog first, as d[t] is.
func TestDictGetOfSharedTupleKeyHonoursTimeout(t *testing.T) {
	src := "def f(_input):\n" +
		"    t = (1,)\n" +
		"    for i in range(40):\n" +
		"        t = (t, t)\n" +
		"    d = {1: 1}\n" +
		"    return d.get(t)\n"
	wantLimitErrorInChild(t, "CODE_SHARED_GET_CHILD", 0, src, Limits{Timeout: time.Second}, 15*time.Second, "dict.get of a tuple sharing its sub-tuples 40 levels deep")
}

// A dict literal whose computed key is such a tuple stops at the timeout
// too: the literal's entries are added by the sandbox (dictlit.go), which
// walks the key first.
func TestDictLiteralOfSharedTupleKeyHonoursTimeout(t *testing.T) {
	src := "def f(_input):\n" +
		"    t = (1,)\n" +
		"    for i in range(40):\n" +
		"        t = (t, t)\n" +
		"    return len({t: 1})\n"
	wantLimitErrorInChild(t, "CODE_SHARED_LITERAL_CHILD", 0, src, Limits{Timeout: time.Second}, 15*time.Second, "dict literal keyed by a tuple sharing its sub-tuples 40 levels deep")
}

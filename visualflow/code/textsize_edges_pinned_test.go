package code

import (
	"math/big"
	"strings"
	"testing"

	"go.starlark.net/starlark"
)

// A text of exactly the limit is within it: a count that reaches
// maxBytes is not over it (overAt) and not refused; one byte more is.
func TestTextSizeOfExactlyTheLimitIsNotOver(t *testing.T) {
	z := newTextSize(&starlark.Thread{}, &guard{maxBytes: 5})
	z.value(starlark.String("abc")) // "abc": 5 bytes
	if z.n != 5 || z.overAt >= 0 || z.refusal("x") != nil {
		t.Fatalf("5 bytes under a 5-byte limit: n %d, overAt %d, refusal %v; want within", z.n, z.overAt, z.refusal("x"))
	}
	z.add(1)
	if z.overAt < 0 || z.refusal("x") == nil {
		t.Fatalf("6 bytes under a 5-byte limit: overAt %d, refusal nil; want over", z.overAt)
	}
}

// A missing key whose text is exactly maxKeyText bytes is quoted whole,
// in Starlark's own error: only a longer one is cut.
func TestMissingKeyOfExactlyMaxKeyTextIsQuotedWhole(t *testing.T) {
	k := strings.Repeat("a", maxKeyText-2) // quoted: maxKeyText bytes
	_, _, err := Eval(t.Context(), "{}[k]", map[string]any{"k": k}, Limits{})
	if err == nil || !strings.Contains(err.Error(), `key "`+k+`" not in dict`) {
		t.Fatalf("err = %.100v…, want Starlark's error quoting the key whole", err)
	}
}

// The lower bound of Python's repr that str() and repr() check against
// the limit (python mode) counts a string's quotes: ['ab', None, True,
// 1.5, b'x'] counts 29 bytes, python3's len(repr(...)) (a float counts 3,
// the shortest of its texts).
func TestPythonTextSizeCountsQuotes(t *testing.T) {
	v := starlark.NewList([]starlark.Value{starlark.String("ab"), starlark.None, starlark.True, starlark.Float(1.5), starlark.Bytes("x")})
	z := newTextSize(&starlark.Thread{}, &guard{maxBytes: 1 << 20})
	z.python = true
	z.value(v)
	if z.n != 29 {
		t.Fatalf("counted %d, want 29", z.n)
	}
}

// intTextLen of an int past int64 is an upper bound of its decimal text,
// sign included: writePrefix and the text sizes rely on it to name an
// int too long to write.
func TestIntTextLenBoundsBigInts(t *testing.T) {
	for _, s := range []string{"1" + strings.Repeat("0", 30), "-" + "1" + strings.Repeat("0", 30), strings.Repeat("9", 40), "-" + strings.Repeat("9", 100), "9223372036854775808"} {
		z, _ := new(big.Int).SetString(s, 10)
		if n := intTextLen(starlark.MakeBigInt(z), 10); n < int64(len(s)) {
			t.Errorf("intTextLen(%s) = %d, less than its %d bytes", s, n, len(s))
		}
	}
}

package builtin

import (
	"encoding/json"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/internal/pyval"
)

// The reference's math_random_int (visual/builtins.py) computes each bound
// as int(float(raw)): an int bound is first rounded to a float64, and a
// float or numeric string past int64 stays an exact (big) int rather than
// falling back to the defaults 0 / 100.
func TestRandomIntBoundsGoThroughFloat(t *testing.T) {
	t.Parallel()
	runNodeCases(t, []nodeCase{
		{name: "2^53+1 rounds to 2^53", typ: "random_int",
			in: obj{"min": json.Number("9007199254740993"), "max": json.Number("9007199254740993")}, want: int64(9007199254740992)},
		{name: "-(2^53+1) rounds", typ: "random_int",
			in: obj{"min": json.Number("-9007199254740993"), "max": json.Number("-9007199254740993")}, want: int64(-9007199254740992)},
		{name: "2^62+1 rounds to 2^62", typ: "random_int",
			in: obj{"min": int64(4611686018427387905), "max": int64(4611686018427387905)}, want: int64(4611686018427387904)},
		{name: "10**400 falls back to 0", typ: "random_int",
			in:   obj{"min": json.Number("1" + strings.Repeat("0", 400)), "max": int64(0)},
			want: int64(0)},
	})
	fn, _ := Lookup("random_int")
	for _, bound := range []any{1e20, "1e20", json.Number("100000000000000000000")} {
		got, err := fn(&Env{}, map[string]any{"min": bound, "max": bound})
		if err != nil {
			t.Fatalf("random_int(min=max=%v): %v", bound, err)
		}
		if !pyval.Equal(got, json.Number("100000000000000000000")) {
			t.Errorf("random_int(min=max=%v) = %v, want 100000000000000000000 (Python int(float(x)))", bound, pyval.Repr(got))
		}
	}
}

// A range wider than int64 (random.randint(-1e20, 1e20) in Python) draws
// with math/big: every result is an int within the bounds, int64 when it
// fits and a json.Number past it.
func TestRandomIntRangeBeyondInt64StaysInBounds(t *testing.T) {
	t.Parallel()
	fn, _ := Lookup("random_int")
	env := &Env{Rand: rand.New(rand.NewPCG(5, 6))}
	lo, _ := new(big.Int).SetString("-100000000000000000000", 10)
	hi, _ := new(big.Int).SetString("100000000000000000000", 10)
	sawBig := false
	for range 200 {
		got, err := fn(env, obj{"min": 1e20, "max": -1e20})
		if err != nil {
			t.Fatal(err)
		}
		var b *big.Int
		switch x := got.(type) {
		case int64:
			b = big.NewInt(x)
		case json.Number:
			b, _ = new(big.Int).SetString(string(x), 10)
			sawBig = sawBig || b != nil && !b.IsInt64()
		}
		if b == nil || b.Cmp(lo) < 0 || b.Cmp(hi) > 0 {
			t.Fatalf("random_int(1e20, -1e20) = %#v, want an int in [-1e20, 1e20]", got)
		}
	}
	if !sawBig {
		t.Error("200 draws in [-1e20, 1e20] never left int64: the draw is not uniform over the range")
	}
	// int64 bounds whose span overflows int64 also use the exact draw.
	for range 50 {
		got, err := fn(env, obj{"min": int64(-1 << 62), "max": 1e19})
		if err != nil {
			t.Fatal(err)
		}
		if c, ok := pyval.Compare(got, int64(-1<<62)); !ok || c < 0 {
			t.Fatalf("random_int(-2**62, 1e19) = %#v, below min", got)
		}
		if c, ok := pyval.Compare(got, json.Number("10000000000000000000")); !ok || c > 0 {
			t.Fatalf("random_int(-2**62, 1e19) = %#v, above max", got)
		}
	}
}

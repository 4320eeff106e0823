package builtin

import (
	"math/rand/v2"
	"testing"
)

// Spec §6.4 random_float: reversed bounds are put in order before the
// draw, as the reference's math_random_float does, so the result is
// min + (max-min)*U with min the smaller bound. A draw checked only for
// its range cannot tell that from max + (min-max)*U, which lies in the
// same interval: the value for a known U can.
func TestRandomFloatReversedBoundsDrawFromSmaller(t *testing.T) {
	fn, _ := Lookup("random_float")
	for _, seed := range []uint64{1, 2, 3, 4, 5} {
		env := &Env{Rand: rand.New(rand.NewPCG(seed, seed+1))}
		u := rand.New(rand.NewPCG(seed, seed+1)).Float64()
		got, err := fn(env, obj{"min": int64(5), "max": int64(3)})
		if err != nil {
			t.Fatal(err)
		}
		if want := 3 + (5-3)*u; got != want {
			t.Fatalf("seed %d: random_float(min=5, max=3) = %v, want 3 + 2*U = %v (U=%v)", seed, got, want, u)
		}
	}
}

package pyval

import (
	"math"
	"testing"
)

// A Go uint64 past int64 (a count or size a handler returns) is a Python
// int. FormatValue wrote its digits, but the rest of the package read it
// as the float64 it rounds to: two different ints compared equal, and
// str()/repr()/json.dumps() printed 1.8446744073709552e+19 where Python
// prints 18446744073709551615.
func TestUint64PastInt64IsAnExactInt(t *testing.T) {
	t.Parallel()
	max := uint64(math.MaxUint64)
	if Equal(max, max-1) {
		t.Errorf("Equal(2**64-1, 2**64-2) = true; Python: False")
	}
	if Equal(max, float64(1<<64)) {
		t.Errorf("Equal(2**64-1, 2.0**64) = true; Python: False")
	}
	if c, ok := Compare(max-1, max); !ok || c != -1 {
		t.Errorf("Compare(2**64-2, 2**64-1) = %d, %v; want -1", c, ok)
	}
	for name, got := range map[string]string{"Repr": Repr(max), "Str": Str(max), "Repr(list)": Repr([]any{max})} {
		want := "18446744073709551615"
		if name == "Repr(list)" {
			want = "[18446744073709551615]"
		}
		if got != want {
			t.Errorf("%s = %s; Python: %s", name, got, want)
		}
	}
	if got, err := Dumps(map[string]any{"n": uint(1 << 63)}, Compact); err != nil || got != `{"n":9223372036854775808}` {
		t.Errorf("Dumps = %s, %v", got, err)
	}
	if got := TypeName(max); got != "int" {
		t.Errorf("TypeName = %s; Python: int", got)
	}
}

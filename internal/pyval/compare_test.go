package pyval

import (
	"math"
	"testing"
)

// Expected values are what CPython 3.11 returns.

// Guards dict equality: a dict is not equal to a larger dict that contains
// all its items ({'a': 1} != {'a': 1, 'b': 2}).
func TestEqualDictsNeedSameKeys(t *testing.T) {
	t.Parallel()
	small := map[string]any{"a": int64(1)}
	big := map[string]any{"a": int64(1), "b": int64(2)}
	if Equal(small, big) || Equal(big, small) {
		t.Error("dicts with different key sets compare equal")
	}
	if !Equal(small, map[string]any{"a": 1.0}) {
		t.Error("{'a': 1} != {'a': 1.0}")
	}
}

// Guards the Go integer kinds the package promises to accept: a uint64
// past MaxInt64 is a large positive number, not a wrapped negative one.
func TestLargeUint64ComparesAsPositive(t *testing.T) {
	t.Parallel()
	u := uint64(1) << 63
	if c, ok := Compare(u, int64(math.MaxInt64)); !ok || c != 1 {
		t.Errorf("Compare(2**63, 2**63-1) = %d, %v; want 1", c, ok)
	}
	if c, ok := Compare(uint(math.MaxUint), int64(0)); !ok || c != 1 {
		t.Errorf("Compare(uint max, 0) = %d, %v; want 1", c, ok)
	}
	if !Truthy(u) || !IsNumber(u) {
		t.Error("2**63 as uint64 is not a truthy number")
	}
}

package lru

import "testing"

// TestCostAtTheLimitEvictsNothing: entries whose total cost equals the
// limit all stay; only a total past the limit evicts.
func TestCostAtTheLimitEvictsNothing(t *testing.T) {
	t.Parallel()
	c := New[int](10)
	c.Put("a", 1, 5)
	c.Put("b", 2, 5)
	if n, cost := c.Size(); n != 2 || cost != 10 {
		t.Errorf("Size() = %d, %d; want 2 entries of cost 10 (the limit is not passed)", n, cost)
	}
}

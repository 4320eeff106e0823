package lru

import "testing"

// TestPutOfExistingKeyMakesItRecent guards "never the one just put": a
// put that replaces a key's value makes it the most recently used, so
// when its new cost passes the limit the older entries go, not it.
func TestPutOfExistingKeyMakesItRecent(t *testing.T) {
	t.Parallel()
	c := New[int](10)
	c.Put("a", 1, 4)
	c.Put("b", 2, 4) // a is now the least recently used
	c.Put("a", 3, 7) // 11 > 10: b goes, not the a just put
	if v, ok := c.Get("a"); !ok || v != 3 {
		t.Errorf("a = %d, %v after its put; want 3, kept", v, ok)
	}
	if _, ok := c.Get("b"); ok {
		t.Error("b kept; want it evicted as the least recently used")
	}
	if n, cost := c.Size(); n != 1 || cost != 7 {
		t.Errorf("size = %d entries, cost %d; want 1, 7", n, cost)
	}
}

package lru

import "testing"

// TestLRU: the least recently used entry goes first once the total cost
// passes the limit, a get makes an entry recent, a put replaces the cost
// of the key it reuses, and the entry just put stays even when it alone
// is over the limit.
func TestLRU(t *testing.T) {
	t.Parallel()
	c := New[int](10)
	c.Put("a", 1, 4)
	c.Put("b", 2, 4)
	if _, ok := c.Get("a"); !ok { // a is now the most recently used
		t.Fatal("a missing")
	}
	c.Put("c", 3, 4) // 12 > 10: b goes
	if _, ok := c.Get("b"); ok {
		t.Error("b kept; want it evicted as the least recently used")
	}
	if n, cost := c.Size(); n != 2 || cost != 8 {
		t.Errorf("size = %d entries, cost %d; want 2, 8", n, cost)
	}
	c.Put("a", 10, 1) // replaces a's cost
	if v, _ := c.Get("a"); v != 10 {
		t.Errorf("a = %d, want 10", v)
	}
	if _, cost := c.Size(); cost != 5 {
		t.Errorf("cost after replacing a = %d, want 5", cost)
	}
	c.Put("big", 4, 50)
	if n, _ := c.Size(); n != 1 {
		t.Errorf("%d entries after an entry over the limit; want only it", n)
	}
	if _, ok := c.Get("big"); !ok {
		t.Error("the entry just put was evicted")
	}
	c.Remove("big")
	if n, cost := c.Size(); n != 0 || cost != 0 {
		t.Errorf("after remove: %d entries, cost %d", n, cost)
	}
}

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

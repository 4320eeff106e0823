package jsonfile

import (
	"container/list"
	"sync"
)

// lru is a map bounded by the total cost of its entries: once the total
// passes the limit, the least recently used entries go (never the one
// just put). It has its own lock, so callers need not hold Store.mu.
type lru[V any] struct {
	mu    sync.Mutex
	limit int64
	cost  int64
	items map[string]*list.Element // values are *lruItem[V]
	order list.List                // front: most recently used
}

type lruItem[V any] struct {
	key  string
	val  V
	cost int64
}

func newLRU[V any](limit int64) *lru[V] {
	return &lru[V]{limit: limit, items: map[string]*list.Element{}}
}

// get returns the value of key and makes it the most recently used.
func (c *lru[V]) get(key string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[key]
	if !ok {
		var zero V
		return zero, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*lruItem[V]).val, true
}

// put sets key's value and cost (replacing any) and evicts what no
// longer fits.
func (c *lru[V]) put(key string, val V, cost int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[key]; ok {
		it := e.Value.(*lruItem[V])
		c.cost += cost - it.cost
		it.val, it.cost = val, cost
		c.order.MoveToFront(e)
	} else {
		c.items[key] = c.order.PushFront(&lruItem[V]{key: key, val: val, cost: cost})
		c.cost += cost
	}
	for c.cost > c.limit && c.order.Len() > 1 {
		c.removeLocked(c.order.Back())
	}
}

// remove drops key.
func (c *lru[V]) remove(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[key]; ok {
		c.removeLocked(e)
	}
}

func (c *lru[V]) removeLocked(e *list.Element) {
	it := c.order.Remove(e).(*lruItem[V])
	delete(c.items, it.key)
	c.cost -= it.cost
}

// size returns the number of entries and their total cost.
func (c *lru[V]) size() (n int, cost int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.items), c.cost
}

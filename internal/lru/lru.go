// Package lru is a map bounded by the total cost of its entries, for the
// caches a long-running process keeps per run: once the total passes the
// limit, the least recently used entries go.
package lru

import (
	"container/list"
	"sync"
)

// Cache is a map bounded by the total cost of its entries: once the total
// passes the limit, the least recently used entries go (never the one
// just put). It is safe for concurrent use.
type Cache[V any] struct {
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

// New returns an empty cache whose entries may cost limit in total.
func New[V any](limit int64) *Cache[V] {
	return &Cache[V]{limit: limit, items: map[string]*list.Element{}}
}

// Get returns the value of key and makes it the most recently used.
func (c *Cache[V]) Get(key string) (V, bool) {
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

// Put sets key's value and cost (replacing any) and evicts what no
// longer fits.
func (c *Cache[V]) Put(key string, val V, cost int64) {
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

// Remove drops key.
func (c *Cache[V]) Remove(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[key]; ok {
		c.removeLocked(e)
	}
}

func (c *Cache[V]) removeLocked(e *list.Element) {
	it := c.order.Remove(e).(*lruItem[V])
	delete(c.items, it.key)
	c.cost -= it.cost
}

// Size returns the number of entries and their total cost.
func (c *Cache[V]) Size() (n int, cost int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.items), c.cost
}

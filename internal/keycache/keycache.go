// Package keycache is a small bounded map from a key to what a service
// last read for it (a table's uid, a queue's id), used only to predict
// which records a transaction will need: every user still reads the
// authoritative record in its transaction and checks the prediction. It
// is a leaf: it imports nothing from lazuli.
package keycache

import "sync"

// Max bounds a Cache; a full cache is emptied before the next Put.
const Max = 4096

// Cache is safe for concurrent use; its zero value is empty.
type Cache[V any] struct {
	mu sync.Mutex
	m  map[string]V
}

// Get returns the value last put at k.
func (c *Cache[V]) Get(k string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[k]
	return v, ok
}

// Put remembers v at k. The caller must not change v afterwards.
func (c *Cache[V]) Put(k string, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= Max {
		c.m = map[string]V{}
	}
	c.m[k] = v
}

// Drop forgets k.
func (c *Cache[V]) Drop(k string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, k)
}

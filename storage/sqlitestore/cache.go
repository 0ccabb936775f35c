package sqlitestore

// writeCache holds recently read and written values for the writer's
// transactions. The writer connection is the only one that ever changes
// the database, so what it last read or wrote for a key stays true until
// it writes that key again: an Update can take a value from here instead
// of asking SQLite, which is most of the cost of the lookups every write
// starts with (the container, table or queue record, the blob or entity
// being replaced, a lease being renewed).
//
// Entries follow the writer connection's open transaction, including the
// writes of earlier Updates in the same group commit. Whenever SQLite may
// have undone writes the cache saw (a ROLLBACK, a ROLLBACK TO, a failed
// COMMIT or any SQLite error) the whole cache is dropped.
//
// Only the writer goroutine touches it, so it needs no lock. Views never
// use it: they read their own snapshots.
type writeCache struct {
	m     map[string]cacheEntry
	bytes int
}

// cacheEntry is a value, or the knowledge that the key is absent.
type cacheEntry struct {
	v      []byte
	absent bool
}

// Bounds of the writer cache: values larger than cacheMaxValue are not
// kept, and the cache is emptied when it passes either limit (cheaper than
// tracking recency, and rare: it takes thousands of distinct keys).
const (
	cacheMaxEntries = 32 << 10
	cacheMaxBytes   = 32 << 20
	cacheMaxValue   = 64 << 10
)

func newWriteCache() *writeCache {
	return &writeCache{m: make(map[string]cacheEntry, 1024)}
}

// get returns the cached state of key: ok is false when the cache knows
// nothing about it.
func (c *writeCache) get(key []byte) (e cacheEntry, ok bool) {
	e, ok = c.m[string(key)]
	return e, ok
}

// put records the value key has now. v must never be modified afterwards.
func (c *writeCache) put(key, v []byte) {
	if len(v) > cacheMaxValue {
		c.forget(key)
		return
	}
	c.store(key, cacheEntry{v: v})
}

// record notes the effect of a write: the value it stores (a private
// copy, since the cache outlives the writer's promise not to touch the
// slice), or that the key is now absent.
func (c *writeCache) record(w pendingWrite) {
	switch {
	case w.del:
		c.putAbsent(w.key)
	case len(w.value) <= cacheMaxValue:
		c.put(w.key, append(make([]byte, 0, len(w.value)), w.value...))
	default:
		c.forget(w.key)
	}
}

// putAbsent records that key holds nothing.
func (c *writeCache) putAbsent(key []byte) { c.store(key, cacheEntry{absent: true}) }

func (c *writeCache) store(key []byte, e cacheEntry) {
	if old, ok := c.m[string(key)]; ok {
		c.bytes -= len(key) + len(old.v)
	} else if len(c.m) >= cacheMaxEntries || c.bytes >= cacheMaxBytes {
		c.reset()
	}
	c.m[string(key)] = e
	c.bytes += len(key) + len(e.v)
}

// forget drops what the cache knows of key.
func (c *writeCache) forget(key []byte) {
	if old, ok := c.m[string(key)]; ok {
		c.bytes -= len(key) + len(old.v)
		delete(c.m, string(key))
	}
}

// reset drops everything.
func (c *writeCache) reset() {
	clear(c.m)
	c.bytes = 0
}

package pgstore

import "sync"

// hints remembers what this instance's recent transactions found at keys
// or left there, so that an Update may read a key from here instead of the
// database and check, with its writes and COMMIT in the same round trip,
// that the key still holds that value (see tx.assume and sqlCheck). An
// Update whose reads all come from here costs one round trip instead of
// two; its outcome is that of one that read the database, since the check
// runs inside its SERIALIZABLE transaction before its writes and fails the
// transaction (which then runs again reading the database) on any
// difference. A hint is never trusted without that check, so a stale one
// (another instance wrote the key) costs a round trip, never consistency.
//
// A key hints know nothing of is taken as absent: the new blob, entity or
// message a request creates. When such guesses and stale hints fail more
// than a quarter of the checks, Updates mostly read the database again
// (see allow).
//
// Measured with lazuli-bench on one instance, 16 clients: Put Blob with
// If-Match and Lease Blob cost the instance and PostgreSQL one round trip
// per Update instead of two (see the commit that introduced them).
type hints struct {
	mu    sync.Mutex
	m     map[string]hint
	bytes int
	// tries and misses count the checks of hinted reads and those that
	// failed, halved now and then so that they follow the recent past;
	// skipped counts the Updates allow turned away since.
	tries, misses, skipped int
}

// hint is what the instance last knew of a key.
type hint struct {
	v []byte // the value; nil when absent
	// big: the key holds a value larger than maxHintValue, not kept.
	big bool
}

// Bounds of the hints: values larger than maxHintValue are not kept
// (reading such a key goes to the database), and past hintBytes of keys
// and values, a quarter of the entries, picked at random, are dropped.
const (
	maxHintValue = 8 << 10
	hintBytes    = 8 << 20
)

// allow reports whether an Update attempt may read from the hints: while
// at most a quarter of the recent checks failed, and otherwise one attempt
// in 32, to find out when they succeed again.
func (h *hints) allow() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.misses*4 <= h.tries+16 {
		return true
	}
	h.skipped++
	return h.skipped%32 == 0
}

// note records the outcome of one check of hinted reads.
func (h *hints) note(miss bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.tries++
	if miss {
		h.misses++
	}
	if h.tries >= 1024 {
		h.tries, h.misses = h.tries/2, h.misses/2
	}
}

// get returns the hint of key (the zero hint, absent, when none); ok is
// false when the value is too large to be kept.
func (h *hints) get(key string) (v []byte, ok bool) {
	h.mu.Lock()
	e := h.m[key]
	h.mu.Unlock()
	return e.v, !e.big
}

// put records that key holds v (nil: absent). v is copied.
func (h *hints) put(key string, v []byte) {
	e := hint{big: len(v) > maxHintValue}
	if v != nil && !e.big {
		e.v = append(make([]byte, 0, len(v)), v...)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil {
		h.m = map[string]hint{}
	}
	if old, ok := h.m[key]; ok {
		h.bytes -= len(key) + len(old.v)
	}
	h.m[key] = e
	h.bytes += len(key) + len(e.v)
	if h.bytes > hintBytes {
		// Map iteration starts at a random entry, and goes on in
		// hash order: what is dropped is a random pick.
		for k, old := range h.m {
			if h.bytes <= hintBytes*3/4 {
				break
			}
			delete(h.m, k)
			h.bytes -= len(k) + len(old.v)
		}
	}
}

// drop forgets keys.
func (h *hints) drop(keys []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, k := range keys {
		if old, ok := h.m[k]; ok {
			delete(h.m, k)
			h.bytes -= len(k) + len(old.v)
		}
	}
}

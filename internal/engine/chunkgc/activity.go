package chunkgc

import "sync"

// Activity counts the requests in flight, so that the collector knows when
// every request that could still hold a chunk's reference has ended. The
// server calls Begin when a request starts and End with its result when
// the request has ended (its response written, its body read or
// abandoned). The zero value is ready to use.
type Activity struct {
	mu     sync.Mutex
	gen    uint64         // the current generation; checkpoint starts a new one
	active map[uint64]int // generation -> requests begun in it and not ended
	begun  uint64         // requests begun, ever
}

// Begin records a request starting; pass its result to End.
func (a *Activity) Begin() uint64 {
	a.mu.Lock()
	if a.active == nil {
		a.active = map[uint64]int{}
	}
	g := a.gen
	a.active[g]++
	a.begun++
	a.mu.Unlock()
	return g
}

// End records the end of the request whose Begin returned g.
func (a *Activity) End(g uint64) {
	a.mu.Lock()
	if a.active[g]--; a.active[g] <= 0 {
		delete(a.active, g)
	}
	a.mu.Unlock()
}

// checkpoint starts a new generation and returns the one before it: every
// request begun so far belongs to it or an older one.
func (a *Activity) checkpoint() uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.gen++
	return a.gen - 1
}

// endedBy reports whether every request of generation g or older has ended.
func (a *Activity) endedBy(g uint64) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	for old := range a.active {
		if old <= g {
			return false
		}
	}
	return true
}

// ops is the number of requests begun so far.
func (a *Activity) ops() uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.begun
}

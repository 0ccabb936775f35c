// Package worker runs a service's background work (purging deleted
// queues and tables, reaping expired messages) as a loop that its owner,
// the server, starts with Run and stops by cancelling Run's context. The
// service asks for a pass with Kick; tests wait for the passes they asked
// for with Wait. It is a leaf: it imports nothing from lazuli.
package worker

import (
	"context"
	"sync"
)

// Loop runs passes of background work on request. The zero value is ready
// to use; a Loop must not be copied after first use.
type Loop struct {
	mu     sync.Mutex
	wake   chan struct{} // holds a token while a pass is asked for
	passed chan struct{} // closed when a pass ends, then replaced
	asked  uint64        // passes asked for (Kick calls, plus the first)
	done   uint64        // value of asked when the last finished pass began
}

func (l *Loop) init() {
	if l.wake == nil {
		l.wake = make(chan struct{}, 1)
		l.passed = make(chan struct{})
		l.asked = 1 // the first pass, which finds work left by an earlier process
	}
}

// Kick asks for a pass; a pass already running when Kick is called does
// not count, so the work Kick announces is always seen by a later pass.
func (l *Loop) Kick() {
	l.mu.Lock()
	l.init()
	l.asked++
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default: // a pass is asked for already
	}
}

// Run calls pass once at once and then once per batch of Kicks, until ctx
// ends; it returns ctx's error. pass gets ctx and should stop early when
// it ends. A failed pass (the engine closed, say) simply ends; the next
// Kick tries again.
func (l *Loop) Run(ctx context.Context, pass func(context.Context)) error {
	l.mu.Lock()
	l.init()
	l.mu.Unlock()
	for {
		l.mu.Lock()
		gen := l.asked
		l.mu.Unlock()
		pass(ctx)
		l.mu.Lock()
		l.done = gen
		close(l.passed)
		l.passed = make(chan struct{})
		l.mu.Unlock()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-l.wake:
		}
	}
}

// Wait blocks until every pass asked for before the call has finished, or
// ctx ends. Without a running Run it waits for ctx.
func (l *Loop) Wait(ctx context.Context) error {
	l.mu.Lock()
	l.init()
	target := l.asked
	l.mu.Unlock()
	for {
		l.mu.Lock()
		finished, ch := l.done >= target, l.passed
		l.mu.Unlock()
		if finished {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

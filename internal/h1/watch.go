package h1

import (
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// A request's context is cancelled when its client goes away. While the
// handler reads the body, a failed read tells (connReader cancels). Once
// the body is read, or when there is none, nothing reads the connection
// while the handler runs; so a handler still running after watchDelay gets
// a watcher that reads one byte from the connection: the end of the
// connection cancels the context, and a byte of a pipelined request is
// kept for the next request. Quick requests never start one.
const watchDelay = 100 * time.Millisecond

// watch is the watcher state of a connection.
type watch struct {
	mu       sync.Mutex
	running  bool          // a handler is running
	done     chan struct{} // a watcher is reading; closed when it stops
	timer    *time.Timer
	bodyDone atomic.Bool // the request has no body, or it has been read
	// Set by the watcher, read by the connection once done is closed.
	err    error
	peeked bool // peek holds a byte the watcher read
	peek   [1]byte
}

// startWatch arms the watcher for the request ex, whose handler is about
// to run.
func (c *conn) startWatch(ex *exchange) {
	w := &c.watch
	w.bodyDone.Store(ex.body == nil || ex.body.sawEOF)
	w.mu.Lock()
	w.running = true
	w.mu.Unlock()
	if w.timer == nil {
		w.timer = time.AfterFunc(watchDelay, c.runWatch)
	} else {
		w.timer.Reset(watchDelay)
	}
}

// runWatch reads from the connection while the handler runs, if its body
// is done.
func (c *conn) runWatch() {
	w := &c.watch
	w.mu.Lock()
	if !w.running || w.done != nil || !w.bodyDone.Load() {
		w.mu.Unlock()
		return
	}
	done := make(chan struct{})
	w.done = done
	w.mu.Unlock()
	defer close(done)
	n, err := c.rwc.Read(w.peek[:])
	if n == 1 {
		w.peeked = true
	}
	if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
		// The client went away (or the connection failed).
		w.err = err
		c.cancel()
	}
}

// stopWatch ends the watcher once the handler has returned.
func (c *conn) stopWatch() {
	w := &c.watch
	w.timer.Stop()
	w.mu.Lock()
	w.running = false
	done := w.done
	w.done = nil
	w.mu.Unlock()
	if done != nil {
		// Interrupt the read and wait for the watcher to stop.
		c.rwc.SetReadDeadline(time.Unix(1, 0))
		<-done
		c.rwc.SetReadDeadline(time.Time{})
		if w.err != nil {
			c.rerr, w.err = w.err, nil
		}
	}
}

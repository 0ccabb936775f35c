package smb

import (
	"sync"
	"sync/atomic"
	"time"
)

// workers runs a connection's concurrent requests (READs and WRITEs
// outside compounds, CREATEs that may go asynchronous) on goroutines kept
// between requests. A fresh goroutine per request grew its stack anew
// each time, through the engine's transaction and the record codecs, and
// the stack copies were a sixth of the server's CPU time when smbclient
// put 1,000 small files (runtime.copystack in a CPU profile); a worker
// that served a request already has the stack the next one needs.
type workers struct {
	idleFor time.Duration
	mu      sync.Mutex
	// idle holds the waiting workers' task channels (each buffered for
	// one task), the one idle last on top: it has the warmest stack.
	idle   []chan func()
	closed bool
	// started counts the goroutines started, live those not ended.
	started, live atomic.Int64
}

// workerIdle is how long a worker without work stays for the next one.
const workerIdle = 5 * time.Second

func newWorkers(idle time.Duration) *workers { return &workers{idleFor: idle} }

// run runs f on an idle worker, or on a new one when none is idle: a
// task never waits for a busy worker (a request may wait for another).
func (w *workers) run(f func()) {
	w.mu.Lock()
	if n := len(w.idle); n > 0 {
		ch := w.idle[n-1]
		w.idle = w.idle[:n-1]
		w.mu.Unlock()
		ch <- f
		return
	}
	w.mu.Unlock()
	w.started.Add(1)
	w.live.Add(1)
	go w.loop(f)
}

func (w *workers) loop(f func()) {
	defer w.live.Add(-1)
	ch := make(chan func(), 1)
	t := time.NewTimer(w.idleFor)
	defer t.Stop()
	for {
		f()
		f = nil // nothing of the last request stays reachable while idle
		w.mu.Lock()
		if w.closed {
			w.mu.Unlock()
			return
		}
		w.idle = append(w.idle, ch)
		w.mu.Unlock()
		t.Reset(w.idleFor)
		select {
		case f = <-ch:
		case <-t.C:
			// Leave, unless run or close took this worker meanwhile
			// (its channel is no longer in idle): a task comes then.
			if w.leave(ch) {
				return
			}
			f = <-ch
		}
		if f == nil {
			return // close
		}
	}
}

// leave takes ch out of idle; false when run or close took it first
// (close sends a nil task).
func (w *workers) leave(ch chan func()) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, c := range w.idle {
		if c == ch {
			w.idle = append(w.idle[:i], w.idle[i+1:]...)
			return true
		}
	}
	return false
}

// idleWorkers counts the workers waiting for a task.
func (w *workers) idleWorkers() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.idle)
}

// close ends the idle workers; busy ones end after their task.
func (w *workers) close() {
	w.mu.Lock()
	idle := w.idle
	w.idle, w.closed = nil, true
	w.mu.Unlock()
	for _, ch := range idle {
		ch <- nil
	}
}

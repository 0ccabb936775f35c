package main

import (
	"fmt"
	"os"
	"sync"
	"time"
)

// groupCommitTarget is the limit of the durable small writes: the
// --sync=false server's workload with, after each of its durable
// requests, the wait a group commit on the data directory's disk adds
// and nothing else. Each client appends a record of the request's size
// to one preallocated file and waits until an fsync that started after
// it was written has ended. One goroutine runs the fsyncs, one at a time,
// each for every record written before it started, as lazuli's log does:
// first waiting, at most half the last fsync's time, for as many records
// as the last one carried (the clients it released coming back). Of the
// ways tried on this kind of disk that is the fastest: fsyncs back to
// back without that wait carried fewer records each, and a fsync per
// request (several at once) took much longer each. It costs the server
// no CPU; its own is the client's.
const groupCommitTarget = "nosync+fsync"

// groupCommit is that log: one file, one flusher goroutine.
type groupCommit struct {
	f    *os.File
	size int64 // the file's preallocated length; writes wrap around it
	kick chan struct{}
	stop chan struct{}
	done chan struct{}

	mu   sync.Mutex
	off  int64  // where the next pending records go
	pend []byte // records written by clients, not yet in the file
	n    int    // the records in pend
	wait *commitBatch
	err  error
	// While the flusher gathers, the record that makes n reach
	// gatherAt closes gatherCh.
	gatherAt int
	gatherCh chan struct{}
}

// commitBatch is the clients waiting for one fsync.
type commitBatch struct {
	done chan struct{}
	err  error
}

// newGroupCommit starts a group commit in dir. The file is written in
// full and synced first, so that every fsync writes data alone, not a
// new size or block map (as lazuli's log preallocates).
func newGroupCommit(dir string) (*groupCommit, error) {
	f, err := os.CreateTemp(dir, "lazuli-bench-log-")
	if err != nil {
		return nil, err
	}
	const size = 64 << 20
	if _, err = f.Write(make([]byte, size)); err == nil {
		err = datasync(f)
	}
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	g := &groupCommit{f: f, size: size, kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go g.flush()
	return g, nil
}

// commit writes rec and returns once an fsync covering it has ended.
func (g *groupCommit) commit(rec []byte) error {
	g.mu.Lock()
	if g.err != nil {
		g.mu.Unlock()
		return g.err
	}
	g.pend = append(g.pend, rec...)
	g.n++
	if g.gatherCh != nil && g.n >= g.gatherAt {
		close(g.gatherCh)
		g.gatherCh = nil
	}
	if g.wait == nil {
		g.wait = &commitBatch{done: make(chan struct{})}
	}
	b := g.wait
	g.mu.Unlock()
	select {
	case g.kick <- struct{}{}:
	default:
	}
	<-b.done
	return b.err
}

// flush runs the fsyncs: whenever records wait, it gathers (see
// groupCommitTarget), writes them all at once and fdatasyncs, then goes
// on while more came meanwhile.
func (g *groupCommit) flush() {
	defer close(g.done)
	var (
		buf      []byte
		lastN    int
		lastTook time.Duration
		lastEnd  time.Time
	)
	for {
		select {
		case <-g.kick:
		case <-g.stop:
			return
		}
		for {
			g.gather(lastN, min(lastTook/2, 5*time.Millisecond)-time.Since(lastEnd))
			g.mu.Lock()
			b, recs, n, off := g.wait, g.pend, g.n, g.off
			if b == nil {
				// Nothing waits: pend stays the clients' buffer.
				g.mu.Unlock()
				break
			}
			// The clients append to the buffer the last write used
			// while this one writes theirs.
			g.wait, g.pend, g.n = nil, buf[:0], 0
			if off+int64(len(recs)) > g.size {
				off = 0
			}
			g.off = off + int64(len(recs))
			g.mu.Unlock()
			start := time.Now()
			_, err := g.f.WriteAt(recs, off)
			if err == nil {
				err = datasync(g.f)
			}
			lastN, lastTook, lastEnd = n, time.Since(start), time.Now()
			if err != nil {
				err = fmt.Errorf("group commit: %w", err)
				g.mu.Lock()
				g.err = err
				g.mu.Unlock()
			}
			b.err = err
			close(b.done)
			buf = recs
		}
	}
}

// gather waits, at most limit, until want records are pending.
func (g *groupCommit) gather(want int, limit time.Duration) {
	if want == 0 || limit <= 0 {
		return
	}
	g.mu.Lock()
	if g.n >= want {
		g.mu.Unlock()
		return
	}
	ch := make(chan struct{})
	g.gatherAt, g.gatherCh = want, ch
	g.mu.Unlock()
	t := time.NewTimer(limit)
	select {
	case <-ch:
	case <-t.C:
	}
	t.Stop()
	g.mu.Lock()
	if g.gatherCh == ch {
		g.gatherCh = nil
	}
	g.mu.Unlock()
}

// close stops the flusher and removes the file.
func (g *groupCommit) close() {
	close(g.stop)
	<-g.done
	g.f.Close()
	os.Remove(g.f.Name())
}

// durably wraps o: after it succeeds, syncs commits of rec, one per
// durable request the op made, each waiting for its own fsync.
func (g *groupCommit) durably(o op, rec []byte, syncs int) op {
	return func() error {
		if err := o(); err != nil {
			return err
		}
		for range syncs {
			if err := g.commit(rec); err != nil {
				return err
			}
		}
		return nil
	}
}

// syncsPerOp is how many dependent durable requests one op of a
// workload makes, each waiting for a sync of its own; 1 when not listed.
var syncsPerOp = map[string]int{"blob-lease": 2, "file-put-1k": 2}

// syncs is syncsPerOp of workload.
func syncs(workload string) int {
	if s := syncsPerOp[workload]; s > 0 {
		return s
	}
	return 1
}

// commitRecord is the size of the record groupCommitTarget writes per
// durable request: about what lazuli's log writes for a 1 KiB blob.
const commitRecord = 1200

// applyLimits sets, on each durable-over-nosync goal, the ratio the
// disk's group commit leaves (groupCommitTarget over the same anchor),
// the fraction of it the measured ratio reaches, and the mean fsync of
// the durable target's log during its measurement.
func applyLimits(gs []goalResult, rep *report) {
	for i := range gs {
		g := &gs[i]
		if g.Target != goalDurable || g.AnchorTarget != goalNoSync {
			continue
		}
		if r := rep.find(g.Workload, g.Target); r != nil {
			g.RunFsyncMS = r.FsyncMS
		}
		l := rep.find(g.Workload, groupCommitTarget)
		if l == nil || l.failed() || g.AnchorOpsPerSec <= 0 {
			continue
		}
		g.LimitOpsPerSec = l.OpsPerSec
		g.Limit = l.OpsPerSec / g.AnchorOpsPerSec
		if g.Ratio > 0 {
			g.OfLimit = g.Ratio / min(g.Limit, 1)
		}
	}
}

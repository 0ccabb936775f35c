package logstore

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lazuli-storage/lazuli/internal/engine/filestore"
	"github.com/lazuli-storage/lazuli/internal/engine/memstore"
)

// A log or snapshot file is a sequence of records. A record is a header of
// headerLen bytes followed by its payload:
//
//	0  uint32  payload length (never 0)
//	4  uint64  final: the writer's promise that the bytes of this file
//	           before this offset were on stable storage, or (without
//	           Sync) written whole, when the record was written
//	12 uint32  CRC-32C of the payload
//	16 uint32  CRC-32C of the 16 bytes above
//
// all little-endian. The payload is a list of writes: opSet, uvarint key
// length, key, uvarint value length, value; or opDelete, uvarint key
// length, key. The header's own checksum lets recovery look for whole
// records after a damaged one, and final tells it whether the damage can
// be a torn tail (see tornTail).
const headerLen = 20

// Record ops.
const (
	opSet    = 1
	opDelete = 2
)

// maxRecord bounds a record's payload; a larger length is damage.
const maxRecord = 1 << 30

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// appendRecord encodes ops as one record after b.
func appendRecord(b []byte, ops []memstore.Op, final int64) []byte {
	start := len(b)
	b = append(b, make([]byte, headerLen)...)
	for _, op := range ops {
		if op.Delete {
			b = append(b, opDelete)
			b = binary.AppendUvarint(b, uint64(len(op.Key)))
			b = append(b, op.Key...)
			continue
		}
		b = append(b, opSet)
		b = binary.AppendUvarint(b, uint64(len(op.Key)))
		b = append(b, op.Key...)
		b = binary.AppendUvarint(b, uint64(len(op.Value)))
		b = append(b, op.Value...)
	}
	h := b[start : start+headerLen]
	payload := b[start+headerLen:]
	binary.LittleEndian.PutUint32(h[0:], uint32(len(payload)))
	binary.LittleEndian.PutUint64(h[4:], uint64(final))
	binary.LittleEndian.PutUint32(h[12:], crc32.Checksum(payload, castagnoli))
	binary.LittleEndian.PutUint32(h[16:], crc32.Checksum(h[:16], castagnoli))
	return b
}

// parseHeader checks a record header and returns its payload length,
// final offset and payload checksum.
func parseHeader(h []byte) (n uint32, final int64, sum uint32, ok bool) {
	if crc32.Checksum(h[:16], castagnoli) != binary.LittleEndian.Uint32(h[16:]) {
		return 0, 0, 0, false
	}
	n = binary.LittleEndian.Uint32(h[0:])
	if n == 0 || n > maxRecord {
		return 0, 0, 0, false
	}
	return n, int64(binary.LittleEndian.Uint64(h[4:])), binary.LittleEndian.Uint32(h[12:]), true
}

// wal is the Store's log. Fields marked (mu) are guarded by Store.mu,
// those marked (smu) by smu.
type wal struct {
	opts   Options
	fs     filestore.FS
	dir    string
	unlock func() error

	f      filestore.File // the newest log (mu)
	gen    uint64         // its generation (mu)
	size   int64          // the length of its records, written or pending (mu)
	alloc  int64          // its length on disk: records and the zeros after them (mu)
	final  int64          // its bytes known to be on disk (mu)
	seq    uint64         // records appended since Open (mu)
	live   int64          // bytes of live data, memstore.ItemSize of every key (mu)
	buf    []byte         // without Sync: the encoding buffer (mu)
	broken error          // a failure that stops every later Update (mu)

	// With Sync, records wait in pend (they end at size) until the fsync
	// that covers them writes them all with one write, spare being the
	// buffer that write used last: a write per record cost every Update a
	// system call under mu, while nobody may see the record before that
	// fsync anyway. Without Sync, each record is written as it is
	// appended, so that it survives the process being killed.
	pend, spare []byte // (mu)

	compacting  bool          // (mu)
	compactions atomic.Int64  // compactions finished since Open
	closing     bool          // (mu)
	done        chan struct{} // closed when the running compaction ends (mu)

	// The group commit. One fsync of the log runs at a time, for every
	// record written before it started. Its waiters form the batch cur;
	// those who arrive too late for it form the batch next, which the
	// fsync after it serves. Rotation and Close run alone (exclusive) and
	// wait on cond.
	smu       sync.Mutex
	cond      *sync.Cond
	inflight  bool       // an fsync runs
	captured  bool       // it has fixed the records it covers
	covering  uint64     // the records the running fsync puts on disk
	cur, next *syncBatch // its waiters, the waiters for the one after it
	exclusive bool       // a rotation or Close is running or waiting to run
	synced    uint64     // records on disk
	syncErr   error      // the fsync failure, if any
	stats     SyncStats
	// The fsync that ended last (see gatherReturning): the records it
	// put on disk, its time and when it ended (smu), and the records
	// appended by then (endSeq, mu).
	lastRecords uint64
	lastTook    time.Duration
	lastEnd     time.Time
	endSeq      uint64

	// The last record appended by a durable Update (mu): records after
	// it that are not on disk yet are all transient ones.
	durable uint64

	// While an fsync gathers, the record gatherSeq closes gatherCh (mu).
	gatherSeq uint64
	gatherCh  chan struct{}
}

// syncBatch is the waiters for one fsync. Each is woken once: when the
// fsync ends (done), or (lead) to run it. Only the waiters an fsync
// served wake up when it ends, and only one of the next batch, to run the
// next: no thundering herd (before, every fsync woke every waiter).
//
// One fsync runs at a time: allowing a second at once halved the records
// each fsync served (3.5 instead of 7.2 at 16 HTTP clients on this
// machine's shared disk) and doubled the fsyncs, for no more throughput:
// concurrent fsyncs of one file on ext4 largely run one after the other
// (each waits for the pages the other is writing).
type syncBatch struct {
	done   chan struct{} // closed when the fsync serving the batch has ended
	lead   chan struct{} // holds a token while the batch needs a leader
	maxSeq uint64        // the newest record a waiter of the batch waits for
}

func newBatch() *syncBatch {
	return &syncBatch{done: make(chan struct{}), lead: make(chan struct{}, 1)}
}

// wake ends the wait of every waiter of b.
func (b *syncBatch) wake() {
	if b != nil {
		close(b.done)
	}
}

// preallocMax bounds the zeros written ahead of the records with Sync.
// Overwriting blocks that are already allocated and on disk lets each
// fsync (fdatasync) write only the data, not the file's size and block
// map as well: on ext4 that is about a third of the time of an append.
// On ext4 without a journal, fdatasync also writes the inode's block
// whenever a write moved the file's mtime, which write(2) does at most
// once per clock tick (4 ms at HZ=250): measured on Linux 6.18, 0.75 ms at
// the median for such an fdatasync against 0.38-0.45 ms for the next one
// in the same tick. ext4 has no way to leave the mtime alone, so about
// one fsync in three pays it at a few hundred fsyncs a second.
const preallocMax = 8 << 20

// append adds one record holding ops and returns its sequence number:
// with Sync to the pending records, which the next fsync writes, else to
// the file. live is the change in live bytes the writes make. On failure
// nothing of the record stays in the log, or the log is broken. It runs
// under mu.
func (w *wal) append(ops []memstore.Op, live int64) (uint64, error) {
	if w.opts.Sync {
		// Room for the record is made now, so that a full disk fails
		// this Update alone rather than the fsync of many.
		if err := w.prealloc(int64(recordLen(ops))); err != nil {
			return 0, w.undo(err)
		}
		n := len(w.pend)
		w.pend = appendRecord(w.pend, ops, w.final)
		w.size += int64(len(w.pend) - n)
		w.seq++
		w.live += live
		if w.gatherCh != nil && w.seq >= w.gatherSeq {
			close(w.gatherCh)
			w.gatherCh = nil
		}
		return w.seq, nil
	}
	b := appendRecord(w.buf[:0], ops, w.size) // every earlier write is whole
	if cap(b) <= 1<<20 {
		w.buf = b
	} else {
		w.buf = nil
	}
	n, err := w.f.WriteAt(b, w.size)
	if err != nil {
		return 0, w.undo(err)
	}
	w.size += int64(n)
	w.seq++
	w.live += live
	return w.seq, nil
}

// undo takes back whatever part of a failed write reached the file after
// the records, so that the next record follows the last whole one. It
// runs under mu.
func (w *wal) undo(err error) error {
	if terr := w.f.Truncate(w.size); terr != nil {
		w.broken = fmt.Errorf("logstore: log write failed (%v) and could not be undone: %w", err, terr)
	}
	w.alloc = w.size
	return fmt.Errorf("logstore: log write: %w", err)
}

// recordLen is the length appendRecord gives a record of ops.
func recordLen(ops []memstore.Op) int {
	n := headerLen
	for _, op := range ops {
		n += 1 + uvarintLen(len(op.Key)) + len(op.Key)
		if !op.Delete {
			n += uvarintLen(len(op.Value)) + len(op.Value)
		}
	}
	return n
}

func uvarintLen(n int) int {
	k := 1
	for ; n >= 0x80; n >>= 7 {
		k++
	}
	return k
}

// takePending hands the pending records to the caller, who writes them at
// off, and makes them count as written. It runs under mu.
func (w *wal) takePending() (b []byte, off int64) {
	b, off = w.pend, w.size-int64(len(w.pend))
	w.pend, w.spare = w.spare[:0], nil
	return b, off
}

// recycle keeps b, written, for the records to come. It runs under mu.
func (w *wal) recycle(b []byte) {
	if cap(b) <= 1<<20 {
		w.spare = b
	}
}

// writePending writes the pending records to the file. It runs under mu,
// while no fsync runs.
func (w *wal) writePending() error {
	b, off := w.takePending()
	if len(b) == 0 {
		w.recycle(b)
		return nil
	}
	if _, err := w.f.WriteAt(b, off); err != nil {
		// The records have left memory and may not be in the file:
		// nothing may build on them, and no fsync may acknowledge them.
		w.broken = fmt.Errorf("logstore: log write: %w", err)
		return w.broken
	}
	w.recycle(b)
	return nil
}

// prealloc makes room for n more bytes after the records: with Sync, it
// writes zeros ahead of them (they reach the disk with the next fsync),
// from which recovery tells the end of the records. It runs under mu.
func (w *wal) prealloc(n int64) error {
	if !w.opts.Sync || w.size+n <= w.alloc {
		return nil
	}
	step := min(preallocMax, max(w.opts.CompactBytes/8, 64<<10))
	to := w.size + n + step
	zeros := make([]byte, min(to-w.alloc, 1<<20))
	for w.alloc < to {
		k, err := w.f.WriteAt(zeros[:min(int64(len(zeros)), to-w.alloc)], w.alloc)
		w.alloc += int64(k)
		if err != nil {
			return err
		}
	}
	return nil
}

// syncTo returns once record seq is on disk. If no fsync runs, the caller
// runs one for every record written so far and publishes the tree they
// make to Views; if the running one covers seq (or has not fixed what it
// covers yet), it waits for that one; otherwise for the next, which one of
// its waiters runs once the running one ends. So nobody waits for more
// than the fsync in flight and their own.
func (w *wal) syncTo(s *Store, seq uint64) error {
	w.smu.Lock()
	defer w.smu.Unlock()
	for w.synced < seq && w.syncErr == nil {
		if w.inflight && (w.covering >= seq || !w.captured) {
			// Woken when it ends; a record it turns out not to cover
			// (appended after it fixed its end) goes round again.
			b := w.cur
			w.smu.Unlock()
			<-b.done
			w.smu.Lock()
			continue
		}
		if !w.inflight && !w.exclusive {
			if err := w.fsync(s); err != nil {
				return err
			}
			continue
		}
		if w.next == nil {
			w.next = newBatch()
		}
		b := w.next
		b.maxSeq = max(b.maxSeq, seq)
		w.smu.Unlock()
		select {
		case <-b.done:
			w.smu.Lock()
		case <-b.lead:
			// Run the next fsync for the batch, unless a rotation put
			// every record it waits for on disk meanwhile.
			w.smu.Lock()
			if w.next == b && !w.inflight && !w.exclusive {
				if b.maxSeq <= w.synced {
					w.next = nil
					b.wake()
				} else if err := w.fsync(s); err != nil {
					return err
				}
			}
		}
	}
	return w.syncErr
}

// fsync runs one fsync of the log for every record written so far, for
// the waiters of the next batch and those who join it while it starts. It
// is called and returns under smu, which it releases meanwhile. It first
// lets the records that are about to be appended join it
// (yieldForRecords). When it ends, it wakes its batch and hands the next
// batch, if any, to one of its waiters.
func (w *wal) fsync(s *Store) error {
	w.inflight, w.captured = true, false
	w.cur, w.next = w.next, nil
	if w.cur == nil {
		w.cur = newBatch()
	}
	want, limit := w.lastRecords, min(w.lastTook/2, gatherMax)-time.Since(w.lastEnd)
	w.smu.Unlock()
	w.gatherReturning(s, want, limit)
	yieldForRecords(s)
	s.mu.Lock()
	upto, f, gen, size, tree := w.seq, w.f, w.gen, w.size, s.tree.Clone()
	b, off := w.takePending()
	broken := w.broken
	s.mu.Unlock()
	w.smu.Lock()
	w.covering = max(w.covering, upto)
	w.captured = true
	w.smu.Unlock()
	start := time.Now()
	// Records lost to an earlier failed write (see writePending) are
	// among those this fsync would acknowledge: it fails instead.
	err := broken
	if err == nil && len(b) > 0 {
		// Only the fsync in flight writes pending records, and appends
		// only ever write zeros after them.
		_, err = f.WriteAt(b, off)
	}
	if err == nil {
		err = f.Sync()
	}
	took := time.Since(start)
	s.mu.Lock()
	if err != nil {
		// Records that later Updates build on are lost, or what the
		// kernel failed to write is unknown: stop here.
		err = fmt.Errorf("logstore: log write and fsync: %w", err)
		w.broken = err
	} else if w.gen == gen {
		w.final = max(w.final, size)
	}
	w.recycle(b)
	w.endSeq = w.seq
	s.mu.Unlock()
	w.smu.Lock()
	w.inflight = false
	if err != nil {
		w.syncErr = err
		w.cur.wake()
		w.next.wake()
		w.cur, w.next = nil, nil
		w.cond.Broadcast()
		return err
	}
	w.stats.Fsyncs++
	w.stats.Total += took
	w.stats.Max = max(w.stats.Max, took)
	w.lastRecords, w.lastTook, w.lastEnd = 0, took, time.Now()
	if upto > w.synced {
		w.stats.Records += upto - w.synced
		w.lastRecords = upto - w.synced
		w.synced = upto
		s.pub.Store(&tree)
	}
	w.cur.wake()
	w.cur = nil
	w.handOff()
	w.cond.Broadcast() // for lockExclusive
	return nil
}

// publishTransient makes the tree, whose newest record is a transient
// Update's, visible at once if that exposes nothing less durable than
// Update promises: every durable record is on disk and no fsync or
// rotation has captured an older tree that it would publish later. It
// runs under mu.
func (w *wal) publishTransient(s *Store) bool {
	w.smu.Lock()
	defer w.smu.Unlock()
	if w.inflight || w.exclusive || w.syncErr != nil || w.synced < w.durable {
		return false
	}
	pub := s.tree.Clone()
	s.pub.Store(&pub)
	return true
}

// handOff gives the next batch, if any, a leader. It runs under smu.
func (w *wal) handOff() {
	if w.next == nil {
		return
	}
	select {
	case w.next.lead <- struct{}{}:
	default: // a token is already there
	}
}

// gatherReturning waits, at most limit, until want records were
// appended since the last fsync ended: as many as it served, whose
// Updates were just answered and whose clients come back with their next
// ones. It runs without locks held, before an fsync captures its records.
//
// Why: with fsyncs back to back, the clients split into two groups that
// took turns, one waiting for an fsync while the other was out between
// requests (answering, parsing, signing, on the same CPUs), so each fsync
// served about half of them and a durable request waited about one and a
// half fsyncs. Waiting up to half the last fsync's time for the returning
// group puts both in one fsync. Measured with lazuli-bench, same run,
// alternating rounds of 3 s, on two cores shared with other work (load
// 17-20): at 16 clients Updates per fsync 7.9-8.3 before and 10.3-10.9
// after (table-insert, table-replace-ifmatch, blob-put-1k, blob-lease,
// queue-put, file-put-1k), an fsync running 75-80 % of the time before
// and 55-62 % after, ops/s 0.82-1.24x of before (the CPUs, not the disk,
// bound them there; file-put-1k's 0.82 was 1.05 in 5 more rounds); at 4
// clients 2.0-2.1 Updates per fsync before, 2.9-3.0 after; at 1 client
// blob-lease and blob-put-1k 1.02x and 1.22x of before. A lone writer
// never waits: its own record is the one it would wait for.
//
// Tried and dropped: once a gather ran out, running the next fsyncs back
// to back in one goroutine (each starting as the last ended, without
// gathering or yielding). An fsync then ran 75-83 % of the time instead
// of 55-60 %, but served 7-8 Updates instead of 10-11: Updates per second
// of fsync time (Updates per fsync times the share of the time one runs,
// over the mean fsync) stayed at 5.4-6.3 both ways across the seven small
// write workloads in two same-run comparisons at 16 clients, and ops/s
// followed the mean fsync time, which the disk set (see preallocMax).
func (w *wal) gatherReturning(s *Store, want uint64, limit time.Duration) {
	if want == 0 || limit <= 0 {
		return
	}
	ch := make(chan struct{})
	s.mu.Lock()
	if w.seq >= w.endSeq+want {
		s.mu.Unlock()
		return
	}
	w.gatherSeq, w.gatherCh = w.endSeq+want, ch
	s.mu.Unlock()
	t := time.NewTimer(limit)
	select {
	case <-ch:
	case <-t.C:
	}
	t.Stop()
	s.mu.Lock()
	if w.gatherCh == ch {
		w.gatherCh = nil
	}
	s.mu.Unlock()
}

// gatherMax bounds gatherReturning's wait, so that one slow fsync does
// not make the next wait long for clients that may not come back.
const gatherMax = 5 * time.Millisecond

// yieldForRecords lets the goroutines that are ready to run go first, as
// long as they keep appending records (at most yieldRounds times), so that
// the fsync about to start covers them too. On a busy server those are
// requests whose records are a few microseconds away; without this, each
// fsync started as soon as one record waited and covered 2.3 of them on
// average (table-insert at 16 clients over HTTP), and the fsyncs' CPU cost
// ate a third of durable throughput; with it, 6.2 per fsync. When nothing
// else is ready to run, it returns at once and adds no latency.
func yieldForRecords(s *Store) {
	s.mu.Lock()
	seq := s.log.seq
	s.mu.Unlock()
	for range yieldRounds {
		runtime.Gosched()
		s.mu.Lock()
		now := s.log.seq
		s.mu.Unlock()
		if now == seq {
			return
		}
		seq = now
	}
}

// yieldRounds bounds the yields before an fsync: 1 gave 5.5 records per
// fsync, 4 and 16 about 6.3 (same workload). With gatherReturning as well,
// dropping the yields lowered the Updates per second of fsync time by
// 4-15 % on each of the seven small write workloads (same run, 16 clients).
const yieldRounds = 4

// lockExclusive waits until no fsync runs and keeps new ones from
// starting until unlockExclusive. It runs under smu.
func (w *wal) lockExclusive() {
	for w.exclusive {
		w.cond.Wait()
	}
	w.exclusive = true
	for w.inflight {
		w.cond.Wait()
	}
}

// maybeCompact starts a compaction in the background when the log is due
// for one. It runs under mu.
func (w *wal) maybeCompact(s *Store) {
	if w.compacting || w.closing || w.size < w.opts.CompactBytes || w.size <= 2*w.live {
		return
	}
	w.compacting = true
	w.done = make(chan struct{})
	go w.compact(s, w.done)
}

// compact starts a new log, writes a snapshot of the store as of that
// moment and removes the files the snapshot replaces.
func (w *wal) compact(s *Store, done chan struct{}) {
	defer close(done)
	err := w.rotateAndSnapshot(s)
	s.mu.Lock()
	w.compacting = false
	if err != nil {
		// Try again once the log has doubled.
		w.opts.CompactBytes = max(w.opts.CompactBytes, 2*w.size)
	}
	s.mu.Unlock()
	if err != nil {
		w.opts.Log.Error("logstore: log compaction failed", "err", err)
		return
	}
	w.compactions.Add(1)
}

// rotateAndSnapshot starts a new log and writes a snapshot of the store
// as of the switch. The old log is on disk before the new one receives a
// record, so only the newest log can ever have a torn tail.
func (w *wal) rotateAndSnapshot(s *Store) error {
	w.smu.Lock()
	w.lockExclusive()
	w.smu.Unlock()
	s.mu.Lock()
	old, gen := w.f, w.gen+1
	s.mu.Unlock()
	// Most of the old log goes to disk without holding up Updates.
	err := old.Sync()
	var nf filestore.File
	s.mu.Lock()
	if err == nil {
		err = w.writePending()
	}
	if err == nil {
		// The old log goes to disk whole before the new one exists, and
		// without its preallocated zeros: only the newest log can ever
		// end in zeros or in a torn record.
		if err = old.Truncate(w.size); err == nil {
			w.alloc = w.size
			err = old.Sync()
		}
	}
	if err == nil {
		nf, err = createLog(w.fs, w.dir, gen)
	}
	if err == nil {
		err = w.fs.SyncDir(w.dir)
	}
	if err != nil {
		if nf != nil {
			nf.Close()
			w.fs.Remove(logPath(w.dir, gen))
		}
		s.mu.Unlock()
		w.endLead(s, 0, nil)
		return err
	}
	upto, snap := w.seq, s.tree.Clone()
	w.f, w.gen, w.size, w.alloc, w.final = nf, gen, 0, 0, 0
	s.mu.Unlock()
	w.endLead(s, upto, &snap)
	if err := old.Close(); err != nil {
		return err
	}
	if err := writeSnapshot(w.fs, w.dir, gen, snap); err != nil {
		return err
	}
	return removeBefore(w.fs, w.dir, gen)
}

// endLead ends what lockExclusive began; with tree set, records up to
// upto are on disk and tree is what they make.
func (w *wal) endLead(s *Store, upto uint64, tree *memstore.Tree) {
	w.smu.Lock()
	if tree != nil && w.opts.Sync && upto > w.synced {
		w.synced = upto
		s.pub.Store(tree)
	}
	w.exclusive = false
	w.cond.Broadcast()
	w.handOff()
	w.smu.Unlock()
}

// close ends the log: it waits for a running compaction, fsyncs when
// configured to and closes the file.
func (w *wal) close(s *Store) error {
	s.mu.Lock()
	w.closing = true
	done := w.done
	s.mu.Unlock()
	if done != nil {
		<-done
	}
	w.smu.Lock()
	w.lockExclusive()
	w.smu.Unlock()
	s.mu.Lock()
	var errs []error
	upto := w.seq
	tree := s.tree.Clone()
	if w.opts.Sync && w.broken == nil {
		err := w.writePending()
		if err == nil {
			err = w.f.Sync()
		}
		errs = append(errs, err)
	}
	errs = append(errs, w.f.Close())
	s.mu.Unlock()
	err := errors.Join(errs...)
	if err == nil {
		w.endLead(s, upto, &tree)
	} else {
		w.endLead(s, 0, nil)
	}
	return errors.Join(err, w.unlock())
}

func logPath(dir string, gen uint64) string { return filepath.Join(dir, fmt.Sprintf("%016x.log", gen)) }
func snapPath(dir string, gen uint64) string {
	return filepath.Join(dir, fmt.Sprintf("%016x.snap", gen))
}

func createLog(fsys filestore.FS, dir string, gen uint64) (filestore.File, error) {
	return fsys.OpenFile(logPath(dir, gen), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
}

// files lists the generations of the logs and snapshots in dir, in
// ascending order, and removes unfinished snapshots (*.tmp: copies of
// data the logs hold).
func files(fsys filestore.FS, dir string) (logs, snaps []uint64, err error) {
	ents, err := fsys.ReadDir(dir)
	if err != nil {
		return nil, nil, err
	}
	for _, e := range ents {
		name := e.Name()
		if strings.HasSuffix(name, ".snap.tmp") {
			if err := fsys.Remove(filepath.Join(dir, name)); err != nil {
				return nil, nil, err
			}
			continue
		}
		base, ext, _ := strings.Cut(name, ".")
		gen, perr := strconv.ParseUint(base, 16, 64)
		if perr != nil || len(base) != 16 {
			continue
		}
		switch ext {
		case "log":
			logs = append(logs, gen)
		case "snap":
			snaps = append(snaps, gen)
		}
	}
	slices.Sort(logs)
	slices.Sort(snaps)
	return logs, snaps, nil
}

// removeBefore removes the logs and snapshots older than gen: a snapshot
// of generation gen holds everything they do.
func removeBefore(fsys filestore.FS, dir string, gen uint64) error {
	logs, snaps, err := files(fsys, dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, g := range logs {
		if g < gen {
			errs = append(errs, fsys.Remove(logPath(dir, g)))
		}
	}
	for _, g := range snaps {
		if g < gen {
			errs = append(errs, fsys.Remove(snapPath(dir, g)))
		}
	}
	return errors.Join(errs...)
}

// DamageError reports damage recovery may not repair on its own: anything
// but a torn tail of the newest log. Nothing was changed on disk.
type DamageError struct {
	Path   string // the damaged file
	Offset int64  // where its first damaged record starts
	Reason string
}

func (e *DamageError) Error() string {
	return fmt.Sprintf("logstore: %s is damaged at offset %d (%s); the data directory was left as it is. "+
		"Salvage moves that file and every later log into %s/ and keeps the records before the damage",
		e.Path, e.Offset, e.Reason, SalvageDir)
}

// recover loads the newest snapshot and replays the logs after it into
// tree, then opens the newest log for appending.
func (w *wal) recover(tree memstore.Tree) error {
	logs, snaps, err := files(w.fs, w.dir)
	if err != nil {
		return err
	}
	var from uint64
	var paths []string // the files to replay, in order
	if len(snaps) > 0 {
		from = snaps[len(snaps)-1]
		paths = append(paths, snapPath(w.dir, from))
	}
	logs = slices.DeleteFunc(logs, func(g uint64) bool { return g < from })
	for _, g := range logs {
		paths = append(paths, logPath(w.dir, g))
	}
	for i, path := range paths {
		newest := i == len(paths)-1 && strings.HasSuffix(path, ".log")
		good, size, reason, err := w.replay(path, tree)
		if err != nil {
			return err
		}
		if good == size {
			if newest {
				w.size, w.alloc, w.final = good, good, good
			}
			continue
		}
		if newest {
			zeros, err := zeroTail(w.fs, path, good)
			if err != nil {
				return err
			}
			if zeros {
				// The end of the records, and the zeros written ahead.
				w.size, w.alloc, w.final = good, size, good
				continue
			}
			torn, err := tornTail(w.fs, path, good)
			if err != nil {
				return err
			}
			if torn {
				// Records whose writes never all reached the disk, so
				// none of them was acknowledged.
				w.opts.Log.Warn("logstore: cutting the torn tail of the log", "file", path,
					"offset", good, "bytes", size-good)
				if err := truncate(w.fs, path, good); err != nil {
					return err
				}
				w.size, w.alloc, w.final = good, good, good
				continue
			}
			reason += "; whole records written after it was on disk follow it"
		}
		derr := &DamageError{Path: path, Offset: good, Reason: reason}
		if !w.opts.Salvage {
			return derr
		}
		if err := w.salvage(derr, paths[i+1:]); err != nil {
			return err
		}
		// Start again from the salvaged files.
		w.live = 0
		tree.Clear()
		return w.recover(tree)
	}
	if err := removeBefore(w.fs, w.dir, from); err != nil {
		return err
	}
	if len(logs) == 0 {
		w.gen = max(from, 1)
		f, err := createLog(w.fs, w.dir, w.gen)
		if err != nil {
			return err
		}
		w.f = f
		return w.fs.SyncDir(w.dir)
	}
	w.gen = logs[len(logs)-1]
	w.f, err = w.fs.OpenFile(logPath(w.dir, w.gen), os.O_WRONLY, 0o644)
	return err
}

// truncate cuts the file at path to size and makes that durable.
func truncate(fsys filestore.FS, path string, size int64) error {
	f, err := fsys.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	return errors.Join(f.Truncate(size), f.Sync(), f.Close())
}

// replay applies every whole record of the file at path to tree. It
// returns the length of the intact records it applied and the file's
// size; where they differ, reason says what is wrong at offset good.
func (w *wal) replay(path string, tree memstore.Tree) (good, size int64, reason string, err error) {
	f, err := w.fs.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return 0, 0, "", err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, 0, "", err
	}
	size = st.Size()
	r := bufio.NewReaderSize(io.LimitReader(f, size), 1<<20)
	var hdr [headerLen]byte
	var payload []byte
	var ops []memstore.Op
	for good < size {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return good, size, "a record header is cut short", nil
		}
		n, _, sum, ok := parseHeader(hdr[:])
		if !ok {
			return good, size, "a record header fails its checksum", nil
		}
		if int64(n) > size-good-headerLen {
			return good, size, "a record is cut short", nil
		}
		if cap(payload) < int(n) {
			payload = make([]byte, n)
		}
		payload = payload[:n]
		if _, err := io.ReadFull(r, payload); err != nil {
			return 0, 0, "", err
		}
		if crc32.Checksum(payload, castagnoli) != sum {
			return good, size, "a record fails its checksum", nil
		}
		if ops, ok = decodeOps(ops[:0], payload); !ok {
			return good, size, "a record's writes do not decode", nil
		}
		// A record is checked whole before any of it is applied.
		for _, op := range ops {
			w.live += tree.Apply(op)
		}
		good += headerLen + int64(n)
	}
	return good, size, "", nil
}

// decodeOps appends the writes of a record's payload to ops. They alias p.
func decodeOps(ops []memstore.Op, p []byte) ([]memstore.Op, bool) {
	for len(p) > 0 {
		kind := p[0]
		k, rest, ok := takeBytes(p[1:])
		if !ok {
			return nil, false
		}
		p = rest
		switch kind {
		case opSet:
			v, rest, ok := takeBytes(p)
			if !ok {
				return nil, false
			}
			p = rest
			ops = append(ops, memstore.Op{Key: k, Value: v})
		case opDelete:
			ops = append(ops, memstore.Op{Key: k, Delete: true})
		default:
			return nil, false
		}
	}
	return ops, true
}

func takeBytes(p []byte) (b, rest []byte, ok bool) {
	n, used := binary.Uvarint(p)
	if used <= 0 || n > uint64(len(p)-used) {
		return nil, nil, false
	}
	p = p[used:]
	return p[:n], p[n:], true
}

// zeroTail reports whether the file at path holds only zero bytes from
// offset from on.
func zeroTail(fsys filestore.FS, path string, from int64) (bool, error) {
	f, err := fsys.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return false, err
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	for off := from; ; {
		n, err := f.ReadAt(buf, off)
		for _, c := range buf[:n] {
			if c != 0 {
				return false, nil
			}
		}
		off += int64(n)
		if err == io.EOF {
			return true, nil
		}
		if err != nil {
			return false, err
		}
	}
}

// tornTail reports whether the damage at offset bad of the newest log can
// be what a crash or power cut leaves of writes that never all reached the
// disk. That holds unless a whole record follows whose writer had already
// seen the damaged bytes on disk (its final offset lies past bad): then
// those bytes were acknowledged and have been damaged since.
//
// A power cut can drop or tear any of the writes made since the last
// fsync, not only the last one, so whole records may follow a torn one;
// their writers had not seen it on disk, and none of them was acknowledged
// (acknowledging one needs an fsync that covers the torn record too).
func tornTail(fsys filestore.FS, path string, bad int64) (bool, error) {
	f, err := fsys.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return false, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return false, err
	}
	rest := make([]byte, st.Size()-bad)
	if _, err := f.ReadAt(rest, bad); err != nil && err != io.EOF {
		return false, err
	}
	for p := 1; p+headerLen <= len(rest); {
		n, final, sum, ok := parseHeader(rest[p : p+headerLen])
		end := p + headerLen + int(n)
		if !ok || end > len(rest) || crc32.Checksum(rest[p+headerLen:end], castagnoli) != sum {
			// Skip zeros (written ahead of the records) in one step: a
			// header is examined wherever it would hold a non-zero byte.
			if nz := bytes.IndexFunc(rest[p:], func(r rune) bool { return r != 0 }); nz < 0 {
				break
			} else {
				p += max(1, nz-headerLen+1)
			}
			continue
		}
		if final > bad {
			return false, nil
		}
		p = end
	}
	return true, nil
}

// salvage moves the damaged file of d and the later logs into a new
// directory under <Dir>/salvage/, then writes the intact records before
// the damage back in the damaged file's place. Nothing is deleted.
func (w *wal) salvage(d *DamageError, later []string) error {
	to := filepath.Join(w.opts.Dir, SalvageDir, time.Now().UTC().Format("20060102T150405.000000000Z"))
	if err := w.fs.MkdirAll(to, 0o755); err != nil {
		return err
	}
	moved := filepath.Join(to, filepath.Base(d.Path))
	if err := w.fs.Rename(d.Path, moved); err != nil {
		return err
	}
	for _, p := range later {
		if err := w.fs.Rename(p, filepath.Join(to, filepath.Base(p))); err != nil {
			return err
		}
	}
	if err := w.fs.SyncDir(to); err != nil {
		return err
	}
	src, err := w.fs.OpenFile(moved, os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := w.fs.OpenFile(d.Path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = io.Copy(struct{ io.Writer }{dst}, io.LimitReader(src, d.Offset))
	if err = errors.Join(err, dst.Sync(), dst.Close(), w.fs.SyncDir(w.dir)); err != nil {
		return err
	}
	w.opts.Log.Warn("logstore: salvaged a damaged file", "file", d.Path, "offset", d.Offset,
		"reason", d.Reason, "moved_to", to, "later_logs_moved", len(later))
	return nil
}

// writeSnapshot writes every key of tree to <gen>.snap, through a
// temporary file that is fsynced and renamed into place.
func writeSnapshot(fsys filestore.FS, dir string, gen uint64, tree memstore.Tree) error {
	final := snapPath(dir, gen)
	tmp := final + ".tmp"
	f, err := fsys.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	var ops []memstore.Op
	var rec []byte
	pending := 0
	var werr error
	flush := func() {
		if len(ops) == 0 || werr != nil {
			return
		}
		rec = appendRecord(rec[:0], ops, 0)
		_, werr = bw.Write(rec)
		ops, pending = ops[:0], 0
	}
	tree.Ascend(func(k, v []byte) bool {
		ops = append(ops, memstore.Op{Key: k, Value: v})
		pending += len(k) + len(v)
		if pending >= 256<<10 {
			flush()
		}
		return werr == nil
	})
	flush()
	err = errors.Join(werr, bw.Flush(), f.Sync(), f.Close())
	if err == nil {
		err = fsys.Rename(tmp, final)
	}
	if err == nil {
		err = fsys.SyncDir(dir)
	}
	if err != nil {
		fsys.Remove(tmp)
		return fmt.Errorf("logstore: write snapshot: %w", err)
	}
	return nil
}

package smb

import (
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/smb/smbtest"
	"github.com/lazuli-storage/lazuli/internal/smb/wire"
)

// lockSeq sends one lock element with a LockSequence and returns the
// status.
func lockSeq(t *testing.T, c *smbtest.Client, fid wire.FileID, seq uint32, off, n uint64, flags uint32) uint32 {
	t.Helper()
	b := withFileID(48, 24, 8, fid)
	le.PutUint16(b[2:], 1)
	le.PutUint32(b[4:], seq)
	b = le.AppendUint64(b, off)
	b = le.AppendUint64(b, n)
	b = le.AppendUint32(b, flags)
	b = le.AppendUint32(b, 0)
	h, _, err := c.Do(wire.Lock, b)
	if err != nil {
		t.Fatal(err)
	}
	return h.Status
}

// requestResiliency sends FSCTL_LMR_REQUEST_RESILIENCY with input in.
func requestResiliency(t *testing.T, c *smbtest.Client, fid wire.FileID, in []byte) uint32 {
	t.Helper()
	b := withFileID(57, 56, 8, fid)
	le.PutUint32(b[4:], fsctlLmrRequestResiliency)
	le.PutUint32(b[24:], wire.HeaderSize+56)
	le.PutUint32(b[28:], uint32(len(in)))
	le.PutUint32(b[48:], 1) // SMB2_0_IOCTL_IS_FSCTL
	h, _, err := c.Do(wire.Ioctl, append(b, in...))
	if err != nil {
		t.Fatal(err)
	}
	return h.Status
}

// openRW opens r.txt for reading and writing on c with disposition and
// returns its file id.
func openRW(t *testing.T, c *smbtest.Client, disposition uint32) wire.FileID {
	t.Helper()
	fid, st := c.Create("r.txt", FileReadData|FileWriteData, 7, disposition, 0)
	if st != 0 {
		t.Fatalf("open r.txt: %#x", st)
	}
	return fid
}

func resiliencyRequest(ms uint32) []byte { return le.AppendUint32(le.AppendUint32(nil, ms), 0) }

const (
	lockExclusiveNow = 0x02 | 0x10 // EXCLUSIVE | FAIL_IMMEDIATELY
	lockUnlock       = 0x04
)

// FSCTL_LMR_REQUEST_RESILIENCY makes an open resilient on SMB 2.1
// (MS-SMB2 3.3.5.15.9): a timeout above the server's maximum or a short
// request is INVALID_PARAMETER, and from then on a LOCK repeating the
// lock sequence number of its bucket's last success is a replay,
// answered with success and not run (smbtorture
// smb2.lock.replay_broken_windows).
func TestResilientOpenReplaysLockSequence(t *testing.T) {
	_, addr := startServer(t, newMemFS("share1"))
	c := dialTest(t, addr)
	fid := openRW(t, c, FileOpenIf)
	// Not resilient: the sequence number is not looked at.
	if st := lockSeq(t, c, fid, 0x11, 100, 100, lockExclusiveNow); st != 0 {
		t.Fatalf("lock: %#x", st)
	}
	if st := lockSeq(t, c, fid, 0x11, 100, 100, lockExclusiveNow); st != smbtest.StatusLockNotGranted {
		t.Fatalf("second lock before resiliency: %#x", st)
	}
	if st := lockSeq(t, c, fid, 0x11, 100, 100, lockUnlock); st != 0 {
		t.Fatalf("unlock: %#x", st)
	}
	if st := requestResiliency(t, c, fid, resiliencyRequest(1000)[:4]); st != statusInvalidParameter {
		t.Fatalf("short resiliency request: %#x", st)
	}
	if st := requestResiliency(t, c, fid, resiliencyRequest(uint32(maxResiliencyTimeout/time.Millisecond)+1)); st != statusInvalidParameter {
		t.Fatalf("timeout above the maximum: %#x", st)
	}
	if st := requestResiliency(t, c, fid, resiliencyRequest(1000)); st != 0 {
		t.Fatalf("resiliency request: %#x", st)
	}
	if st := lockSeq(t, c, fid, 0x11, 100, 100, lockExclusiveNow); st != 0 {
		t.Fatalf("lock: %#x", st)
	}
	// The replay and an unlock with the same number are not run.
	for _, flags := range []uint32{lockExclusiveNow, lockUnlock} {
		if st := lockSeq(t, c, fid, 0x11, 100, 100, flags); st != 0 {
			t.Fatalf("replay %#x: %#x", flags, st)
		}
	}
	if st := lockSeq(t, c, fid, 0x12, 100, 100, lockExclusiveNow); st != smbtest.StatusLockNotGranted {
		t.Fatalf("lock with a new number: %#x", st)
	}
	// Bucket 0 is not one: never a replay.
	if st := lockSeq(t, c, fid, 0x01, 100, 100, lockUnlock); st != 0 {
		t.Fatalf("unlock: %#x", st)
	}
	if st := lockSeq(t, c, fid, 0x01, 100, 100, lockUnlock); st != statusRangeNotLocked {
		t.Fatalf("second unlock: %#x", st)
	}
}

// A resilient open outlives its connection for its timeout, keeping its
// locks, and the same user takes it back with a durable reconnect (DHnC);
// once the timeout has passed it is gone.
func TestResilientOpenSurvivesConnectionLoss(t *testing.T) {
	s, addr := startServer(t, newMemFS("share1"))
	a := dialTest(t, addr)
	fid := openRW(t, a, FileOpenIf)
	if st := requestResiliency(t, a, fid, resiliencyRequest(300)); st != 0 {
		t.Fatalf("resiliency request: %#x", st)
	}
	if st := lockSeq(t, a, fid, 0, 0, 10, lockExclusiveNow); st != 0 {
		t.Fatalf("lock: %#x", st)
	}
	a.Close()
	waitConns(t, s, 0)
	b := dialTest(t, addr)
	other := openRW(t, b, FileOpen)
	if st := lockSeq(t, b, other, 0, 0, 10, lockExclusiveNow); st != smbtest.StatusLockNotGranted {
		t.Fatalf("lock over the lost connection's lock: %#x", st)
	}
	h, _, err := b.Do(wire.Create, reconnectBody("r.txt", fid))
	if err != nil || h.Status != 0 {
		t.Fatalf("reconnect: %v %#x", err, h.Status)
	}
	if st := lockSeq(t, b, fid, 0, 0, 10, lockUnlock); st != 0 {
		t.Fatalf("unlock through the reconnected open: %#x", st)
	}
	// Lost again: after its timeout the open and its locks are gone.
	if st := lockSeq(t, b, fid, 0, 20, 10, lockExclusiveNow); st != 0 {
		t.Fatalf("lock: %#x", st)
	}
	b.Close()
	waitConns(t, s, 0)
	c := dialTest(t, addr)
	other = openRW(t, c, FileOpen)
	deadline := time.Now().Add(5 * time.Second)
	for lockSeq(t, c, other, 0, 20, 10, lockExclusiveNow) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the resilient open's lock outlived its timeout")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if h, _, _ := c.Do(wire.Create, reconnectBody("r.txt", fid)); h.Status != statusObjectNameNotFound {
		t.Fatalf("reconnect after the timeout: %#x", h.Status)
	}
}

// reconnectBody is a CREATE of path carrying DHnC for fid.
func reconnectBody(path string, fid wire.FileID) []byte {
	b := smbtest.CreateBody(path, FileReadData, 7, FileOpen, 0)
	for len(b)%8 != 0 {
		b = append(b, 0)
	}
	ctx := make([]byte, 24)
	le.PutUint16(ctx[4:], 16) // NameOffset
	le.PutUint16(ctx[6:], 4)  // NameLength
	le.PutUint16(ctx[10:], 24)
	le.PutUint32(ctx[12:], 16) // DataLength
	copy(ctx[16:], "DHnC")
	ctx = le.AppendUint64(ctx, fid.Persistent)
	ctx = le.AppendUint64(ctx, fid.Volatile)
	le.PutUint32(b[48:], uint32(wire.HeaderSize+len(b)))
	le.PutUint32(b[52:], uint32(len(ctx)))
	return append(b, ctx...)
}

// A client that lost its connection reconnects at once, before the
// server has read the end of the old connection (its reader is slow to
// run under load): the reconnect waits for the old connection to end and
// park the open, and takes it back, rather than finding nothing
// (smbtorture smb2.durable-v2-open.reopen2-lease under load).
func TestReconnectBeforeTheLostConnectionEnds(t *testing.T) {
	_, addr := startServer(t, newMemFS("share1"))
	slow := func() { time.Sleep(100 * time.Millisecond) }
	testHookConnLost.Store(&slow)
	t.Cleanup(func() { testHookConnLost.Store(nil) })
	a := dialTest(t, addr)
	fid, st := a.Create("r.txt", FileReadData|FileWriteData, 7, FileOpenIf, 0)
	if st != 0 {
		t.Fatalf("create: %#x", st)
	}
	if st := requestResiliency(t, a, fid, resiliencyRequest(5000)); st != 0 {
		t.Fatalf("resiliency request: %#x", st)
	}
	b := dialTest(t, addr)
	a.Close()
	h, _, err := b.Do(wire.Create, reconnectBody("r.txt", fid))
	if err != nil || h.Status != 0 {
		t.Fatalf("reconnect: %v %#x", err, h.Status)
	}
	if st := lockSeq(t, b, fid, 0, 0, 10, lockExclusiveNow); st != 0 {
		t.Fatalf("lock through the reconnected open: %#x", st)
	}
}

package smb_test

import (
	"testing"

	"github.com/lazuli-storage/lazuli/emulator"
	"github.com/lazuli-storage/lazuli/internal/smb/smbtest"
	"github.com/lazuli-storage/lazuli/internal/smb/wire"
)

// TestLockSequenceReplay: on a durable open (SMB 3), a LOCK whose
// LockSequence names a bucket (1 to 64) and the number of the last LOCK
// that succeeded in it is a replay of that one, answered with success and
// not run again (MS-SMB2 3.3.5.14; smbtorture
// smb2.lock.replay_smb3_specification_durable); a failed LOCK leaves the
// bucket empty; bucket 0 is no bucket. The server offers multichannel,
// so a plain SMB 3 open is checked too (smbtorture
// smb2.lock.replay_smb3_specification_multi); a plain SMB 2.1 open is not.
func TestLockSequenceReplay(t *testing.T) {
	engines(t, func(t *testing.T, e *env) {
		e.createFile(t, "seq.txt", nil)
		// SMB 3.0.2: lock sequences are an SMB 3 matter.
		c, err := smbtest.DialDialect(e.em.SMBAddr(), emulator.Account, emulator.Key, wire.Dialect302)
		must(t, err)
		t.Cleanup(func() { c.Close() })
		must(t, c.TreeConnect(e.name))
		g := create(t, c, withContexts(createBody("seq.txt", readData|writeData, 0, oplockBatch),
			createContext{"DHnQ", make([]byte, 16)}))
		if g.status != 0 || g.contexts["DHnQ"] == nil {
			t.Fatalf("durable open: %#x %v", g.status, g.contexts)
		}
		lockOn := func(c *smbtest.Client, fid wire.FileID, seq uint32, flags uint64) uint32 {
			b := lockBody(fid, [3]uint64{100, 100, flags})
			le.PutUint32(b[4:], seq)
			h, _, err := c.Do(wire.Lock, b)
			must(t, err)
			return h.Status
		}
		lock := func(fid wire.FileID, seq uint32, flags uint64) uint32 { return lockOn(c, fid, seq, flags) }
		ex, un := uint64(wire.LockExclusive|wire.LockFailImmediately), uint64(wire.LockUnlock)
		steps := []struct {
			name  string
			seq   uint32
			flags uint64
			want  uint32
		}{
			{"bucket 0 lock", 0x01, ex, 0},
			{"bucket 0 lock again", 0x01, ex, smbtest.StatusLockNotGranted},
			{"bucket 0 unlock", 0x01, un, 0},
			{"bucket 1 lock", 0x11, ex, 0},
			{"its replay", 0x11, ex, 0},
			{"an unlock with its number (a replay)", 0x11, un, 0},
			{"a lock with another number", 0x12, ex, smbtest.StatusLockNotGranted},
			{"again: the failure was not recorded", 0x12, ex, smbtest.StatusLockNotGranted},
			{"an unlock with a new number", 0x13, un, 0},
			{"the range is unlocked", 0x14, un, statusRangeNotLocked},
		}
		for _, s := range steps {
			if st := lock(g.fid, s.seq, s.flags); st != s.want {
				t.Fatalf("%s (sequence %#x): %#x, want %#x", s.name, s.seq, st, s.want)
			}
		}
		plain, _ := c.Create("plain.txt", readData|writeData, shareR|shareW|shareD, openIf, nonDir)
		if st := lock(plain, 0x11, ex); st != 0 {
			t.Fatalf("lock: %#x", st)
		}
		if st := lock(plain, 0x11, ex); st != 0 {
			t.Fatalf("the same LOCK again on a plain SMB 3 open (a replay): %#x, want success", st)
		}
		if st := lock(plain, 0x12, ex); st != smbtest.StatusLockNotGranted {
			t.Fatalf("another LOCK of the range on a plain SMB 3 open: %#x, want LOCK_NOT_GRANTED", st)
		}
		old, err := smbtest.Dial(e.em.SMBAddr(), emulator.Account, emulator.Key) // SMB 2.1
		must(t, err)
		t.Cleanup(func() { old.Close() })
		must(t, old.TreeConnect(e.name))
		plain21, _ := old.Create("plain21.txt", readData|writeData, shareR|shareW|shareD, openIf, nonDir)
		if st := lockOn(old, plain21, 0x11, ex); st != 0 {
			t.Fatalf("lock over SMB 2.1: %#x", st)
		}
		if st := lockOn(old, plain21, 0x11, ex); st != smbtest.StatusLockNotGranted {
			t.Fatalf("the same LOCK again on a plain SMB 2.1 open: %#x, want LOCK_NOT_GRANTED", st)
		}
	})
}

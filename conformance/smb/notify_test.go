package smb_test

import (
	"strconv"
	"testing"
	"unicode/utf16"

	"github.com/lazuli-storage/lazuli/internal/smb/smbtest"
	"github.com/lazuli-storage/lazuli/internal/smb/wire"
)

// CHANGE_NOTIFY completion filter bits, actions and statuses.
const (
	notifyFileName   = 0x1
	notifyDirName    = 0x2
	notifyAttributes = 0x4
	notifySize       = 0x8
	notifyLastWrite  = 0x10
	watchTree        = 1

	actionAdded    = 1
	actionRemoved  = 2
	actionModified = 3
	actionOldName  = 4
	actionNewName  = 5

	statusCancelled     = smbtest.StatusCancelled
	statusNotifyCleanup = 0x0000010B
	statusNotifyEnumDir = 0x0000010C
)

type change struct {
	action uint32
	name   string
}

// notifyBody is a CHANGE_NOTIFY request.
func notifyBody(fid wire.FileID, flags uint16, size, filter uint32) []byte {
	b := make([]byte, 32)
	le.PutUint16(b, 32)
	le.PutUint16(b[2:], flags)
	le.PutUint32(b[4:], size)
	le.PutUint64(b[8:], fid.Persistent)
	le.PutUint64(b[16:], fid.Volatile)
	le.PutUint32(b[24:], filter)
	return b
}

// sendNotify sends a CHANGE_NOTIFY and returns its message id and async
// id once the server answered STATUS_PENDING.
func sendNotify(t *testing.T, c *smbtest.Client, fid wire.FileID, flags uint16, size, filter uint32) (uint64, uint64) {
	t.Helper()
	mid, err := c.Send(wire.ChangeNotify, notifyBody(fid, flags, size, filter))
	must(t, err)
	h, _, err := c.Recv()
	must(t, err)
	if h.MessageID != mid || h.Status != smbtest.StatusPending || h.Flags&wire.FlagAsync == 0 {
		t.Fatalf("CHANGE_NOTIFY: %#x (message %d), want an interim STATUS_PENDING", h.Status, h.MessageID)
	}
	return mid, h.AsyncID
}

// notifyNow sends a CHANGE_NOTIFY that changes already wait for and
// returns its answer, which must come at once (no STATUS_PENDING).
func notifyNow(t *testing.T, c *smbtest.Client, fid wire.FileID, flags uint16, size, filter uint32) (uint32, []change) {
	t.Helper()
	mid, err := c.Send(wire.ChangeNotify, notifyBody(fid, flags, size, filter))
	must(t, err)
	h, b, err := c.Recv()
	must(t, err)
	if h.MessageID != mid || h.Flags&wire.FlagAsync != 0 {
		t.Fatalf("CHANGE_NOTIFY with changes kept: %#x (message %d, flags %#x), want a synchronous answer", h.Status, h.MessageID, h.Flags)
	}
	return decodeChanges(h.Status, b)
}

// changes reads the final response of a CHANGE_NOTIFY: its status and the
// FILE_NOTIFY_INFORMATION entries.
func changes(t *testing.T, c *smbtest.Client, mid uint64) (uint32, []change) {
	t.Helper()
	h, b, err := c.Wait(mid)
	must(t, err)
	return decodeChanges(h.Status, b)
}

// decodeChanges reads the status and FILE_NOTIFY_INFORMATION entries of a
// CHANGE_NOTIFY response message b.
func decodeChanges(status uint32, b []byte) (uint32, []change) {
	if status != 0 {
		return status, nil
	}
	r := b[wire.HeaderSize:]
	off, n := le.Uint16(r[2:]), le.Uint32(r[4:])
	buf := b[off : uint32(off)+n]
	var out []change
	for len(buf) >= 12 {
		next, l := le.Uint32(buf), le.Uint32(buf[8:])
		u := make([]uint16, l/2)
		for i := range u {
			u[i] = le.Uint16(buf[12+2*i:])
		}
		out = append(out, change{le.Uint32(buf[4:]), string(utf16.Decode(u))})
		if next == 0 {
			break
		}
		buf = buf[next:]
	}
	return 0, out
}

func wantChanges(t *testing.T, what string, st uint32, got []change, want ...change) {
	t.Helper()
	if st != 0 || len(got) != len(want) {
		t.Fatalf("%s: status %#x, changes %v, want %v", what, st, got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%s: changes %v, want %v", what, got, want)
		}
	}
}

// TestChangeNotifySeesRESTAndSMB: a CHANGE_NOTIFY on a directory completes
// with the changes made below it over REST (create, set properties,
// rename, delete, in a subdirectory for a tree watch) as over SMB.
func TestChangeNotifySeesRESTAndSMB(t *testing.T) {
	engines(t, func(t *testing.T, e *env) {
		dir := e.share.NewDirectoryClient("d")
		_, err := dir.Create(ctx(t), nil)
		must(t, err)
		c, other := e.smb(t), e.smb(t)
		d, st := c.Create("d", readData, shareR|shareW|shareD, openOnly, dirFile)
		if st != 0 {
			t.Fatalf("open d: %#x", st)
		}
		all := uint32(notifyFileName | notifyDirName | notifyAttributes | notifySize | notifyLastWrite)

		mid, _ := sendNotify(t, c, d, watchTree, 4096, all)
		f := dir.NewFileClient("a.txt")
		_, err = f.Create(ctx(t), 0, nil)
		must(t, err)
		st, got := changes(t, c, mid)
		wantChanges(t, "REST Create File", st, got, change{actionAdded, "a.txt"})

		// Changes made while no request waits are kept for the next one.
		_, err = f.Resize(ctx(t), 100, nil)
		must(t, err)
		_, err = dir.NewSubdirectoryClient("s").Create(ctx(t), nil)
		must(t, err)
		_, err = dir.NewSubdirectoryClient("s").NewFileClient("b.txt").Create(ctx(t), 0, nil)
		must(t, err)
		// A request finding changes kept is answered at once, without
		// going asynchronous, as Windows and Samba answer it: a change
		// made after the answer can never slip into it.
		st, got = notifyNow(t, c, d, watchTree, 4096, all)
		wantChanges(t, "buffered REST changes", st, got, change{actionModified, "a.txt"},
			change{actionAdded, "s"}, change{actionAdded, `s\b.txt`})

		mid, _ = sendNotify(t, c, d, watchTree, 4096, all)
		_, err = f.Rename(ctx(t), "d/c.txt", nil)
		must(t, err)
		st, got = changes(t, c, mid)
		wantChanges(t, "REST Rename File", st, got, change{actionOldName, "a.txt"}, change{actionNewName, "c.txt"})

		// SMB: a create and writes, reported at close.
		mid, _ = sendNotify(t, c, d, watchTree, 4096, all)
		w, st := other.Create(`d\w.txt`, readData|writeData, shareR|shareW|shareD, 2, nonDir)
		if st != 0 {
			t.Fatalf("create d\\w.txt: %#x", st)
		}
		st, got = changes(t, c, mid)
		wantChanges(t, "SMB create", st, got, change{actionAdded, "w.txt"})
		mid, _ = sendNotify(t, c, d, watchTree, 4096, all)
		if st := other.Write(w, 0, []byte("hello")); st != 0 {
			t.Fatalf("write: %#x", st)
		}
		if st := other.CloseFile(w); st != 0 {
			t.Fatalf("close: %#x", st)
		}
		st, got = changes(t, c, mid)
		wantChanges(t, "SMB write then close", st, got, change{actionModified, "w.txt"})

		mid, _ = sendNotify(t, c, d, watchTree, 4096, all)
		_, err = dir.NewFileClient("c.txt").Delete(ctx(t), nil)
		must(t, err)
		st, got = changes(t, c, mid)
		wantChanges(t, "REST Delete File", st, got, change{actionRemoved, "c.txt"})
	})
}

// TestChangeNotifyEnds: CANCEL answers a waiting CHANGE_NOTIFY
// STATUS_CANCELLED, CLOSE of its handle STATUS_NOTIFY_CLEANUP; changes
// beyond the buffer of the open's first request answer
// STATUS_NOTIFY_ENUM_DIR; a file handle cannot be watched.
func TestChangeNotifyEnds(t *testing.T) {
	engines(t, func(t *testing.T, e *env) {
		c := e.smb(t)
		d, st := c.Create("d2", readData, shareR|shareW|shareD, openIf, dirFile)
		if st != 0 {
			t.Fatalf("create d2: %#x", st)
		}
		mid, async := sendNotify(t, c, d, 0, 200, notifyFileName)
		must(t, c.SendRaw(wire.Cancel, []byte{4, 0, 0, 0}, mid, async))
		if st, _ := changes(t, c, mid); st != statusCancelled {
			t.Fatalf("cancelled CHANGE_NOTIFY: %#x", st)
		}
		// The watch stays: these are kept, more than 200 bytes of them.
		for i := range 10 {
			_, err := e.share.NewDirectoryClient("d2").NewFileClient("file-with-a-long-name-"+string(rune('a'+i))).Create(ctx(t), 0, nil)
			must(t, err)
		}
		if st, got := notifyNow(t, c, d, 0, 4096, notifyFileName); st != statusNotifyEnumDir {
			t.Fatalf("overflowed CHANGE_NOTIFY: %#x %v", st, got)
		}
		mid, _ = sendNotify(t, c, d, 0, 4096, notifyFileName)
		cb := make([]byte, 24)
		le.PutUint16(cb, 24)
		le.PutUint64(cb[8:], d.Persistent)
		le.PutUint64(cb[16:], d.Volatile)
		cmid, err := c.Send(wire.Close, cb)
		must(t, err)
		// Both answers come, in either order.
		got := map[uint64]uint32{}
		for len(got) < 2 {
			h, _, err := c.Recv()
			must(t, err)
			got[h.MessageID] = h.Status
		}
		if got[cmid] != 0 || got[mid] != statusNotifyCleanup {
			t.Fatalf("CLOSE: %#x, its CHANGE_NOTIFY: %#x, want success and STATUS_NOTIFY_CLEANUP", got[cmid], got[mid])
		}

		fid, st := c.Create("plain.txt", readData|writeData, shareR|shareW|shareD, openIf, nonDir)
		if st != 0 {
			t.Fatalf("create plain.txt: %#x", st)
		}
		if h, _, err := c.Do(wire.ChangeNotify, notifyBody(fid, 0, 4096, notifyFileName)); err != nil || h.Status != 0xC000000D {
			t.Fatalf("CHANGE_NOTIFY on a file: %#x %v", h.Status, err)
		}
	})
}

// TestChangeNotifyConcurrentCreates: files created at once over REST from
// many goroutines are each reported once, whatever the interleaving with
// the CHANGE_NOTIFY requests collecting them.
func TestChangeNotifyConcurrentCreates(t *testing.T) {
	engines(t, func(t *testing.T, e *env) {
		c := e.smb(t)
		d, st := c.Create("cc", readData, shareR|shareW|shareD, openIf, dirFile)
		if st != 0 {
			t.Fatalf("create cc: %#x", st)
		}
		const n = 24
		mid, _ := sendNotify(t, c, d, 0, 1<<16, notifyFileName)
		errs := make(chan error, n)
		c0 := ctx(t)
		for i := range n {
			go func() {
				_, err := e.share.NewDirectoryClient("cc").NewFileClient("f"+strconv.Itoa(i)).Create(c0, 0, nil)
				errs <- err
			}()
		}
		for range n {
			must(t, <-errs)
		}
		seen := map[string]int{}
		for {
			st, got := changes(t, c, mid)
			if st != 0 {
				t.Fatalf("CHANGE_NOTIFY: %#x", st)
			}
			for _, ch := range got {
				if ch.action != actionAdded {
					t.Fatalf("change %v, want only additions", ch)
				}
				seen[ch.name]++
			}
			if len(seen) == n {
				break
			}
			// Answered at once when changes wait, later otherwise.
			var err error
			mid, err = c.Send(wire.ChangeNotify, notifyBody(d, 0, 1<<16, notifyFileName))
			must(t, err)
		}
		for name, k := range seen {
			if k != 1 {
				t.Fatalf("%s reported %d times", name, k)
			}
		}
	})
}

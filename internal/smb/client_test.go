package smb

import (
	"bytes"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/smb/smbtest"
	"github.com/lazuli-storage/lazuli/internal/smb/wire"
)

func dialTest(t *testing.T, addr string) *smbtest.Client {
	t.Helper()
	c, err := smbtest.Dial(addr, testAccount, testKey)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.TreeConnect("share1"); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestGoClientWrongKey(t *testing.T) {
	_, addr := startServer(t, newMemFS("share1"))
	_, err := smbtest.Dial(addr, testAccount, "not-the-key")
	var se smbtest.StatusError
	if !errors.As(err, &se) || uint32(se) != statusLogonFailure {
		t.Fatalf("wrong key: %v", err)
	}
}

func TestGoClientReadWriteAndWaitingLockCancelled(t *testing.T) {
	_, addr := startServer(t, newMemFS("share1"))
	a, b := dialTest(t, addr), dialTest(t, addr)
	rw := FileReadData | FileWriteData
	fa, st := a.Create("f.txt", rw, 3, FileOpenIf, 0)
	if st != 0 {
		t.Fatalf("create: %#x", st)
	}
	if st := a.Write(fa, 0, []byte("hello world")); st != 0 {
		t.Fatalf("write: %#x", st)
	}
	fb, st := b.Create("F.TXT", rw, 3, FileOpen, 0)
	if st != 0 {
		t.Fatalf("open: %#x", st)
	}
	if got, st := b.Read(fb, 6, 100); st != 0 || !bytes.Equal(got, []byte("world")) {
		t.Fatalf("read: %q %#x", got, st)
	}
	if st := a.Lock(fa, 0, 5, wire.LockExclusive); st != 0 {
		t.Fatalf("lock: %#x", st)
	}
	// A waiting lock goes async; CANCEL ends it with STATUS_CANCELLED.
	body := make([]byte, 24)
	le.PutUint16(body, 48)
	le.PutUint16(body[2:], 1)
	le.PutUint64(body[8:], fb.Persistent)
	le.PutUint64(body[16:], fb.Volatile)
	body = le.AppendUint64(le.AppendUint64(body, 0), 5)
	body = le.AppendUint64(le.AppendUint32(body, wire.LockExclusive), 0)[:48]
	mid, _ := b.Send(wire.Lock, body)
	h, _, err := b.Recv()
	if err != nil || h.Status != smbtest.StatusPending || h.Flags&wire.FlagAsync == 0 {
		t.Fatalf("interim: %#x %v", h.Status, err)
	}
	time.Sleep(50 * time.Millisecond)
	b.SendRaw(wire.Cancel, []byte{4, 0, 0, 0}, mid, h.AsyncID)
	h, _, err = b.Recv()
	if err != nil || h.Status != smbtest.StatusCancelled || h.MessageID != mid {
		t.Fatalf("cancelled lock: %#x %v", h.Status, err)
	}
}

func startLimited(t *testing.T, cfg Config) string {
	cfg.Backend = newMemFS("share1")
	cfg.Passwords = func(string) ([]string, bool) { return []string{testKey}, true }
	s := New(cfg)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(ln)
	t.Cleanup(func() { s.Close() })
	return ln.Addr().String()
}

func TestOpensPerSessionBounded(t *testing.T) {
	c := dialTest(t, startLimited(t, Config{MaxOpensPerSession: 3}))
	for i := 0; i < 3; i++ {
		if _, st := c.Create("f"+string(rune('a'+i)), FileReadData, 7, FileOpenIf, 0); st != 0 {
			t.Fatalf("open %d: %#x", i, st)
		}
	}
	if _, st := c.Create("g", FileReadData, 7, FileOpenIf, 0); st != statusInsufficientResources {
		t.Fatalf("open past the bound: %#x, want STATUS_INSUFFICIENT_RESOURCES", st)
	}
}

func TestPendingLocksPerConnectionBounded(t *testing.T) {
	addr := startLimited(t, Config{MaxAsyncPerConn: 2})
	a, b := dialTest(t, addr), dialTest(t, addr)
	fa, _ := a.Create("f", FileReadData|FileWriteData, 7, FileOpenIf, 0)
	fb, _ := b.Create("f", FileReadData|FileWriteData, 7, FileOpenIf, 0)
	if st := a.Lock(fa, 0, 100, wire.LockExclusive); st != 0 {
		t.Fatalf("lock: %#x", st)
	}
	lockBody := func(off uint64) []byte {
		body := make([]byte, 24)
		le.PutUint16(body, 48)
		le.PutUint16(body[2:], 1)
		le.PutUint64(body[8:], fb.Persistent)
		le.PutUint64(body[16:], fb.Volatile)
		body = le.AppendUint64(le.AppendUint64(body, off), 1)
		return le.AppendUint32(le.AppendUint32(body, wire.LockExclusive), 0)
	}
	for i := 0; i < 2; i++ {
		b.Send(wire.Lock, lockBody(uint64(i)))
		if h, _, err := b.Recv(); err != nil || h.Status != smbtest.StatusPending {
			t.Fatalf("waiting lock %d: %#x %v", i, h.Status, err)
		}
	}
	b.Send(wire.Lock, lockBody(5))
	if h, _, err := b.Recv(); err != nil || h.Status != statusInsufficientResources {
		t.Fatalf("third waiting lock: %#x %v", h.Status, err)
	}
	// Closing the connection ends the waiting locks (no goroutine leaks:
	// the server's Close waits for them).
	b.Close()
}

func readBody(fid wire.FileID, off uint64, n uint32) []byte {
	b := make([]byte, 49)
	le.PutUint16(b, 49)
	le.PutUint32(b[4:], n)
	le.PutUint64(b[8:], off)
	le.PutUint64(b[16:], fid.Persistent)
	le.PutUint64(b[24:], fid.Volatile)
	return b
}

// TestCreditChargeAndLengthsChecked: a READ whose credit charge does not
// cover its length, a READ beyond the largest size and a WRITE whose
// length runs past the message get STATUS_INVALID_PARAMETER; the
// connection stays usable.
func TestCreditChargeAndLengthsChecked(t *testing.T) {
	_, addr := startServer(t, newMemFS("share1"))
	c := dialTest(t, addr)
	fid, st := c.Create("f", FileReadData|FileWriteData, 7, FileOpenIf, 0)
	if st != 0 {
		t.Fatalf("create: %#x", st)
	}
	mid, _ := c.SendCharged(wire.Read, readBody(fid, 0, 1<<20), 1)
	if h, _, err := c.Wait(mid); err != nil || h.Status != statusInvalidParameter {
		t.Fatalf("READ of 1 MiB charged 1 credit: %#x %v", h.Status, err)
	}
	mid, _ = c.SendCharged(wire.Read, readBody(fid, 0, 1<<30), 32)
	if h, _, err := c.Wait(mid); err != nil || h.Status != statusInvalidParameter {
		t.Fatalf("READ of 1 GiB: %#x %v", h.Status, err)
	}
	w := make([]byte, 48)
	le.PutUint16(w, 49)
	le.PutUint16(w[2:], wire.HeaderSize+48)
	le.PutUint32(w[4:], 0xFFFFFFF0)
	le.PutUint64(w[16:], fid.Persistent)
	le.PutUint64(w[24:], fid.Volatile)
	if h, _, err := c.Do(wire.Write, append(w, "short"...)); err != nil || h.Status != statusInvalidParameter {
		t.Fatalf("WRITE announcing 4 GiB: %#x %v", h.Status, err)
	}
	if st := c.Write(fid, 0, []byte("still fine")); st != 0 {
		t.Fatalf("write afterwards: %#x", st)
	}
}

// TestLogoffAndTreeDisconnectCloseOpens: the opens of a tree or session
// end with it (their share access no longer blocks others), and the
// session's id is no longer accepted.
func TestLogoffAndTreeDisconnectCloseOpens(t *testing.T) {
	_, addr := startServer(t, newMemFS("share1"))
	a, b := dialTest(t, addr), dialTest(t, addr)
	if _, st := a.Create("f", FileReadData, 0, FileOpenIf, 0); st != 0 {
		t.Fatalf("create: %#x", st)
	}
	if _, st := b.Create("f", FileReadData, 7, FileOpen, 0); st != statusSharingViolation {
		t.Fatalf("open against an unshared open: %#x", st)
	}
	if h, _, err := a.Do(wire.TreeDisconnect, []byte{4, 0, 0, 0}); err != nil || h.Status != 0 {
		t.Fatalf("tree disconnect: %#x %v", h.Status, err)
	}
	fid, st := b.Create("f", FileReadData, 0, FileOpen, 0)
	if st != 0 {
		t.Fatalf("open after the tree disconnect: %#x", st)
	}
	if h, _, err := b.Do(wire.Logoff, []byte{4, 0, 0, 0}); err != nil || h.Status != 0 {
		t.Fatalf("logoff: %#x %v", h.Status, err)
	}
	if _, st := b.Read(fid, 0, 1); st != statusUserSessionDeleted {
		t.Fatalf("request after logoff: %#x", st)
	}
	if _, st := dialTest(t, addr).Create("f", FileReadData, 0, FileOpen, 0); st != 0 {
		t.Fatalf("open after the logoff: %#x", st)
	}
}

// withFileID is a request body of n bytes (structure size size) with a
// FileId at at; the zero FileID stands for the all-ones one of related
// requests.
func withFileID(size uint16, n, at int, fid wire.FileID) []byte {
	b := make([]byte, n)
	le.PutUint16(b, size)
	if fid == (wire.FileID{}) {
		fid = wire.FileID{Persistent: ^uint64(0), Volatile: ^uint64(0)}
	}
	le.PutUint64(b[at:], fid.Persistent)
	le.PutUint64(b[at+8:], fid.Volatile)
	return b
}

func writeBody(fid wire.FileID, off uint64, data []byte) []byte {
	b := withFileID(49, 48, 16, fid)
	le.PutUint16(b[2:], wire.HeaderSize+48)
	le.PutUint32(b[4:], uint32(len(data)))
	le.PutUint64(b[8:], off)
	return append(b, data...)
}

// closeBody asks for the attributes after the close (post-query).
func closeBody(fid wire.FileID) []byte {
	b := withFileID(24, 24, 8, fid)
	le.PutUint16(b[2:], 1) // SMB2_CLOSE_FLAG_POSTQUERY_ATTRIB
	return b
}

// TestCompoundingAndSimpleCommands: a related CREATE, WRITE and CLOSE in
// one frame act on the file the CREATE opened, and the CLOSE returns the
// attributes after the write; when the CREATE of a related chain fails,
// the requests after it fail with its status; unrelated requests in one
// frame each stand alone; FLUSH and ECHO succeed; CHANGE_NOTIFY and an
// IOCTL other than FSCTL_VALIDATE_NEGOTIATE_INFO answer
// STATUS_NOT_SUPPORTED.
func TestCompoundingAndSimpleCommands(t *testing.T) {
	_, addr := startServer(t, newMemFS("share1"))
	c := dialTest(t, addr)
	rw := FileReadData | FileWriteData | FileReadAttributes
	hs, msgs, err := c.Compound(true, []uint16{wire.Create, wire.Write, wire.Close}, [][]byte{
		smbtest.CreateBody("c.txt", rw, 7, FileOpenIf, FileNonDirectoryFile), writeBody(wire.FileID{}, 0, []byte("compound")), closeBody(wire.FileID{})})
	if err != nil {
		t.Fatal(err)
	}
	for i, h := range hs {
		if h.Status != 0 {
			t.Fatalf("related chain, request %d (command %d): %#x", i, h.Command, h.Status)
		}
	}
	cl := msgs[2][wire.HeaderSize:]
	if le.Uint16(cl[2:]) != 1 || le.Uint64(cl[48:]) != 8 || le.Uint32(cl[56:])&AttrArchive == 0 {
		t.Fatalf("CLOSE post-query: flags %d, end of file %d, attributes %#x", le.Uint16(cl[2:]), le.Uint64(cl[48:]), le.Uint32(cl[56:]))
	}

	hs, _, err = c.Compound(true, []uint16{wire.Create, wire.Write, wire.Close}, [][]byte{
		smbtest.CreateBody("missing.txt", rw, 7, FileOpen, FileNonDirectoryFile), writeBody(wire.FileID{}, 0, []byte("x")), closeBody(wire.FileID{})})
	if err != nil {
		t.Fatal(err)
	}
	for i, h := range hs {
		if h.Status != smbtest.StatusNotFound {
			t.Fatalf("failed related chain, request %d: %#x, want the CREATE's STATUS_OBJECT_NAME_NOT_FOUND", i, h.Status)
		}
	}

	hs, msgs, err = c.Compound(false, []uint16{wire.Create, wire.Create}, [][]byte{
		smbtest.CreateBody("c.txt", FileReadData, 7, FileOpen, 0), smbtest.CreateBody("nope.txt", FileReadData, 7, FileOpen, 0)})
	if err != nil {
		t.Fatal(err)
	}
	if hs[0].Status != 0 || hs[1].Status != smbtest.StatusNotFound {
		t.Fatalf("unrelated CREATEs: %#x, %#x", hs[0].Status, hs[1].Status)
	}
	r := msgs[0][wire.HeaderSize:]
	fid := wire.FileID{Persistent: le.Uint64(r[64:]), Volatile: le.Uint64(r[72:])}

	if h, _, err := c.Do(wire.Flush, withFileID(24, 24, 8, fid)); err != nil || h.Status != 0 {
		t.Fatalf("FLUSH: %#x %v", h.Status, err)
	}
	if h, _, err := c.Do(wire.Echo, []byte{4, 0, 0, 0}); err != nil || h.Status != 0 {
		t.Fatalf("ECHO: %#x %v", h.Status, err)
	}
	notify := withFileID(32, 32, 8, fid)
	le.PutUint32(notify[4:], 4096)
	le.PutUint32(notify[24:], 0x17)
	if h, _, err := c.Do(wire.ChangeNotify, notify); err != nil || h.Status != statusNotSupported {
		t.Fatalf("CHANGE_NOTIFY: %#x %v", h.Status, err)
	}
	ioctl := withFileID(57, 56, 8, fid)
	le.PutUint32(ioctl[4:], 0x00144064) // FSCTL_SRV_ENUMERATE_SNAPSHOTS
	le.PutUint32(ioctl[24:], wire.HeaderSize+56)
	le.PutUint32(ioctl[36:], wire.HeaderSize+56)
	le.PutUint32(ioctl[44:], 4096)
	le.PutUint32(ioctl[48:], 1) // SMB2_0_IOCTL_IS_FSCTL
	if h, _, err := c.Do(wire.Ioctl, ioctl); err != nil || h.Status != statusNotSupported {
		t.Fatalf("IOCTL FSCTL_SRV_ENUMERATE_SNAPSHOTS: %#x %v", h.Status, err)
	}
	if st := c.CloseFile(fid); st != 0 {
		t.Fatalf("close: %#x", st)
	}
}

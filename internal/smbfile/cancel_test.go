package smbfile

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/cluster"
	"github.com/lazuli-storage/lazuli/internal/engine/memstore"
	"github.com/lazuli-storage/lazuli/internal/file"
	"github.com/lazuli-storage/lazuli/internal/smb"
	"github.com/lazuli-storage/lazuli/internal/smb/smbtest"
	"github.com/lazuli-storage/lazuli/internal/smb/wire"
	"github.com/lazuli-storage/lazuli/storage"
)

var le = binary.LittleEndian

// serveShare serves share "share" of account acct (key "key") over SMB on
// the File service over eng, and returns the address and the service.
func serveShare(t testing.TB, eng storage.Engine) (string, *file.Service) {
	t.Helper()
	t.Cleanup(func() { eng.Close() })
	svc := file.New(eng, time.Now, func() string { return fmt.Sprint(time.Now().UnixNano()) })
	ctx := context.Background()
	if _, err := svc.CreateShare(ctx, file.CreateShareRequest{Ref: file.ShareRef{Account: "acct", Name: "share"}}); err != nil {
		t.Fatal(err)
	}
	mem := cluster.New(eng, cluster.Config{Holder: svc})
	if err := mem.Join(ctx, true); err != nil {
		t.Fatal(err)
	}
	srv := smb.New(smb.Config{Backend: New(svc, mem), Passwords: func(string) ([]string, bool) { return []string{"key"}, true }})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String(), svc
}

// logon connects as client guid (leases belong to a client).
func logon(t *testing.T, addr string, guid byte) *smbtest.Client {
	t.Helper()
	c, err := smbtest.DialGUID(addr, "acct", "key", wire.Dialect210, [16]byte{guid})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.TreeConnect("share"); err != nil {
		t.Fatal(err)
	}
	return c
}

// leaseCreate is a CREATE asking for a lease (v1) in state on key.
func leaseCreate(path string, access, disposition uint32, key byte, state uint32) []byte {
	b := smbtest.CreateBody(path, access, smb.FileShareRead|smb.FileShareWrite|smb.FileShareDelete, disposition, 0)
	b[3] = 0xFF // SMB2_OPLOCK_LEVEL_LEASE
	for (wire.HeaderSize+len(b))%8 != 0 {
		b = append(b, 0)
	}
	off := wire.HeaderSize + len(b)
	ctx := make([]byte, 24, 56)
	le.PutUint16(ctx[4:], 16) // NameOffset
	le.PutUint16(ctx[6:], 4)  // NameLength
	le.PutUint16(ctx[10:], 24)
	le.PutUint32(ctx[12:], 32) // DataLength
	copy(ctx[16:], "RqLs")
	data := make([]byte, 32)
	data[0] = key
	le.PutUint32(data[16:], state)
	ctx = append(ctx, data...)
	le.PutUint32(b[48:], uint32(off))
	le.PutUint32(b[52:], uint32(len(ctx)))
	return append(b, ctx...)
}

func fileID(resp []byte) wire.FileID {
	r := resp[wire.HeaderSize:]
	return wire.FileID{Persistent: le.Uint64(r[64:]), Volatile: le.Uint64(r[72:])}
}

// cancelPending sends body (command cmd) from c, expects it to go
// asynchronous waiting for a break, cancels it and returns the final
// status.
func cancelPending(t *testing.T, c *smbtest.Client, cmd uint16, body []byte) uint32 {
	t.Helper()
	mid, err := c.Send(cmd, body)
	if err != nil {
		t.Fatal(err)
	}
	h, _, err := c.Recv()
	if err != nil || h.Status != smbtest.StatusPending || h.Flags&wire.FlagAsync == 0 {
		t.Fatalf("interim: %#x %v", h.Status, err)
	}
	c.SendRaw(wire.Cancel, []byte{4, 0, 0, 0}, mid, h.AsyncID)
	h, _, err = c.Wait(mid)
	if err != nil {
		t.Fatal(err)
	}
	return h.Status
}

// A CREATE and a rename waiting for a lease holder's acknowledgement end
// with STATUS_CANCELLED when the client cancels them, having changed
// nothing.
func TestCancelWaitingCreateAndRename(t *testing.T) {
	addr, _ := serveShare(t, memstore.New())
	a, b := logon(t, addr, 1), logon(t, addr, 2)
	rw := smb.FileReadData | smb.FileWriteData
	// a holds read, write and handle caching on c.txt, read and handle
	// caching on a.txt; it never
	// acknowledges the breaks.
	h, resp, err := a.Do(wire.Create, leaseCreate("c.txt", rw, smb.FileOpenIf, 1, 7))
	if err != nil || h.Status != 0 {
		t.Fatalf("create c.txt: %#x %v", h.Status, err)
	}
	if resp[wire.HeaderSize+2] != 0xFF {
		t.Fatalf("no lease granted: %#x", resp[wire.HeaderSize+2])
	}
	cfid := fileID(resp)
	if st := a.Write(cfid, 0, []byte("keep")); st != 0 {
		t.Fatalf("write: %#x", st)
	}
	if h, _, err := a.Do(wire.Create, leaseCreate("a.txt", rw, smb.FileOpenIf, 2, 3)); err != nil || h.Status != 0 {
		t.Fatalf("create a.txt: %#x %v", h.Status, err)
	}

	// An open breaks the write caching and waits.
	over := smbtest.CreateBody("c.txt", rw, 7, smb.FileOverwrite, 0)
	if st := cancelPending(t, b, wire.Create, over); st != smbtest.StatusCancelled {
		t.Fatalf("cancelled create: %#x", st)
	}
	if got, st := a.Read(cfid, 0, 100); st != 0 || string(got) != "keep" {
		t.Fatalf("after the cancelled overwrite: %q %#x", got, st)
	}

	// A rename breaks handle caching and waits.
	fid, st := b.Create("a.txt", smb.Delete, 7, smb.FileOpen, 0)
	if st != 0 {
		t.Fatalf("open a.txt: %#x", st)
	}
	name := wire.AppendUTF16(nil, "b.txt")
	info := make([]byte, 20, 20+len(name))
	le.PutUint32(info[16:], uint32(len(name)))
	info = append(info, name...)
	set := make([]byte, 32)
	le.PutUint16(set, 33)
	set[2], set[3] = 1, 10 // SMB2_0_INFO_FILE, FileRenameInformation
	le.PutUint32(set[4:], uint32(len(info)))
	le.PutUint16(set[8:], wire.HeaderSize+32)
	le.PutUint64(set[16:], fid.Persistent)
	le.PutUint64(set[24:], fid.Volatile)
	if st := cancelPending(t, b, wire.SetInfo, append(set, info...)); st != smbtest.StatusCancelled {
		t.Fatalf("cancelled rename: %#x", st)
	}
	if _, st := b.Create("b.txt", smb.FileReadData, 7, smb.FileOpen, 0); st != smbtest.StatusNotFound {
		t.Fatalf("b.txt after the cancelled rename: %#x", st)
	}
	// A stat open: a data open would wait for the break still under way.
	if _, st := b.Create("a.txt", 0x80, 7, smb.FileOpen, 0); st != 0 {
		t.Fatalf("a.txt after the cancelled rename: %#x", st)
	}
}

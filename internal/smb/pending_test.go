package smb

import (
	"testing"

	"github.com/lazuli-storage/lazuli/internal/smb/smbtest"
	"github.com/lazuli-storage/lazuli/internal/smb/wire"
)

// A rename that waits for other clients' cache breaks answers
// STATUS_PENDING at once and its result later, serving the connection's
// other requests meanwhile: the acknowledgement it waits for may come on
// this very connection (smbtorture smb2.lease.rename_wait).
func TestRenameWaitingGoesAsync(t *testing.T) {
	fs := newMemFS("share1")
	fs.renameGate = make(chan struct{})
	_, addr := startServer(t, fs)
	c := dialTest(t, addr)
	fid, st := c.Create("a.txt", FileReadData|Delete, 7, FileOpenIf, 0)
	if st != 0 {
		t.Fatalf("create: %#x", st)
	}
	name := wire.AppendUTF16(nil, "b.txt")
	buf := make([]byte, 20)
	le.PutUint32(buf[16:], uint32(len(name)))
	buf = append(buf, name...)
	body := make([]byte, 32)
	le.PutUint16(body, 33)
	body[2], body[3] = wire.InfoFile, fileRenameInformation
	le.PutUint32(body[4:], uint32(len(buf)))
	le.PutUint16(body[8:], wire.HeaderSize+32)
	le.PutUint64(body[16:], fid.Persistent)
	le.PutUint64(body[24:], fid.Volatile)
	mid, err := c.Send(wire.SetInfo, append(body, buf...))
	if err != nil {
		t.Fatal(err)
	}
	h, _, err := c.Recv()
	if err != nil || h.MessageID != mid || h.Status != smbtest.StatusPending || h.Flags&wire.FlagAsync == 0 {
		t.Fatalf("interim: %+v %v", h, err)
	}
	// The connection goes on while the rename waits.
	if _, st := c.Create("other.txt", FileReadData, 7, FileOpenIf, 0); st != 0 {
		t.Fatalf("create while the rename waits: %#x", st)
	}
	close(fs.renameGate)
	h, _, err = c.Recv()
	if err != nil || h.MessageID != mid || h.Status != 0 || h.Flags&wire.FlagAsync == 0 || h.AsyncID == 0 {
		t.Fatalf("final: %+v %v", h, err)
	}
}

// SMB 3 clients that offer directory leasing are offered it; SMB 2.1
// clients and those that do not offer it (impacket, which fails on it)
// are not.
func TestDirectoryLeasingOffered(t *testing.T) {
	_, addr := startServer(t, newMemFS("share1"))
	for _, c := range []struct {
		dialect uint16
		caps    uint32
		want    bool
	}{
		{wire.Dialect210, wire.CapDirectoryLeasing, false},
		{wire.Dialect302, 0, false},
		{wire.Dialect302, wire.CapDirectoryLeasing, true},
	} {
		caps, err := smbtest.NegotiateCaps(addr, c.dialect, c.caps)
		if err != nil {
			t.Fatal(err)
		}
		if got := caps&wire.CapDirectoryLeasing != 0; got != c.want {
			t.Fatalf("dialect %#x, client capabilities %#x: directory leasing %v, want %v", c.dialect, c.caps, got, c.want)
		}
	}
}

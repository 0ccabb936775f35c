package cluster

import (
	"bytes"
	"encoding/binary"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"

	"github.com/lazuli-storage/lazuli/conformance/harness"
	"github.com/lazuli-storage/lazuli/emulator"
	"github.com/lazuli-storage/lazuli/internal/engine/pgstore/pgtest"
	"github.com/lazuli-storage/lazuli/internal/smb/smbtest"
	"github.com/lazuli-storage/lazuli/internal/smb/wire"
)

// TestRESTWriteOnOneInstanceBreaksOplockHeldThroughAnother: two lazuli
// processes share a database. An SMB client holds, through instance A, a
// batch oplock; a REST Put Range through instance B breaks it to none
// (the client hears it from A) and waits for the acknowledgement before
// it writes.
func TestRESTWriteOnOneInstanceBreaksOplockHeldThroughAnother(t *testing.T) {
	url := pgtest.NewDatabase(t)
	a := startProcess(t, url)
	b := startProcess(t, url)
	ctx := harness.Ctx(t)
	le := binary.LittleEndian

	fs := fileService(t, b.file)
	_, err := fs.CreateShare(ctx, "brk", nil)
	must(t, err)
	f := fs.NewShareClient("brk").NewRootDirectoryClient().NewFileClient("held.txt")
	_, err = f.Create(ctx, 4, nil)
	must(t, err)

	c, err := smbtest.Dial(a.smb, emulator.Account, emulator.Key)
	must(t, err)
	defer c.Close()
	must(t, c.TreeConnect("brk"))
	body := smbtest.CreateBody("held.txt", readData|writeData, shareAll, openExisting, nonDirectory)
	body[3] = 0x09 // batch
	h, resp, err := c.Do(wire.Create, body)
	must(t, err)
	if h.Status != 0 || resp[wire.HeaderSize+2] != 0x09 {
		t.Fatalf("SMB open through A: %#x, oplock %#x, want batch", h.Status, resp[wire.HeaderSize+2])
	}
	fid := resp[wire.HeaderSize+64 : wire.HeaderSize+80]

	done := make(chan error, 1)
	go func() {
		_, err := f.UploadRange(ctx, 0, streaming.NopCloser(bytes.NewReader([]byte("abcd"))), nil)
		done <- err
	}()
	h, brk, err := c.Recv()
	must(t, err)
	if h.Command != wire.OplockBreak || !bytes.Equal(brk[wire.HeaderSize+8:wire.HeaderSize+24], fid) || brk[wire.HeaderSize+2] != 0 {
		t.Fatalf("through A: command %#x, want a break to none of the open", h.Command)
	}
	select {
	case err := <-done:
		t.Fatalf("Put Range through B went on before the acknowledgement: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	ack := make([]byte, 24)
	le.PutUint16(ack, 24)
	copy(ack[8:], fid)
	h, _, err = c.Do(wire.OplockBreak, ack)
	must(t, err)
	if h.Status != 0 {
		t.Fatalf("acknowledgement through A: %#x", h.Status)
	}
	must(t, <-done)
	data, st := c.Read(wire.FileID{Persistent: le.Uint64(fid), Volatile: le.Uint64(fid[8:])}, 0, 4)
	if st != 0 || string(data) != "abcd" {
		t.Fatalf("read through A after B's write: %q %#x", data, st)
	}
}

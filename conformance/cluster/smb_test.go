package cluster

import (
	"bytes"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/directory"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/service"

	"github.com/lazuli-storage/lazuli/conformance/harness"
	"github.com/lazuli-storage/lazuli/emulator"
	"github.com/lazuli-storage/lazuli/internal/engine/pgstore/pgtest"
	"github.com/lazuli-storage/lazuli/internal/smb/smbtest"
	"github.com/lazuli-storage/lazuli/internal/smb/wire"
)

// SMB CREATE fields the test uses.
const (
	readData      = 0x1
	writeData     = 0x2
	deleteAccess  = 0x10000
	openExisting  = 1
	nonDirectory  = 0x40
	deleteOnClose = 0x1000
	shareAll      = 7
)

func fileService(t *testing.T, endpoint string) *service.Client {
	cred, err := service.NewSharedKeyCredential(emulator.Account, emulator.Key)
	must(t, err)
	c, err := service.NewClientWithSharedKeyCredential(endpoint+"/", cred, &service.ClientOptions{ClientOptions: clientOptions()})
	must(t, err)
	return c
}

// TestKillInstanceReleasesSMBHandles: two lazuli processes share a
// database with --instanceExpiry 3s. An SMB client holds, through
// instance A, an open that shares nothing, an exclusive byte-range lock
// and a delete-on-close file: instance B's REST sees the handles in List
// Handles and answers 409 SharingViolation, B's SMB
// STATUS_SHARING_VIOLATION. A is killed with SIGKILL: B
// releases A's handles within the documented bound (expiry plus two
// beat intervals, 4 s, here with 2 s of slack for a busy machine) and
// not before the expiry minus one interval (2.5 s); then the file is
// writable through B over REST and SMB and the delete-on-close file is
// gone.
func TestKillInstanceReleasesSMBHandles(t *testing.T) {
	const expiry = 3 * time.Second
	url := pgtest.NewDatabase(t)
	a := startProcess(t, url, "--instanceExpiry", expiry.String())
	b := startProcess(t, url, "--instanceExpiry", expiry.String())
	ctx := harness.Ctx(t)

	fs := fileService(t, b.file)
	_, err := fs.CreateShare(ctx, "kill", nil)
	must(t, err)
	root := fs.NewShareClient("kill").NewRootDirectoryClient()
	held := root.NewFileClient("held.txt")
	_, err = held.Create(ctx, 4, nil)
	must(t, err)
	_, err = root.NewFileClient("doc.txt").Create(ctx, 0, nil)
	must(t, err)

	c, err := smbtest.Dial(a.smb, emulator.Account, emulator.Key)
	must(t, err)
	defer c.Close()
	must(t, c.TreeConnect("kill"))
	fid, st := c.Create("held.txt", readData|writeData, 0, openExisting, nonDirectory)
	if st != 0 {
		t.Fatalf("SMB open through A: %#x", st)
	}
	if st := c.Lock(fid, 0, 4, wire.LockExclusive|wire.LockFailImmediately); st != 0 {
		t.Fatalf("SMB lock through A: %#x", st)
	}
	if _, st := c.Create("doc.txt", readData|deleteAccess, shareAll, openExisting, nonDirectory|deleteOnClose); st != 0 {
		t.Fatalf("SMB delete-on-close open through A: %#x", st)
	}

	// B sees A's opens.
	lh, err := root.ListHandles(ctx, &directory.ListHandlesOptions{Recursive: ptr(true)})
	must(t, err)
	if len(lh.Handles) != 2 {
		t.Fatalf("List Handles through B: %d handles, want 2", len(lh.Handles))
	}
	write := func() error {
		_, err := held.UploadRange(ctx, 0, streaming.NopCloser(bytes.NewReader([]byte("abcd"))), nil)
		return err
	}
	if st, code := errorCode(write()); st != 409 || code != "SharingViolation" {
		t.Fatalf("Put Range through B while A holds the file: %d %s, want 409 SharingViolation", st, code)
	}

	// And B's SMB: an open of the file A holds unshared is refused.
	cb, err := smbtest.Dial(b.smb, emulator.Account, emulator.Key)
	must(t, err)
	defer cb.Close()
	must(t, cb.TreeConnect("kill"))
	if _, st := cb.Create("held.txt", readData, shareAll, openExisting, nonDirectory); st != smbtest.StatusSharingViolation {
		t.Fatalf("SMB open through B while A holds the file: %#x, want STATUS_SHARING_VIOLATION", st)
	}

	must(t, a.cmd.Process.Signal(syscall.SIGKILL))
	a.cmd.Wait()
	killed := time.Now()
	for {
		lh, err := root.ListHandles(ctx, &directory.ListHandlesOptions{Recursive: ptr(true)})
		must(t, err)
		if len(lh.Handles) == 0 {
			break
		}
		if time.Since(killed) > 4*expiry {
			t.Fatalf("%d handles of the killed instance still open %v after the kill", len(lh.Handles), time.Since(killed))
		}
		time.Sleep(50 * time.Millisecond)
	}
	took := time.Since(killed)
	t.Logf("handles of the killed instance released %v after the kill", took)
	if bound := expiry*4/3 + 2*time.Second; took > bound {
		t.Errorf("released after %v, want within %v", took, bound)
	}
	if early := expiry * 5 / 6; took < early-200*time.Millisecond {
		t.Errorf("released after %v, before the expiry allows (%v)", took, early)
	}

	must(t, write())
	d, err := held.DownloadStream(ctx, &file.DownloadStreamOptions{})
	must(t, err)
	var got bytes.Buffer
	_, err = got.ReadFrom(d.Body)
	must(t, err)
	if got.String() != "abcd" {
		t.Fatalf("held.txt after the write through B: %q", got.String())
	}
	if _, err := root.NewFileClient("doc.txt").GetProperties(ctx, nil); err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("delete-on-close file of the killed instance: %v, want 404", err)
	}
	fb, st := cb.Create("held.txt", readData|writeData, 0, openExisting, nonDirectory)
	if st != 0 {
		t.Fatalf("exclusive SMB open through B after A died: %#x", st)
	}
	if st := cb.Write(fb, 0, []byte("wxyz")); st != 0 {
		t.Fatalf("SMB write through B over A's old lock: %#x", st)
	}
}

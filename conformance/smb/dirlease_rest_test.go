package smb_test

import (
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/sas"

	"github.com/lazuli-storage/lazuli/emulator"
	"github.com/lazuli-storage/lazuli/internal/smb/smbtest"
	"github.com/lazuli-storage/lazuli/internal/smb/wire"
)

// TestRESTChangesBreakParentDirectoryLease: an SMB 3 client caching a
// directory's listing under a read-handle lease loses it when a REST
// operation changes the size, times, properties or metadata of an entry,
// as when one is created, deleted or renamed.
func TestRESTChangesBreakParentDirectoryLease(t *testing.T) {
	engines(t, func(t *testing.T, e *env) {
		dir := e.share.NewDirectoryClient("d")
		_, err := dir.Create(ctx(t), nil)
		must(t, err)
		f := dir.NewFileClient("f.txt")
		_, err = f.Create(ctx(t), 1024, nil)
		must(t, err)
		src := e.createFile(t, "src.txt", []byte("source"))
		srcSAS, err := src.GetSASURL(sas.FilePermissions{Read: true}, time.Now().Add(time.Hour), nil)
		must(t, err)
		a, err := smbtest.DialGUID(e.em.SMBAddr(), emulator.Account, emulator.Key, wire.Dialect302, [16]byte{9})
		must(t, err)
		t.Cleanup(func() { a.Close() })
		must(t, a.TreeConnect(e.name))
		for i, op := range []struct {
			name string
			run  func() error
		}{
			{"Put Range", func() error { _, err := f.UploadRange(ctx(t), 0, body([]byte("ab")), nil); return err }},
			{"Clear Range", func() error {
				_, err := f.ClearRange(ctx(t), file.HTTPRange{Offset: 0, Count: 512}, nil)
				return err
			}},
			{"Put Range From URL", func() error { _, err := f.UploadRangeFromURL(ctx(t), srcSAS, 0, 0, 6, nil); return err }},
			{"Set File Properties", func() error {
				_, err := f.SetHTTPHeaders(ctx(t), &file.SetHTTPHeadersOptions{HTTPHeaders: &file.HTTPHeaders{ContentType: to("text/plain")}})
				return err
			}},
			{"Resize", func() error { _, err := f.Resize(ctx(t), 2048, nil); return err }},
			{"Set Metadata", func() error {
				_, err := f.SetMetadata(ctx(t), &file.SetMetadataOptions{Metadata: map[string]*string{"k": to("v")}})
				return err
			}},
			{"Copy File", func() error {
				_, err := dir.NewFileClient("copy.txt").StartCopyFromURL(ctx(t), src.URL(), nil)
				return err
			}},
		} {
			key := byte(i + 1)
			open := smbtest.CreateBody("d", readData, shareR|shareW|shareD, openOnly, dirFile)
			open[3] = oplockLease
			g := create(t, a, withContexts(open, leaseContext(key, leaseR|leaseH)))
			if ls := g.contexts["RqLs"]; g.status != 0 || len(ls) < 32 || le.Uint32(ls[16:]) != leaseR|leaseH {
				t.Fatalf("%s: directory open: status %#x lease %x, want RH", op.name, g.status, ls)
			}
			must(t, op.run())
			brk := recvBreak(t, a)
			if le.Uint16(brk) != 44 || brk[8] != key || le.Uint32(brk[24:]) != leaseR|leaseH || le.Uint32(brk[28:]) != 0 {
				t.Fatalf("%s: lease break %x, want RH to none", op.name, brk)
			}
			if st := a.CloseFile(g.fid); st != 0 {
				t.Fatalf("%s: close: %#x", op.name, st)
			}
		}
	})
}

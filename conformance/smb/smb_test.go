// Package smb_test checks that SMB and REST see one File service: share
// modes, delete-pending state, byte-range locks, handles and bytes,
// driven by the official azfile SDK over REST and lazuli's SMB test
// client over SMB, against lazuli with SMB on, on every engine.
package smb_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/directory"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/lease"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/service"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/share"

	"github.com/lazuli-storage/lazuli/emulator"
	"github.com/lazuli-storage/lazuli/internal/smb/smbtest"
	"github.com/lazuli-storage/lazuli/internal/smb/wire"
)

// Access and share bits of SMB CREATE.
const (
	readData  = 0x1
	writeData = 0x2
	deleteAcc = 0x10000
	readAttrs = 0x80
	shareR    = 1
	shareW    = 2
	shareD    = 4
	openIf    = 3
	openOnly  = 1
	nonDir    = 0x40
)

type env struct {
	engine string
	em     *emulator.Emulator
	share  *share.Client
	name   string
}

func engines(t *testing.T, fn func(t *testing.T, e *env)) {
	for _, eng := range []string{"memory", "log", "sqlite"} {
		t.Run(eng, func(t *testing.T) {
			o := emulator.Options{InMemory: true, SMB: true}
			if eng != "memory" {
				o = emulator.Options{Dir: t.TempDir(), EngineKind: eng, SMB: true}
			}
			em, err := emulator.Start(o)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { em.Close() })
			cred, err := service.NewSharedKeyCredential(emulator.Account, emulator.Key)
			must(t, err)
			svc, err := service.NewClientWithSharedKeyCredential(em.Endpoint(emulator.File)+"/", cred, nil)
			must(t, err)
			name := "share1"
			_, err = svc.CreateShare(ctx(t), name, nil)
			must(t, err)
			fn(t, &env{engine: eng, em: em, share: svc.NewShareClient(name), name: name})
		})
	}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func code(err error) string {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return strconv.Itoa(re.StatusCode) + " " + re.ErrorCode
	}
	if err != nil {
		return err.Error()
	}
	return "ok"
}

func to[T any](v T) *T { return &v }

func body(b []byte) io.ReadSeekCloser { return streaming.NopCloser(bytes.NewReader(b)) }

func (e *env) smb(t *testing.T) *smbtest.Client {
	t.Helper()
	c, err := smbtest.Dial(e.em.SMBAddr(), emulator.Account, emulator.Key)
	must(t, err)
	t.Cleanup(func() { c.Close() })
	must(t, c.TreeConnect(e.name))
	return c
}

func (e *env) file(name string) *file.Client {
	return e.share.NewRootDirectoryClient().NewFileClient(name)
}

func (e *env) createFile(t *testing.T, name string, data []byte) *file.Client {
	t.Helper()
	f := e.file(name)
	_, err := f.Create(ctx(t), int64(len(data)), nil)
	must(t, err)
	if len(data) > 0 {
		_, err = f.UploadRange(ctx(t), 0, body(data), nil)
		must(t, err)
	}
	return f
}

// restOps are the REST operations of the share-mode table, each run
// against f.
func restOps(t *testing.T, f *file.Client) map[string]func() error {
	return map[string]func() error{
		"Create File": func() error { _, err := f.Create(ctx(t), 8, nil); return err },
		"Get File": func() error {
			r, err := f.DownloadStream(ctx(t), nil)
			if err == nil {
				r.Body.Close()
			}
			return err
		},
		"Set File Properties": func() error { _, err := f.SetHTTPHeaders(ctx(t), nil); return err },
		"Set File Metadata": func() error {
			_, err := f.SetMetadata(ctx(t), &file.SetMetadataOptions{Metadata: map[string]*string{"k": new(string)}})
			return err
		},
		"Delete File":         func() error { _, err := f.Delete(ctx(t), nil); return err },
		"Put Range":           func() error { _, err := f.UploadRange(ctx(t), 0, body([]byte("abcd")), nil); return err },
		"List Ranges":         func() error { _, err := f.GetRangeList(ctx(t), nil); return err },
		"Get File Properties": func() error { _, err := f.GetProperties(ctx(t), nil); return err },
	}
}

// TestShareModesAgainstREST is the table of "Managing file locks": an SMB
// open holding read, write and delete access with each share mode, and
// which REST operations it makes fail with 409 SharingViolation.
func TestShareModesAgainstREST(t *testing.T) {
	all := []string{"Create File", "Get File", "Set File Properties", "Set File Metadata", "Delete File", "Put Range", "List Ranges"}
	table := []struct {
		mode  string
		share uint32
		fail  []string
	}{
		{"None", 0, all},
		{"Shared Read", shareR, []string{"Create File", "Set File Properties", "Set File Metadata", "Delete File", "Put Range"}},
		{"Shared Write", shareW, []string{"Create File", "Get File", "Delete File", "List Ranges"}},
		{"Shared Delete", shareD, all},
		{"Shared Read/Write", shareR | shareW, []string{"Create File", "Delete File"}},
		{"Shared Read/Delete", shareR | shareD, []string{"Create File", "Set File Properties", "Set File Metadata", "Put Range", "Delete File"}},
		{"Shared Write/Delete", shareW | shareD, []string{"Get File", "List Ranges", "Delete File"}},
		{"Shared Read/Write/Delete", shareR | shareW | shareD, []string{"Delete File"}},
	}
	engines(t, func(t *testing.T, e *env) {
		c := e.smb(t)
		for _, row := range table {
			t.Run(row.mode, func(t *testing.T) {
				name := "f-" + strconv.Itoa(int(row.share))
				f := e.createFile(t, name, []byte("0123456789"))
				fid, st := c.Create(name, readData|writeData|deleteAcc, row.share, openOnly, nonDir)
				if st != 0 {
					t.Fatalf("SMB open: %#x", st)
				}
				defer c.CloseFile(fid)
				fails := map[string]bool{}
				for _, op := range row.fail {
					fails[op] = true
				}
				for op, run := range restOps(t, f) {
					got := code(run())
					want := "ok"
					if fails[op] {
						want = "409 SharingViolation"
					}
					if got != want {
						t.Errorf("%s with an SMB open sharing %s: %s, want %s", op, row.mode, got, want)
					}
				}
			})
		}
	})
}

func TestDeletePendingSeenFromBothSides(t *testing.T) {
	engines(t, func(t *testing.T, e *env) {
		a, b := e.smb(t), e.smb(t)
		f := e.createFile(t, "dp.txt", []byte("data"))
		fid, st := a.Create("dp.txt", readData|deleteAcc, shareR|shareW|shareD, openOnly, nonDir)
		if st != 0 {
			t.Fatalf("open: %#x", st)
		}
		if st := a.SetDisposition(fid, true); st != 0 {
			t.Fatalf("set disposition: %#x", st)
		}
		if got := code(restOps(t, f)["Get File Properties"]()); got != "409 SMBDeletePending" {
			t.Fatalf("REST Get File Properties of a delete-pending file: %s", got)
		}
		if _, st := b.Create("dp.txt", readData, shareR|shareW|shareD, openOnly, nonDir); st != smbtest.StatusDeletePending {
			t.Fatalf("SMB open of a delete-pending file: %#x", st)
		}
		pager := e.share.NewRootDirectoryClient().NewListFilesAndDirectoriesPager(nil)
		page, err := pager.NextPage(ctx(t))
		must(t, err)
		for _, fi := range page.Segment.Files {
			if *fi.Name == "dp.txt" {
				t.Fatal("a delete-pending file is listed")
			}
		}
		if st := a.CloseFile(fid); st != 0 {
			t.Fatalf("close: %#x", st)
		}
		if got := code(restOps(t, f)["Get File Properties"]()); got != "404 ResourceNotFound" {
			t.Fatalf("after the last close: %s", got)
		}
	})
}

func TestLockConflictsFromBothSides(t *testing.T) {
	engines(t, func(t *testing.T, e *env) {
		a, b := e.smb(t), e.smb(t)
		f := e.createFile(t, "lk.txt", bytes.Repeat([]byte("x"), 100))
		fa, _ := a.Create("lk.txt", readData|writeData, shareR|shareW, openOnly, nonDir)
		fb, _ := b.Create("lk.txt", readData|writeData, shareR|shareW, openOnly, nonDir)
		if st := a.Lock(fa, 10, 10, wire.LockExclusive|wire.LockFailImmediately); st != 0 {
			t.Fatalf("lock: %#x", st)
		}
		if got := code(restOps(t, f)["Put Range"]()); got != "409 FileLockConflict" {
			t.Fatalf("REST Put Range while a lock exists: %s", got)
		}
		_, err := f.DownloadStream(ctx(t), &file.DownloadStreamOptions{Range: file.HTTPRange{Offset: 12, Count: 4}})
		if got := code(err); got != "409 FileLockConflict" {
			t.Fatalf("REST Get File inside an exclusive range: %s", got)
		}
		if st := b.Write(fb, 15, []byte("y")); st != smbtest.StatusFileLockConflict {
			t.Fatalf("SMB write into another open's range: %#x", st)
		}
		if st := b.Lock(fb, 0, 15, wire.LockShared|wire.LockFailImmediately); st != smbtest.StatusLockNotGranted {
			t.Fatalf("SMB overlapping lock: %#x", st)
		}
		if st := a.Lock(fa, 10, 10, wire.LockUnlock); st != 0 {
			t.Fatalf("unlock: %#x", st)
		}
		if got := code(restOps(t, f)["Put Range"]()); got != "ok" {
			t.Fatalf("REST Put Range after unlock: %s", got)
		}
	})
}

func TestBytesAndETagAreOneTruth(t *testing.T) {
	engines(t, func(t *testing.T, e *env) {
		c := e.smb(t)
		f := e.createFile(t, "t.txt", []byte("0123456789"))
		before, err := f.GetProperties(ctx(t), nil)
		must(t, err)
		fid, st := c.Create("t.txt", readData|writeData, shareR|shareW|shareD, openOnly, nonDir)
		if st != 0 {
			t.Fatalf("open: %#x", st)
		}
		if st := c.Write(fid, 2, []byte("SMB")); st != 0 {
			t.Fatalf("write: %#x", st)
		}
		after, err := f.GetProperties(ctx(t), nil)
		must(t, err)
		if *after.ETag == *before.ETag || !after.LastModified.After(*before.LastModified) && !after.LastModified.Equal(*before.LastModified) {
			t.Fatalf("ETag %v -> %v after an SMB write", *before.ETag, *after.ETag)
		}
		r, err := f.DownloadStream(ctx(t), nil)
		must(t, err)
		got, _ := io.ReadAll(r.Body)
		r.Body.Close()
		if string(got) != "01SMB56789" {
			t.Fatalf("REST reads %q after the SMB write", got)
		}
		_, err = f.UploadRange(ctx(t), 7, body([]byte("RST")), nil)
		must(t, err)
		if got, st := c.Read(fid, 0, 100); st != 0 || string(got) != "01SMB56RST" {
			t.Fatalf("SMB reads %q (%#x) after the REST write", got, st)
		}
	})
}

func TestListAndForceCloseHandles(t *testing.T) {
	engines(t, func(t *testing.T, e *env) {
		c := e.smb(t)
		e.createFile(t, "h1.txt", []byte("a"))
		e.createFile(t, "h2.txt", []byte("b"))
		f1, _ := c.Create("h1.txt", readData, shareR, openOnly, nonDir)
		f2, _ := c.Create("h2.txt", readData, shareR, openOnly, nonDir)
		root := e.share.NewRootDirectoryClient()
		lh, err := root.ListHandles(ctx(t), &directory.ListHandlesOptions{Recursive: to(true)})
		must(t, err)
		if len(lh.Handles) != 2 {
			t.Fatalf("List Handles of the root, recursive: %d handles, want 2", len(lh.Handles))
		}
		hs, err := e.file("h1.txt").ListHandles(ctx(t), nil)
		must(t, err)
		if len(hs.Handles) != 1 || *hs.Handles[0].Path != "h1.txt" || *hs.Handles[0].ClientIP == "" ||
			*hs.Handles[0].SessionID == "" || *hs.Handles[0].SessionID == "0" {
			t.Fatalf("List Handles of h1.txt: %+v", hs.Handles)
		}
		// The file id and parent id are REST's x-ms-file-id and the
		// root's, the open time is now, the handle id a number.
		h := hs.Handles[0]
		fp, err := e.file("h1.txt").GetProperties(ctx(t), nil)
		must(t, err)
		rp, err := root.GetProperties(ctx(t), nil)
		must(t, err)
		if _, err := strconv.ParseUint(*h.ID, 10, 64); err != nil || *h.FileID != *fp.ID || *h.ParentID != *rp.ID ||
			h.OpenTime == nil || time.Since(*h.OpenTime).Abs() > time.Minute {
			t.Fatalf("List Handles of h1.txt: id %s, file id %s (REST %s), parent id %s (root %s), open time %v",
				*h.ID, *h.FileID, *fp.ID, *h.ParentID, *rp.ID, h.OpenTime)
		}
		n, err := e.file("h2.txt").ForceCloseHandles(ctx(t), "*", nil)
		must(t, err)
		if *n.NumberOfHandlesClosed != 1 {
			t.Fatalf("Force Close Handles closed %d", *n.NumberOfHandlesClosed)
		}
		if _, st := c.Read(f2, 0, 1); st != smbtest.StatusFileClosed {
			t.Fatalf("read through a force-closed handle: %#x", st)
		}
		if _, st := c.Read(f1, 0, 1); st != 0 {
			t.Fatalf("read through the other handle: %#x", st)
		}
	})
}

func TestDisconnectReleasesHandles(t *testing.T) {
	engines(t, func(t *testing.T, e *env) {
		f := e.createFile(t, "d.txt", []byte("data"))
		c := e.smb(t)
		if _, st := c.Create("d.txt", readData|writeData|deleteAcc, 0, openOnly, nonDir); st != 0 {
			t.Fatalf("open: %#x", st)
		}
		if got := code(restOps(t, f)["Get File"]()); got != "409 SharingViolation" {
			t.Fatalf("before disconnect: %s", got)
		}
		c.Close()
		deadline := time.Now().Add(5 * time.Second)
		for code(restOps(t, f)["Get File"]()) != "ok" {
			if time.Now().After(deadline) {
				t.Fatal("the handle of a closed connection is still open")
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}

func TestLeasedFileRefusesSMBWriteOpen(t *testing.T) {
	engines(t, func(t *testing.T, e *env) {
		f := e.createFile(t, "l.txt", []byte("data"))
		lc, err := lease.NewFileClient(f, nil)
		must(t, err)
		_, err = lc.Acquire(ctx(t), nil)
		must(t, err)
		c := e.smb(t)
		if _, st := c.Create("l.txt", readData|writeData, shareR|shareW|shareD, openOnly, nonDir); st != smbtest.StatusSharingViolation {
			t.Fatalf("SMB write open of a leased file: %#x", st)
		}
		fid, st := c.Create("l.txt", readData, shareR|shareW|shareD, openOnly, nonDir)
		if st != 0 {
			t.Fatalf("SMB read open of a leased file: %#x", st)
		}
		c.CloseFile(fid)
	})
}

// TestSMBPropertiesAndSizeAreREST: attributes set over SMB are REST's
// x-ms-file-attributes, a last-write time set over REST is the one SMB
// reports, and the volume size SMB reports is the share's quota with
// what its files use taken off the free space.
func TestSMBPropertiesAndSizeAreREST(t *testing.T) {
	engines(t, func(t *testing.T, e *env) {
		_, err := e.share.SetProperties(ctx(t), &share.SetPropertiesOptions{Quota: to(int32(5))})
		must(t, err)
		f := e.createFile(t, "p.txt", bytes.Repeat([]byte{1}, 40960))

		out, err := e.smbclient(t, e.name, []string{"-m", "SMB3"}, "setmode p.txt +hr")
		if err != nil || strings.Contains(out, "NT_STATUS") {
			t.Fatalf("setmode: %v\n%s", err, out)
		}
		p, err := f.GetProperties(ctx(t), nil)
		must(t, err)
		attrs, err := file.ParseNTFSFileAttributes(p.FileAttributes)
		must(t, err)
		if !attrs.Hidden || !attrs.ReadOnly {
			t.Fatalf("x-ms-file-attributes after setmode +hr: %s", *p.FileAttributes)
		}

		when := time.Date(2021, 3, 4, 5, 6, 7, 0, time.UTC)
		_, err = f.SetHTTPHeaders(ctx(t), &file.SetHTTPHeadersOptions{SMBProperties: &file.SMBProperties{LastWriteTime: &when}})
		must(t, err)
		out, err = e.smbclient(t, e.name, []string{"-m", "SMB3"}, "ls p.txt")
		if err != nil {
			t.Fatalf("ls: %v\n%s", err, out)
		}
		// smbclient prints the last-write time in the local zone.
		if local := when.Local().Format("Mon Jan _2 15:04:05 2006"); !strings.Contains(out, local) {
			t.Fatalf("SMB last-write time: want %q in\n%s", local, out)
		}
		out, _ = e.smbclient(t, e.name, []string{"-m", "SMB3"}, "altname p.txt")
		if !strings.Contains(out, "NT_STATUS_OBJECT_NAME_NOT_FOUND") {
			t.Fatalf("altname (no 8.3 names): want NT_STATUS_OBJECT_NAME_NOT_FOUND in\n%s", out)
		}

		out, err = e.smbclient(t, e.name, []string{"-m", "SMB3"}, "du")
		if err != nil {
			t.Fatalf("du: %v\n%s", err, out)
		}
		want := strconv.Itoa(5<<30/4096) + " blocks of size 4096. " + strconv.Itoa((5<<30-40960)/4096) + " blocks available"
		if !strings.Contains(out, want) {
			t.Fatalf("du: want %q in\n%s", want, out)
		}
	})
}

// sidBytes encodes a SID string (S-1-...) in its binary form.
func sidBytes(t *testing.T, s string) []byte {
	parts := strings.Split(s, "-")
	auth, err := strconv.ParseUint(parts[2], 10, 48)
	must(t, err)
	b := []byte{1, byte(len(parts) - 3), 0, 0, byte(auth >> 24), byte(auth >> 16), byte(auth >> 8), byte(auth)}
	for _, p := range parts[3:] {
		v, err := strconv.ParseUint(p, 10, 32)
		must(t, err)
		b = binary.LittleEndian.AppendUint32(b, uint32(v))
	}
	return b
}

// ace is an access-allowed (typ 0) or access-denied (1) ACE.
func ace(t *testing.T, typ, flags byte, mask uint32, sid string) []byte {
	s := sidBytes(t, sid)
	b := binary.LittleEndian.AppendUint16([]byte{typ, flags}, uint16(8+len(s)))
	return append(binary.LittleEndian.AppendUint32(b, mask), s...)
}

// TestSMBSetSecurityIsRESTPermission: a security descriptor set over SMB
// (SET_INFO of security information, as Windows' Security tab and icacls
// do) is the file's permission over REST, one set over REST is what SMB
// reads, and a handle without WRITE_DAC cannot set it.
func TestSMBSetSecurityIsRESTPermission(t *testing.T) {
	engines(t, func(t *testing.T, e *env) {
		f := e.createFile(t, "acl.txt", []byte("x"))
		const sid = "S-1-5-21-397955417-626881126-188441444-3053964"
		want := "O:" + sid + "G:" + sid + "D:P(A;;0x1f01ff;;;" + sid + ")(A;;0x1200a9;;;S-1-5-32-545)"
		owner := sidBytes(t, sid)
		aces := append(ace(t, 0, 0, 0x1f01ff, sid), ace(t, 0, 0, 0x1200a9, "S-1-5-32-545")...)
		acl := binary.LittleEndian.AppendUint16([]byte{2, 0}, uint16(8+len(aces)))
		acl = append(binary.LittleEndian.AppendUint16(acl, 2), 0, 0)
		sd := binary.LittleEndian.AppendUint16([]byte{1, 0}, 0x8000|0x1000|0x0004)
		for _, off := range []int{20, 20 + len(owner), 0, 20 + 2*len(owner)} {
			sd = binary.LittleEndian.AppendUint32(sd, uint32(off))
		}
		sd = append(append(append(append(sd, owner...), owner...), acl...), aces...)

		c := e.smb(t)
		ro, st := c.Create("acl.txt", readData|0x20000, shareR|shareW|shareD, openOnly, nonDir)
		if st != 0 {
			t.Fatalf("open: %#x", st)
		}
		if st := c.SetInfo(ro, wire.InfoSecurity, 0, 7, sd); st != smbtest.StatusAccessDenied {
			t.Fatalf("SET_INFO security without WRITE_DAC: %#x, want STATUS_ACCESS_DENIED", st)
		}
		fid, st := c.Create("acl.txt", readData|0x20000|0x40000|0x80000, shareR|shareW|shareD, openOnly, nonDir)
		if st != 0 {
			t.Fatalf("open for WRITE_DAC: %#x", st)
		}
		if st := c.SetInfo(fid, wire.InfoSecurity, 0, 7, sd); st != 0 {
			t.Fatalf("SET_INFO security: %#x", st)
		}
		p, err := f.GetProperties(ctx(t), nil)
		must(t, err)
		perm, err := e.share.GetPermission(ctx(t), *p.FilePermissionKey, nil)
		must(t, err)
		if *perm.Permission != want {
			t.Fatalf("REST permission after SMB set it:\n got %s\nwant %s", *perm.Permission, want)
		}

		rest := "O:" + sid + "G:" + sid + "D:(D;;0x1f01ff;;;S-1-1-0)(A;OICI;0x1f01ff;;;" + sid + ")"
		_, err = f.SetHTTPHeaders(ctx(t), &file.SetHTTPHeadersOptions{Permissions: &file.Permissions{Permission: &rest}})
		must(t, err)
		got, st := c.QueryInfo(fid, wire.InfoSecurity, 0, 4, 4096)
		if st != 0 {
			t.Fatalf("QUERY_INFO security: %#x", st)
		}
		if deny := ace(t, 1, 0, 0x1f01ff, "S-1-1-0"); !bytes.Contains(got, deny) {
			t.Fatalf("the DACL SMB reads lacks REST's deny ACE: %x", got)
		}
	})
}

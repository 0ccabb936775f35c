package smb_test

import (
	"bytes"
	"crypto/rand"
	"errors"
	"io"
	"net"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/directory"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/service"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/share"
	smb2 "github.com/hirochachacha/go-smb2"

	"github.com/lazuli-storage/lazuli/emulator"
)

// The tests in this file drive lazuli's SMB server with
// github.com/hirochachacha/go-smb2, a client written independently of
// lazuli, and check what it does against the REST side through azfile.
// go-smb2 has no way to ask for encryption: it encrypts only when the
// server marks the session or the share encrypt-data, and lazuli
// encrypts for the clients that ask (the smbclient tests cover that).

// Dialects go-smb2 can pin with Negotiator.SpecifiedDialect.
var goSMB2Dialects = []struct {
	name    string
	dialect uint16
}{
	{"2.0.2", 0x0202}, {"2.1", 0x0210}, {"3.0", 0x0300}, {"3.0.2", 0x0302}, {"3.1.1", 0x0311},
}

const statusLogonFailure = 0xC000006D

// goSMB2Dial opens a go-smb2 session as user with password, pinning
// dialect (0: go-smb2 offers all of its dialects) and requiring signing.
func (e *env) goSMB2Dial(t *testing.T, dialect uint16, user, password string) (*smb2.Session, error) {
	t.Helper()
	conn, err := net.Dial("tcp", e.em.SMBAddr())
	must(t, err)
	d := &smb2.Dialer{
		Negotiator: smb2.Negotiator{RequireMessageSigning: true, SpecifiedDialect: dialect},
		Initiator:  &smb2.NTLMInitiator{User: user, Password: password, Domain: "AZURE"},
	}
	s, err := d.Dial(conn)
	if err != nil {
		conn.Close()
		return nil, err
	}
	t.Cleanup(func() { s.Logoff(); conn.Close() })
	return s, nil
}

// goSMB2 mounts the env's share through a signed go-smb2 session of the
// account on dialect.
func (e *env) goSMB2(t *testing.T, dialect uint16) *smb2.Share {
	t.Helper()
	s, err := e.goSMB2Dial(t, dialect, emulator.Account, emulator.Key)
	must(t, err)
	fs, err := s.Mount(e.name)
	must(t, err)
	t.Cleanup(func() { fs.Umount() })
	return fs
}

// ntStatus is the NTSTATUS of a go-smb2 error (0 for none).
func ntStatus(err error) uint32 {
	var re *smb2.ResponseError
	if errors.As(err, &re) {
		return re.Code
	}
	if err != nil {
		return 0xFFFFFFFF
	}
	return 0
}

func random(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

// download reads a file whole over REST.
func download(t *testing.T, f *file.Client) []byte {
	t.Helper()
	r, err := f.DownloadStream(ctx(t), nil)
	must(t, err)
	defer r.Body.Close()
	b, err := io.ReadAll(r.Body)
	must(t, err)
	return b
}

// TestGoSMB2DialectsSigned: go-smb2 pinned to each dialect, signing
// required, writes a file REST reads byte for byte and reads it back.
func TestGoSMB2DialectsSigned(t *testing.T) {
	engines(t, func(t *testing.T, e *env) {
		dialects := goSMB2Dialects
		if e.engine != "memory" {
			// The protocol does not depend on the engine.
			dialects = dialects[4:]
		}
		for _, d := range dialects {
			t.Run(d.name, func(t *testing.T) {
				fs := e.goSMB2(t, d.dialect)
				name := "dialect-" + d.name + ".bin"
				data := random(300<<10 + 7)
				must(t, fs.WriteFile(name, data, 0o644))
				got, err := fs.ReadFile(name)
				must(t, err)
				if !bytes.Equal(got, data) {
					t.Fatalf("go-smb2 reads %d bytes back, want %d", len(got), len(data))
				}
				if rest := download(t, e.file(name)); !bytes.Equal(rest, data) {
					t.Fatalf("REST reads %d bytes of what go-smb2 wrote, want %d", len(rest), len(data))
				}
				must(t, fs.Remove(name))
				if _, err := e.file(name).GetProperties(ctx(t), nil); code(err) != "404 ResourceNotFound" {
					t.Fatalf("REST after the SMB remove: %s", code(err))
				}
			})
		}
	})
}

// TestGoSMB2Login: the account name with its key in any domain logs on;
// a wrong key and an unknown user get STATUS_LOGON_FAILURE.
func TestGoSMB2Login(t *testing.T) {
	engines(t, func(t *testing.T, e *env) {
		for _, d := range goSMB2Dialects {
			if _, err := e.goSMB2Dial(t, d.dialect, emulator.Account, emulator.Key); err != nil {
				t.Fatalf("%s: the account's key: %v", d.name, err)
			}
			_, err := e.goSMB2Dial(t, d.dialect, emulator.Account, emulator.Key[:len(emulator.Key)-4]+"AAA=")
			if st := ntStatus(err); st != statusLogonFailure {
				t.Fatalf("%s: a wrong key: %v (%#x), want STATUS_LOGON_FAILURE", d.name, err, st)
			}
			_, err = e.goSMB2Dial(t, d.dialect, "nosuchaccount", emulator.Key)
			if st := ntStatus(err); st != statusLogonFailure {
				t.Fatalf("%s: an unknown user: %v (%#x), want STATUS_LOGON_FAILURE", d.name, err, st)
			}
		}
	})
}

// TestGoSMB2ListSharenames: srvsvc's share list is the File service's
// shares made over REST, and IPC$.
func TestGoSMB2ListSharenames(t *testing.T) {
	engines(t, func(t *testing.T, e *env) {
		cred, err := service.NewSharedKeyCredential(emulator.Account, emulator.Key)
		must(t, err)
		svc, err := service.NewClientWithSharedKeyCredential(e.em.Endpoint(emulator.File)+"/", cred, nil)
		must(t, err)
		for _, n := range []string{"alpha", "beta-2"} {
			_, err := svc.CreateShare(ctx(t), n, nil)
			must(t, err)
		}
		s, err := e.goSMB2Dial(t, 0, emulator.Account, emulator.Key)
		must(t, err)
		names, err := s.ListSharenames()
		must(t, err)
		slices.Sort(names)
		if want := []string{"IPC$", "alpha", "beta-2", "share1"}; !slices.Equal(names, want) {
			t.Fatalf("ListSharenames: %q, want %q", names, want)
		}
		_, err = svc.DeleteShare(ctx(t), "alpha", nil)
		must(t, err)
		names, err = s.ListSharenames()
		must(t, err)
		slices.Sort(names)
		if want := []string{"IPC$", "beta-2", "share1"}; !slices.Equal(names, want) {
			t.Fatalf("ListSharenames after REST Delete Share: %q, want %q", names, want)
		}
		if _, err := s.Mount("alpha"); ntStatus(err) != 0xC00000CC {
			t.Fatalf("mount of a deleted share: %v, want STATUS_BAD_NETWORK_NAME", err)
		}
	})
}

// restEntries lists a directory over REST: name -> size (-1 for a
// directory).
func restEntries(t *testing.T, d *directory.Client) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	pager := d.NewListFilesAndDirectoriesPager(nil)
	for pager.More() {
		page, err := pager.NextPage(ctx(t))
		must(t, err)
		for _, di := range page.Segment.Directories {
			out[*di.Name] = -1
		}
		for _, fi := range page.Segment.Files {
			out[*fi.Name] = *fi.Properties.ContentLength
		}
	}
	return out
}

// smbEntries lists a directory with go-smb2's ReadDir the same way.
func smbEntries(t *testing.T, fs *smb2.Share, dir string) map[string]int64 {
	t.Helper()
	fis, err := fs.ReadDir(dir)
	must(t, err)
	out := map[string]int64{}
	for _, fi := range fis {
		if fi.IsDir() {
			out[fi.Name()] = -1
		} else {
			out[fi.Name()] = fi.Size()
		}
	}
	return out
}

func sameEntries(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestGoSMB2FileOpsSeenOverREST: directories and files go-smb2 makes,
// renames, truncates and removes are what REST lists, reports and
// downloads; sizes and last-write times agree both ways.
func TestGoSMB2FileOpsSeenOverREST(t *testing.T) {
	engines(t, func(t *testing.T, e *env) {
		fs := e.goSMB2(t, 0x0311)
		must(t, fs.Mkdir("top", 0o755))
		must(t, fs.MkdirAll(`top\sub\deep`, 0o755))
		f, err := fs.Create(`top\a.txt`)
		must(t, err)
		if n, err := f.Write([]byte("hello, world")); err != nil || n != 12 {
			t.Fatalf("write: %d, %v", n, err)
		}
		must(t, f.Close())
		must(t, fs.WriteFile(`top\sub\b.bin`, random(70000), 0o644))

		top := e.share.NewDirectoryClient("top")
		want := map[string]int64{"a.txt": 12, "sub": -1}
		if got := restEntries(t, top); !sameEntries(got, want) {
			t.Fatalf("REST lists top as %v, want %v", got, want)
		}
		if got := smbEntries(t, fs, "top"); !sameEntries(got, want) {
			t.Fatalf("go-smb2 ReadDir of top: %v, want %v", got, want)
		}
		want = map[string]int64{"b.bin": 70000, "deep": -1}
		if got := restEntries(t, top.NewSubdirectoryClient("sub")); !sameEntries(got, want) {
			t.Fatalf("REST lists top/sub as %v, want %v", got, want)
		}

		// Stat's size and modification time are REST's Content-Length
		// and x-ms-file-last-write-time.
		fa := top.NewFileClient("a.txt")
		p, err := fa.GetProperties(ctx(t), nil)
		must(t, err)
		fi, err := fs.Stat(`top\a.txt`)
		must(t, err)
		if fi.Size() != *p.ContentLength || !fi.ModTime().Equal(*p.FileLastWriteTime) || fi.IsDir() {
			t.Fatalf("go-smb2 Stat: size %d, mod time %v; REST: %d, %v", fi.Size(), fi.ModTime(), *p.ContentLength, *p.FileLastWriteTime)
		}
		when := time.Date(2020, 2, 29, 12, 34, 56, 789012300, time.UTC)
		must(t, fs.Chtimes(`top\a.txt`, when, when))
		p, err = fa.GetProperties(ctx(t), nil)
		must(t, err)
		if !p.FileLastWriteTime.Equal(when) {
			t.Fatalf("REST last-write time after go-smb2 Chtimes: %v, want %v", *p.FileLastWriteTime, when)
		}
		rest := time.Date(2019, 1, 2, 3, 4, 5, 600700800, time.UTC)
		_, err = fa.SetHTTPHeaders(ctx(t), &file.SetHTTPHeadersOptions{SMBProperties: &file.SMBProperties{LastWriteTime: &rest}})
		must(t, err)
		if fi, err := fs.Stat(`top\a.txt`); err != nil || !fi.ModTime().Equal(rest) {
			t.Fatalf("go-smb2 Stat after REST set the last-write time: %v, %v; want %v", fi.ModTime(), err, rest)
		}
		dp, err := top.GetProperties(ctx(t), nil)
		must(t, err)
		if di, err := fs.Stat("top"); err != nil || !di.IsDir() || !di.ModTime().Equal(*dp.FileLastWriteTime) {
			t.Fatalf("go-smb2 Stat of top: %v, %v; REST last-write time %v", di, err, *dp.FileLastWriteTime)
		}

		// Names that exist or do not, as go-smb2 maps their statuses.
		if _, err := fs.OpenFile(`top\a.txt`, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644); !os.IsExist(err) {
			t.Fatalf("go-smb2 create-new of an existing file: %v, want STATUS_OBJECT_NAME_COLLISION", err)
		}
		if err := fs.Mkdir("top", 0o755); !os.IsExist(err) {
			t.Fatalf("go-smb2 Mkdir of an existing directory: %v, want STATUS_OBJECT_NAME_COLLISION", err)
		}
		if _, err := fs.Open(`nodir\x.txt`); !os.IsNotExist(err) {
			t.Fatalf("go-smb2 open under a missing directory: %v, want STATUS_OBJECT_PATH_NOT_FOUND", err)
		}
		if err := fs.Rename(`top\a.txt`, `top\sub\b.bin`); !os.IsExist(err) {
			t.Fatalf("go-smb2 Rename onto an existing file: %v, want STATUS_OBJECT_NAME_COLLISION", err)
		}
		if err := fs.Truncate("top", 0); ntStatus(errors.Unwrap(err)) != 0xC00000BA {
			t.Fatalf("go-smb2 Truncate of a directory: %v, want STATUS_FILE_IS_A_DIRECTORY", err)
		}

		must(t, fs.Rename(`top\a.txt`, `top\sub\renamed.txt`))
		if _, err := fa.GetProperties(ctx(t), nil); code(err) != "404 ResourceNotFound" {
			t.Fatalf("REST of the old name after rename: %s", code(err))
		}
		fr := top.NewSubdirectoryClient("sub").NewFileClient("renamed.txt")
		if got := download(t, fr); string(got) != "hello, world" {
			t.Fatalf("REST reads the renamed file as %q", got)
		}
		if _, err := fs.Stat(`top\a.txt`); !os.IsNotExist(err) {
			t.Fatalf("go-smb2 Stat of the old name: %v", err)
		}

		must(t, fs.Truncate(`top\sub\renamed.txt`, 5))
		if got := download(t, fr); string(got) != "hello" {
			t.Fatalf("REST after truncating to 5: %q", got)
		}
		must(t, fs.Truncate(`top\sub\renamed.txt`, 9))
		p, err = fr.GetProperties(ctx(t), nil)
		must(t, err)
		if got := download(t, fr); *p.ContentLength != 9 || string(got) != "hello\x00\x00\x00\x00" {
			t.Fatalf("REST after extending to 9: length %d, %q", *p.ContentLength, got)
		}

		must(t, fs.Remove(`top\sub\renamed.txt`))
		if _, err := fr.GetProperties(ctx(t), nil); code(err) != "404 ResourceNotFound" {
			t.Fatalf("REST after go-smb2 Remove: %s", code(err))
		}
		if err := fs.Remove("top"); ntStatus(errors.Unwrap(err)) != 0xC0000101 {
			t.Fatalf("go-smb2 Remove of a directory that is not empty: %v, want STATUS_DIRECTORY_NOT_EMPTY", err)
		}
		must(t, fs.RemoveAll("top"))
		if _, err := top.GetProperties(ctx(t), nil); code(err) != "404 ResourceNotFound" {
			t.Fatalf("REST after go-smb2 RemoveAll: %s", code(err))
		}
		if got := restEntries(t, e.share.NewRootDirectoryClient()); len(got) != 0 {
			t.Fatalf("REST lists the root after RemoveAll: %v", got)
		}
	})
}

// TestGoSMB2ReadsRESTWrites: a multi-MiB file uploaded over REST reads
// back whole over go-smb2; an SMB write at an offset and a REST Put
// Range at another are each seen by the other side.
func TestGoSMB2ReadsRESTWrites(t *testing.T) {
	engines(t, func(t *testing.T, e *env) {
		data := random(5<<20 + 123)
		f := e.file("big.bin")
		_, err := f.Create(ctx(t), int64(len(data)), nil)
		must(t, err)
		must(t, f.UploadBuffer(ctx(t), data, nil))
		fs := e.goSMB2(t, 0x0311)
		got, err := fs.ReadFile("big.bin")
		must(t, err)
		if !bytes.Equal(got, data) {
			t.Fatalf("go-smb2 reads %d bytes of the REST upload, want %d", len(got), len(data))
		}

		h, err := fs.OpenFile("big.bin", os.O_RDWR, 0)
		must(t, err)
		defer h.Close()
		patch := random(100000)
		off := int64(3<<20 - 5000) // unaligned, across the 3 MiB mark
		if n, err := h.WriteAt(patch, off); err != nil || n != len(patch) {
			t.Fatalf("WriteAt: %d, %v", n, err)
		}
		copy(data[off:], patch)
		// Past the end: the file grows, the gap reads as zeros.
		tail := []byte("tail")
		end := int64(len(data)) + 10
		if _, err := h.WriteAt(tail, end); err != nil {
			t.Fatal(err)
		}
		data = append(append(data, make([]byte, 10)...), tail...)
		if rest := download(t, f); !bytes.Equal(rest, data) {
			t.Fatalf("REST reads %d bytes after the SMB offset writes, want %d (equal prefix %d)", len(rest), len(data), commonPrefix(rest, data))
		}

		rp := random(8192)
		_, err = f.UploadRange(ctx(t), 1<<20, body(rp), nil)
		must(t, err)
		buf := make([]byte, len(rp)+2)
		if n, err := h.ReadAt(buf, 1<<20-1); err != nil || n != len(buf) {
			t.Fatalf("ReadAt: %d, %v", n, err)
		}
		if buf[0] != data[1<<20-1] || !bytes.Equal(buf[1:len(rp)+1], rp) || buf[len(rp)+1] != data[1<<20+len(rp)] {
			t.Fatal("go-smb2 ReadAt does not see the REST Put Range")
		}
	})
}

func commonPrefix(a, b []byte) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// TestGoSMB2HandlesAndShareModes: go-smb2's opens are REST's List
// Handles while open and gone after Close. go-smb2 opens files sharing
// read and write but not delete, so REST Delete File of a file it holds
// and Create File over it are 409 SharingViolation, while Get File and
// Put Range go through.
func TestGoSMB2HandlesAndShareModes(t *testing.T) {
	engines(t, func(t *testing.T, e *env) {
		fs := e.goSMB2(t, 0x0311)
		f := e.createFile(t, "held.txt", []byte("0123456789"))
		must(t, fs.Mkdir("d", 0o755))
		h, err := fs.OpenFile("held.txt", os.O_RDWR, 0)
		must(t, err)
		dh, err := fs.Open("d")
		must(t, err)

		hs, err := f.ListHandles(ctx(t), nil)
		must(t, err)
		if len(hs.Handles) != 1 || *hs.Handles[0].Path != "held.txt" {
			t.Fatalf("List Handles of held.txt while go-smb2 holds it: %+v", hs.Handles)
		}
		root := e.share.NewRootDirectoryClient()
		all, err := root.ListHandles(ctx(t), &directory.ListHandlesOptions{Recursive: to(true)})
		must(t, err)
		var paths []string
		for _, x := range all.Handles {
			paths = append(paths, *x.Path)
		}
		slices.Sort(paths)
		if !slices.Equal(paths, []string{"d", "held.txt"}) {
			t.Fatalf("recursive List Handles of the root: %q, want d and held.txt", paths)
		}

		if _, err := f.Delete(ctx(t), nil); code(err) != "409 SharingViolation" {
			t.Fatalf("REST Delete File of a file go-smb2 holds: %s, want 409 SharingViolation", code(err))
		}
		if _, err := f.Create(ctx(t), 4, nil); code(err) != "409 SharingViolation" {
			t.Fatalf("REST Create File over a file go-smb2 holds: %s, want 409 SharingViolation", code(err))
		}
		if got := download(t, f); string(got) != "0123456789" {
			t.Fatalf("REST Get File while go-smb2 holds it: %q", got)
		}
		_, err = f.UploadRange(ctx(t), 0, body([]byte("AB")), nil)
		must(t, err)
		if _, err := e.share.NewDirectoryClient("d").Delete(ctx(t), nil); code(err) != "409 SharingViolation" {
			t.Fatalf("REST Delete Directory go-smb2 holds: %s, want 409 SharingViolation", code(err))
		}

		must(t, h.Close())
		must(t, dh.Close())
		all, err = root.ListHandles(ctx(t), &directory.ListHandlesOptions{Recursive: to(true)})
		must(t, err)
		if len(all.Handles) != 0 {
			t.Fatalf("List Handles after go-smb2 closed: %d handles", len(all.Handles))
		}
		_, err = f.Delete(ctx(t), nil)
		must(t, err)
		_, err = e.share.NewDirectoryClient("d").Delete(ctx(t), nil)
		must(t, err)
	})
}

// TestGoSMB2RaceDistinctRanges: many go-smb2 sessions open one new file
// at once (open-if, sharing read and write) and each writes its own
// range; REST then downloads every byte.
func TestGoSMB2RaceDistinctRanges(t *testing.T) {
	engines(t, func(t *testing.T, e *env) {
		const n, chunk = 8, 96<<10 + 3
		shares := make([]*smb2.Share, n)
		for i := range shares {
			shares[i] = e.goSMB2(t, 0x0311)
		}
		data := random(n * chunk)
		errs := make([]error, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i, fs := range shares {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				f, err := fs.OpenFile("race.bin", os.O_RDWR|os.O_CREATE, 0o644)
				if err != nil {
					errs[i] = err
					return
				}
				_, err = f.WriteAt(data[i*chunk:(i+1)*chunk], int64(i*chunk))
				if cerr := f.Close(); err == nil {
					err = cerr
				}
				errs[i] = err
			}()
		}
		close(start)
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("session %d: %v", i, err)
			}
		}
		if got := download(t, e.file("race.bin")); !bytes.Equal(got, data) {
			t.Fatalf("REST reads %d bytes, want %d (equal prefix %d)", len(got), len(data), commonPrefix(got, data))
		}
		hs, err := e.file("race.bin").ListHandles(ctx(t), nil)
		must(t, err)
		if len(hs.Handles) != 0 {
			t.Fatalf("List Handles after every session closed: %d", len(hs.Handles))
		}
	})
}

// TestGoSMB2StatfsIsQuota: the volume size go-smb2's Statfs reports is
// the share's quota in 4 KiB units, with what its files use taken off
// the free space.
func TestGoSMB2StatfsIsQuota(t *testing.T) {
	engines(t, func(t *testing.T, e *env) {
		_, err := e.share.SetProperties(ctx(t), &share.SetPropertiesOptions{Quota: to(int32(5))})
		must(t, err)
		e.createFile(t, "used.bin", random(40960))
		fs := e.goSMB2(t, 0x0311)
		st, err := fs.Statfs("")
		must(t, err)
		// go-smb2's BlockSize is the bytes per sector and its
		// FragmentSize the sectors per allocation unit.
		unit := st.BlockSize() * st.FragmentSize()
		if unit != 4096 || st.TotalBlockCount() != 5<<30/4096 || st.AvailableBlockCount() != (5<<30-40960)/4096 ||
			st.FreeBlockCount() != st.AvailableBlockCount() {
			t.Fatalf("Statfs: unit %d, total %d, free %d, available %d; want 4096, %d, %d, %d", unit, st.TotalBlockCount(),
				st.FreeBlockCount(), st.AvailableBlockCount(), 5<<30/4096, (5<<30-40960)/4096, (5<<30-40960)/4096)
		}
	})
}

// A read-only file (go-smb2's Chmod 0444 sets FILE_ATTRIBUTE_READONLY)
// opens for reading only: an open for writing is STATUS_ACCESS_DENIED
// (MS-FSA 2.1.5.1.2.1) until the flag is cleared again. (go-smb2's Remove
// clears the flag itself when a delete is refused, so the refusal of
// delete-on-close is tested in package file.)
func TestGoSMB2ReadOnlyFile(t *testing.T) {
	engines(t, func(t *testing.T, e *env) {
		fs := e.goSMB2(t, 0x0311)
		must(t, fs.WriteFile("ro.txt", []byte("abc"), 0o644))
		must(t, fs.Chmod("ro.txt", 0o444))
		_, err := fs.OpenFile("ro.txt", os.O_WRONLY, 0)
		if !errors.Is(err, os.ErrPermission) { // go-smb2's STATUS_ACCESS_DENIED
			t.Fatalf("open for writing of a read-only file: %v, want STATUS_ACCESS_DENIED", err)
		}
		b, err := fs.ReadFile("ro.txt")
		must(t, err)
		if string(b) != "abc" {
			t.Fatalf("read-only file reads %q, want abc", b)
		}
		must(t, fs.Chmod("ro.txt", 0o644))
		must(t, fs.WriteFile("ro.txt", []byte("xyz"), 0o644))
		if got := string(download(t, e.share.NewRootDirectoryClient().NewFileClient("ro.txt"))); got != "xyz" {
			t.Fatalf("after the flag is cleared REST reads %q, want xyz", got)
		}
		must(t, fs.Remove("ro.txt"))
	})
}

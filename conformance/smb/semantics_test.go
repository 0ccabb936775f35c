package smb_test

import (
	"bytes"
	"encoding/binary"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/lease"

	"github.com/lazuli-storage/lazuli/emulator"
	"github.com/lazuli-storage/lazuli/internal/smb/smbtest"
	"github.com/lazuli-storage/lazuli/internal/smb/wire"
)

var le = binary.LittleEndian

// More create dispositions, options and statuses of SMB CREATE.
const (
	supersede     = 0
	overwrite     = 4
	overwriteIf   = 5
	createNew     = 2
	dirFile       = 0x1
	deleteOnClose = 0x1000

	attrReadOnly = 0x1
	attrHidden   = 0x2
	attrSystem   = 0x4
	attrArchive  = 0x20

	statusCannotDelete = 0xC0000121
)

// createAttrs is a CREATE carrying file attributes.
func createAttrs(t *testing.T, c *smbtest.Client, path string, access, share, disposition, options, attrs uint32) (wire.FileID, uint32) {
	t.Helper()
	b := smbtest.CreateBody(path, access, share, disposition, options)
	le.PutUint32(b[28:], attrs)
	h, resp, err := c.Do(wire.Create, b)
	must(t, err)
	if h.Status != 0 {
		return wire.FileID{}, h.Status
	}
	r := resp[wire.HeaderSize:]
	return wire.FileID{Persistent: le.Uint64(r[64:]), Volatile: le.Uint64(r[72:])}, 0
}

// restBytes reads a file over REST.
func restBytes(t *testing.T, f *file.Client) []byte {
	t.Helper()
	r, err := f.DownloadStream(ctx(t), nil)
	must(t, err)
	defer r.Body.Close()
	b, err := io.ReadAll(r.Body)
	must(t, err)
	return b
}

// TestTruncatingOpenIsAWrite: CREATE with FILE_OVERWRITE,
// FILE_OVERWRITE_IF or FILE_SUPERSEDE truncates the file, so even when it
// asks only for read access it is checked as a write (supersede as a
// delete too) against the share modes of other opens and a REST lease,
// and a refused one changes no byte.
func TestTruncatingOpenIsAWrite(t *testing.T) {
	data := []byte("0123456789")
	engines(t, func(t *testing.T, e *env) {
		a, b := e.smb(t), e.smb(t)
		f := e.createFile(t, "t.txt", data)
		refused := func(what string, disp, share uint32) {
			t.Helper()
			if _, st := b.Create("t.txt", readData, shareR|shareW|shareD, disp, nonDir); st != smbtest.StatusSharingViolation {
				t.Errorf("%s, disposition %d: %#x, want STATUS_SHARING_VIOLATION", what, disp, st)
			}
			if got := restBytes(t, f); !bytes.Equal(got, data) {
				t.Fatalf("%s, disposition %d: the file holds %q", what, disp, got)
			}
		}
		// Another open denies writing: no truncation of any kind.
		fa, st := a.Create("t.txt", readData, shareR|shareD, openOnly, nonDir)
		if st != 0 {
			t.Fatalf("open: %#x", st)
		}
		for _, d := range []uint32{overwrite, overwriteIf, supersede} {
			refused("an open sharing read and delete", d, 0)
		}
		a.CloseFile(fa)
		// Another open shares writing but not deleting: supersede only
		// is refused.
		fa, _ = a.Create("t.txt", readData, shareR|shareW, openOnly, nonDir)
		refused("an open sharing read and write", supersede, 0)
		a.CloseFile(fa)
		// A REST lease: no truncation.
		lc, err := lease.NewFileClient(f, nil)
		must(t, err)
		_, err = lc.Acquire(ctx(t), nil)
		must(t, err)
		for _, d := range []uint32{overwrite, overwriteIf, supersede} {
			refused("a REST lease", d, 0)
		}
		_, err = lc.Release(ctx(t), nil)
		must(t, err)
		// With nothing in the way it truncates.
		fb, st := b.Create("t.txt", readData, shareR|shareW|shareD, overwrite, nonDir)
		if st != 0 {
			t.Fatalf("overwrite: %#x", st)
		}
		b.CloseFile(fb)
		if got := restBytes(t, f); len(got) != 0 {
			t.Fatalf("after the overwrite the file holds %q", got)
		}
	})
}

// TestSetSecurityAnswersSetInfo: a successful SET_INFO of a security
// descriptor answers with the SET_INFO response (StructureSize 2), not
// an error-shaped body clients read as a failure.
func TestSetSecurityAnswersSetInfo(t *testing.T) {
	engines(t, func(t *testing.T, e *env) {
		e.createFile(t, "sd.txt", []byte("x"))
		c := e.smb(t)
		fid, st := c.Create("sd.txt", readData|0x20000|0x40000, shareR|shareW|shareD, openOnly, nonDir)
		if st != 0 {
			t.Fatalf("open: %#x", st)
		}
		sd, st := c.QueryInfo(fid, wire.InfoSecurity, 0, 4, 4096)
		if st != 0 {
			t.Fatalf("QUERY_INFO security: %#x", st)
		}
		body := make([]byte, 32)
		le.PutUint16(body, 33)
		body[2] = wire.InfoSecurity
		le.PutUint32(body[4:], uint32(len(sd)))
		le.PutUint16(body[8:], wire.HeaderSize+32)
		le.PutUint32(body[12:], 4)
		le.PutUint64(body[16:], fid.Persistent)
		le.PutUint64(body[24:], fid.Volatile)
		h, resp, err := c.Do(wire.SetInfo, append(body, sd...))
		must(t, err)
		if h.Status != 0 || len(resp) != wire.HeaderSize+2 || le.Uint16(resp[wire.HeaderSize:]) != 2 {
			t.Fatalf("SET_INFO security: status %#x, body %x; want success with the 2-byte SET_INFO response",
				h.Status, resp[wire.HeaderSize:])
		}
	})
}

// TestLockStackingAndOwnSharedLocks: an open may take a shared lock over
// its own exclusive lock (granted at once, also when it may wait), its
// shared lock stops its own writes (FILE_LOCK_CONFLICT) while its
// exclusive lock does not, and another open's locks do not stop a
// truncating open (Windows and Samba).
func TestLockStackingAndOwnSharedLocks(t *testing.T) {
	engines(t, func(t *testing.T, e *env) {
		a, b := e.smb(t), e.smb(t)
		f := e.createFile(t, "l.txt", bytes.Repeat([]byte("x"), 100))
		fa, _ := a.Create("l.txt", readData|writeData, shareR|shareW|shareD, openOnly, nonDir)
		if st := a.Lock(fa, 0, 10, wire.LockExclusive|wire.LockFailImmediately); st != 0 {
			t.Fatalf("exclusive lock: %#x", st)
		}
		if st := a.Write(fa, 2, []byte("y")); st != 0 {
			t.Fatalf("write inside the open's own exclusive lock: %#x", st)
		}
		if st := a.Lock(fa, 0, 10, wire.LockShared|wire.LockFailImmediately); st != 0 {
			t.Fatalf("shared lock over the open's own exclusive lock: %#x", st)
		}
		if st := a.Lock(fa, 2, 4, wire.LockShared); st != 0 {
			t.Fatalf("waiting shared lock over the open's own exclusive lock: %#x", st)
		}
		if st := a.Lock(fa, 5, 10, wire.LockExclusive|wire.LockFailImmediately); st != smbtest.StatusLockNotGranted {
			t.Fatalf("exclusive lock over the open's own locks: %#x, want STATUS_LOCK_NOT_GRANTED", st)
		}
		if st := a.Lock(fa, 50, 10, wire.LockShared|wire.LockFailImmediately); st != 0 {
			t.Fatalf("shared lock: %#x", st)
		}
		if st := a.Write(fa, 55, []byte("y")); st != smbtest.StatusFileLockConflict {
			t.Fatalf("write inside the open's own shared lock: %#x, want STATUS_FILE_LOCK_CONFLICT", st)
		}
		if got, st := a.Read(fa, 50, 10); st != 0 || len(got) != 10 {
			t.Fatalf("read inside the open's own shared lock: %q %#x", got, st)
		}
		fb, st := b.Create("l.txt", readData|writeData, shareR|shareW|shareD, overwrite, nonDir)
		if st != 0 {
			t.Fatalf("truncating open of a file another open holds locks on: %#x", st)
		}
		b.CloseFile(fb)
		if got := restBytes(t, f); len(got) != 0 {
			t.Fatalf("after the overwrite the file holds %d bytes", len(got))
		}
	})
}

// TestDirectoryWithOpenFileDoesNotMove: renaming a directory with an
// open file inside is STATUS_ACCESS_DENIED, as on Windows, Samba and
// Azure Files; once the file is closed it moves.
func TestDirectoryWithOpenFileDoesNotMove(t *testing.T) {
	engines(t, func(t *testing.T, e *env) {
		c := e.smb(t)
		d, st := c.Create("d", readData|deleteAcc, shareR|shareW|shareD, createNew, dirFile)
		if st != 0 {
			t.Fatalf("mkdir: %#x", st)
		}
		fid, st := c.Create(`d\in.txt`, readData|writeData, shareR|shareW|shareD, createNew, nonDir)
		if st != 0 {
			t.Fatalf("create inside: %#x", st)
		}
		if st := rename(c, d, "d2"); st != smbtest.StatusAccessDenied {
			t.Fatalf("rename of a directory with an open file inside: %#x, want STATUS_ACCESS_DENIED", st)
		}
		c.CloseFile(fid)
		if st := rename(c, d, "d2"); st != 0 {
			t.Fatalf("rename once the file is closed: %#x", st)
		}
	})
}

// rename sends SET_INFO FileRenameInformation.
func rename(c *smbtest.Client, fid wire.FileID, to string) uint32 {
	name := wire.AppendUTF16(nil, to)
	b := make([]byte, 20)
	le.PutUint32(b[16:], uint32(len(name)))
	return c.SetInfo(fid, wire.InfoFile, 10, 0, append(b, name...))
}

// TestReadOnlyDeleteOnCloseCreate: a new file created READONLY with
// FILE_DELETE_ON_CLOSE is STATUS_CANNOT_DELETE, and nothing is created.
func TestReadOnlyDeleteOnCloseCreate(t *testing.T) {
	engines(t, func(t *testing.T, e *env) {
		c := e.smb(t)
		if _, st := createAttrs(t, c, "ro.txt", readData|writeData|deleteAcc, shareR|shareW|shareD, createNew,
			nonDir|deleteOnClose, attrReadOnly); st != statusCannotDelete {
			t.Fatalf("READONLY create with delete-on-close: %#x, want STATUS_CANNOT_DELETE", st)
		}
		if _, err := e.file("ro.txt").GetProperties(ctx(t), nil); code(err) != "404 ResourceNotFound" {
			t.Fatalf("the refused create left a file: %s", code(err))
		}
	})
}

// TestOverwriteHiddenOrSystem: overwriting (or superseding) a HIDDEN or
// SYSTEM file succeeds when the request carries those attributes and is
// STATUS_ACCESS_DENIED when it lacks one (MS-FSA 2.1.5.1.2.1), as Office
// owner files and desktop.ini need.
func TestOverwriteHiddenOrSystem(t *testing.T) {
	engines(t, func(t *testing.T, e *env) {
		c := e.smb(t)
		for _, attr := range []uint32{attrHidden, attrSystem, attrHidden | attrSystem} {
			fid, st := createAttrs(t, c, "h.txt", readData|writeData|deleteAcc, shareR|shareW|shareD, overwriteIf, nonDir, attr)
			if st != 0 {
				t.Fatalf("create with attributes %#x: %#x", attr, st)
			}
			c.Write(fid, 0, []byte("data"))
			c.CloseFile(fid)
			for _, d := range []uint32{overwrite, overwriteIf, supersede} {
				if _, st := createAttrs(t, c, "h.txt", readData|writeData, shareR|shareW|shareD, d, nonDir, attrArchive); st != smbtest.StatusAccessDenied {
					t.Fatalf("disposition %d without attributes %#x: %#x, want STATUS_ACCESS_DENIED", d, attr, st)
				}
				fid, st := createAttrs(t, c, "h.txt", readData|writeData|deleteAcc, shareR|shareW|shareD, d, nonDir, attr)
				if st != 0 {
					t.Fatalf("disposition %d with attributes %#x: %#x", d, attr, st)
				}
				c.CloseFile(fid)
			}
			fid, _ = c.Create("h.txt", readData|writeData|deleteAcc|0x100, shareR|shareW|shareD, openOnly, nonDir)
			c.SetDisposition(fid, true)
			c.CloseFile(fid)
		}
	})
}

const (
	statusInvalidParameter = 0xC000000D
	statusInvalidLockRange = 0xC00001A1
	statusRangeNotLocked   = 0xC000007E
)

// lockBody is a LOCK request of elements {offset, length, flags}.
func lockBody(fid wire.FileID, els ...[3]uint64) []byte {
	b := make([]byte, 24)
	le.PutUint16(b, 48)
	le.PutUint16(b[2:], uint16(len(els)))
	le.PutUint64(b[8:], fid.Persistent)
	le.PutUint64(b[16:], fid.Volatile)
	for _, e := range els {
		b = le.AppendUint64(le.AppendUint64(b, e[0]), e[1])
		b = le.AppendUint32(le.AppendUint32(b, uint32(e[2])), 0)
	}
	return b
}

func lockStatus(t *testing.T, c *smbtest.Client, fid wire.FileID, els ...[3]uint64) uint32 {
	t.Helper()
	h, _, err := c.Do(wire.Lock, lockBody(fid, els...))
	must(t, err)
	return h.Status
}

// TestLockEdgeAnswers pins LOCK's answers where Windows (and Samba, and
// smbtorture's smb2.lock) are particular: a zero-length lock conflicts
// with an exclusive lock holding its offset strictly inside, a range may
// end at 2^64 but not past it (INVALID_LOCK_RANGE), the flags of each
// element are validated (unlocks run up to the first element that is not
// one), a zero-byte read meets no lock, and a waiting lock whose open is
// closed ends with RANGE_NOT_LOCKED (CANCEL gives CANCELLED).
func TestLockEdgeAnswers(t *testing.T) {
	const (
		sh   = uint64(wire.LockShared)
		ex   = uint64(wire.LockExclusive)
		un   = uint64(wire.LockUnlock)
		now  = uint64(wire.LockFailImmediately)
		max  = ^uint64(0)
		none = 0
	)
	engines(t, func(t *testing.T, e *env) {
		a, b := e.smb(t), e.smb(t)
		e.createFile(t, "e.txt", bytes.Repeat([]byte("x"), 300))
		fa, _ := a.Create("e.txt", readData|writeData, shareR|shareW|shareD, openOnly, nonDir)
		fb, _ := b.Create("e.txt", readData|writeData, shareR|shareW|shareD, openOnly, nonDir)
		for _, c := range []struct {
			what string
			c    *smbtest.Client
			fid  wire.FileID
			els  [][3]uint64
			want uint32
		}{
			{"exclusive [100, 200)", a, fa, [][3]uint64{{100, 100, ex | now}}, 0},
			{"zero-length lock strictly inside it", b, fb, [][3]uint64{{102, 0, ex | now}}, smbtest.StatusLockNotGranted},
			{"zero-length lock at its start", b, fb, [][3]uint64{{100, 0, ex | now}}, 0},
			{"a second zero-length lock there", a, fa, [][3]uint64{{100, 0, sh | now}}, 0},
			{"a lock ending at 2^64", a, fa, [][3]uint64{{max, 1, ex | now}}, 0},
			{"the same range from another open", b, fb, [][3]uint64{{max, 1, ex | now}}, smbtest.StatusLockNotGranted},
			{"a lock ending past 2^64", a, fa, [][3]uint64{{max, 2, ex | now}}, statusInvalidLockRange},
			{"unlock with exclusive", a, fa, [][3]uint64{{100, 100, un | ex}}, statusInvalidParameter},
			{"unlock with shared", a, fa, [][3]uint64{{100, 100, un | sh}}, statusInvalidParameter},
			{"no flags", a, fa, [][3]uint64{{0, 1, none}}, statusInvalidParameter},
			{"two locks, one that may wait", a, fa, [][3]uint64{{0, 1, ex | now}, {5, 1, ex}}, statusInvalidParameter},
			{"unlock then a lock", a, fa, [][3]uint64{{100, 100, un}, {0, 10, ex | now}}, statusInvalidParameter},
			{"the unlock before the lock took effect", b, fb, [][3]uint64{{150, 10, ex | now}}, 0},
			{"unlocking what is not locked", a, fa, [][3]uint64{{100, 100, un}}, statusRangeNotLocked},
		} {
			if got := lockStatus(t, c.c, c.fid, c.els...); got != c.want {
				t.Errorf("%s: %#x, want %#x", c.what, got, c.want)
			}
		}
		// B holds [150, 160) exclusively: A reads zero bytes there.
		if got, st := a.Read(fa, 155, 0); st != 0 || len(got) != 0 {
			t.Errorf("zero-byte read in another open's lock: %q %#x", got, st)
		}
		// A waiting lock ends with RANGE_NOT_LOCKED when its open closes.
		mid, err := a.Send(wire.Lock, lockBody(fa, [3]uint64{150, 10, ex}))
		must(t, err)
		h, _, err := a.Recv()
		if err != nil || h.Status != smbtest.StatusPending {
			t.Fatalf("waiting lock: %#x %v", h.Status, err)
		}
		cmid, err := a.Send(wire.Close, closeBody(fa))
		must(t, err)
		got := map[uint64]uint32{}
		for len(got) < 2 {
			h, _, err := a.Recv()
			must(t, err)
			if h.Status != smbtest.StatusPending {
				got[h.MessageID] = h.Status
			}
		}
		if got[mid] != statusRangeNotLocked || got[cmid] != 0 {
			t.Fatalf("waiting lock of an open being closed: %#x (close %#x), want STATUS_RANGE_NOT_LOCKED", got[mid], got[cmid])
		}
	})
}

func closeBody(fid wire.FileID) []byte {
	b := make([]byte, 24)
	le.PutUint16(b, 24)
	le.PutUint64(b[8:], fid.Persistent)
	le.PutUint64(b[16:], fid.Volatile)
	return b
}

const (
	statusEndOfFile             = 0xC0000011
	statusNotSupported          = 0xC00000BB
	statusBadImpersonationLevel = 0xC00000A5
	statusInfoLengthMismatch    = 0xC0000004
	statusBufferOverflow        = 0x80000005
)

// rawCreate sends a CREATE body after edit changed it.
func rawCreate(t *testing.T, c *smbtest.Client, path string, edit func(b []byte) []byte) uint32 {
	t.Helper()
	b := smbtest.CreateBody(path, readData|writeData, shareR|shareW|shareD, openIf, nonDir)
	h, resp, err := c.Do(wire.Create, edit(b))
	must(t, err)
	if h.Status == 0 {
		r := resp[wire.HeaderSize:]
		c.CloseFile(wire.FileID{Persistent: le.Uint64(r[64:]), Volatile: le.Uint64(r[72:])})
	}
	return h.Status
}

// TestCreateFieldsValidated: what Windows refuses in a CREATE (MS-SMB2
// 3.3.5.9 and smbtorture's smb2.create.gentest, impersonation and
// leading-slash), lazuli refuses with the same status.
func TestCreateFieldsValidated(t *testing.T) {
	engines(t, func(t *testing.T, e *env) {
		c := e.smb(t)
		put32 := func(at int, v uint32) func([]byte) []byte {
			return func(b []byte) []byte { le.PutUint32(b[at:], v); return b }
		}
		// A create context named "xyz": names are four bytes or more.
		shortCtx := func(b []byte) []byte {
			for len(b)%8 != 0 {
				b = append(b, 0)
			}
			le.PutUint32(b[48:], uint32(wire.HeaderSize+len(b)))
			ctx := make([]byte, 16)
			le.PutUint16(ctx[4:], 16)
			le.PutUint16(ctx[6:], 3)
			ctx = append(ctx, "xyz"...)
			le.PutUint32(b[52:], uint32(len(ctx)))
			return append(b, ctx...)
		}
		for _, c2 := range []struct {
			what string
			path string
			edit func([]byte) []byte
			want uint32
		}{
			{"impersonation level 0x12345678", "c.txt", put32(4, 0x12345678), statusBadImpersonationLevel},
			{"reserved create options", "c.txt", put32(40, 0xF0000000), statusInvalidParameter},
			{"FILE_OPEN_BY_FILE_ID", "c.txt", put32(40, 0x2000), statusNotSupported},
			{"FILE_ATTRIBUTE_DEVICE", "c.txt", put32(28, 0x40), statusInvalidParameter},
			{"FILE_ATTRIBUTE_VOLUME", "c.txt", put32(28, 0x8), statusInvalidParameter},
			{"a reserved access bit", "c.txt", put32(24, 0x08000000), smbtest.StatusAccessDenied},
			{"a leading backslash", `\c.txt`, func(b []byte) []byte { return b }, statusInvalidParameter},
			{"a three-byte create context name", "c.txt", shortCtx, statusInvalidParameter},
			{"a plain create", "c.txt", func(b []byte) []byte { return b }, 0},
			{"SYNCHRONIZE alone", "c.txt", put32(24, 0x00100000), 0},
			{"a reserved access bit before bad attributes", "c.txt", func(b []byte) []byte {
				le.PutUint32(b[24:], 0x04000000)
				le.PutUint32(b[28:], 0x8)
				return b
			}, smbtest.StatusAccessDenied},
		} {
			if got := rawCreate(t, c, c2.path, c2.edit); got != c2.want {
				t.Errorf("%s: %#x, want %#x", c2.what, got, c2.want)
			}
		}
	})
}

func readStatus(t *testing.T, c *smbtest.Client, fid wire.FileID, off uint64, n uint32) uint32 {
	t.Helper()
	_, st := c.Read(fid, off, n)
	return st
}

// TestOffsetsAndSizesAnswers: offsets are signed 64-bit numbers. A read
// past the end of the file, however far, is END_OF_FILE; one whose range
// passes INT64_MAX, or a negative offset, INVALID_PARAMETER (smbtorture
// smb2.rw.invalid); a zero-length write changes nothing; a write past
// NTFS's largest file is INVALID_PARAMETER; set-end-of-file to -1 is
// INVALID_PARAMETER, not DISK_FULL.
func TestOffsetsAndSizesAnswers(t *testing.T) {
	const maxInt64 = 1<<63 - 1
	engines(t, func(t *testing.T, e *env) {
		c := e.smb(t)
		f := e.createFile(t, "o.txt", []byte("0123456789"))
		fid, st := c.Create("o.txt", readData|writeData, shareR|shareW|shareD, openOnly, nonDir)
		if st != 0 {
			t.Fatalf("open: %#x", st)
		}
		for _, r := range []struct {
			off  uint64
			n    uint32
			want uint32
		}{
			{10, 1, statusEndOfFile}, {maxInt64 - 1, 1, statusEndOfFile}, {maxInt64, 0, 0},
			{maxInt64, 1, statusInvalidParameter}, {maxInt64 + 1, 0, statusInvalidParameter}, {^uint64(0), 0, statusInvalidParameter},
		} {
			if got := readStatus(t, c, fid, r.off, r.n); got != r.want {
				t.Errorf("read of %d at %#x: %#x, want %#x", r.n, r.off, got, r.want)
			}
		}
		for _, w := range []struct {
			off  uint64
			data string
			want uint32
		}{
			{^uint64(0), "x", statusInvalidParameter}, {maxInt64, "x", statusInvalidParameter},
			{0xFFFFFFF0000, "x", statusInvalidParameter}, {maxInt64, "", 0}, {1 << 40, "", 0},
		} {
			if got := c.Write(fid, w.off, []byte(w.data)); got != w.want {
				t.Errorf("write of %d bytes at %#x: %#x, want %#x", len(w.data), w.off, got, w.want)
			}
		}
		if got := c.SetInfo(fid, wire.InfoFile, 20, 0, le.AppendUint64(nil, ^uint64(0))); got != statusInvalidParameter {
			t.Errorf("set end of file to -1: %#x, want STATUS_INVALID_PARAMETER", got)
		}
		p, err := f.GetProperties(ctx(t), nil)
		must(t, err)
		if *p.ContentLength != 10 {
			t.Fatalf("the file is %d bytes after zero-length writes past its end, want 10", *p.ContentLength)
		}
	})
}

// TestFSInfoBufferLengths: a QUERY_INFO of a variable-length file-system
// class with a buffer below its fixed part is INFO_LENGTH_MISMATCH, one
// holding the fixed part but not all is BUFFER_OVERFLOW (smbtorture
// smb2.getinfo.qfs_buffercheck).
func TestFSInfoBufferLengths(t *testing.T) {
	engines(t, func(t *testing.T, e *env) {
		c := e.smb(t)
		root, st := c.Create("", readAttrs, shareR|shareW|shareD, openOnly, dirFile)
		if st != 0 {
			t.Fatalf("open root: %#x", st)
		}
		for _, q := range []struct {
			class uint8
			max   uint32
			want  uint32
		}{
			{1, 23, statusInfoLengthMismatch}, {1, 24, statusBufferOverflow}, {1, 4096, 0},
			{5, 15, statusInfoLengthMismatch}, {5, 16, statusBufferOverflow}, {5, 4096, 0},
			{3, 23, statusInfoLengthMismatch}, {3, 24, 0},
		} {
			if _, got := c.QueryInfo(root, wire.InfoFilesystem, q.class, 0, q.max); got != q.want {
				t.Errorf("FS class %d with %d bytes: %#x, want %#x", q.class, q.max, got, q.want)
			}
		}
	})
}

// TestNullDACL: a security descriptor whose DACL is present but NULL
// (offset 0) is accepted, as Windows and Samba do (smbtorture
// smb2.create.nulldacl): it is "no access control", reads back as a NULL
// DACL, and REST sees D:NO_ACCESS_CONTROL.
func TestNullDACL(t *testing.T) {
	engines(t, func(t *testing.T, e *env) {
		f := e.createFile(t, "n.txt", []byte("x"))
		c := e.smb(t)
		fid, st := c.Create("n.txt", readData|0x20000|0x40000, shareR|shareW|shareD, openOnly, nonDir)
		if st != 0 {
			t.Fatalf("open: %#x", st)
		}
		sd := le.AppendUint16([]byte{1, 0}, 0x8000|0x0004)
		sd = append(sd, make([]byte, 16)...)
		if st := c.SetInfo(fid, wire.InfoSecurity, 0, 4, sd); st != 0 {
			t.Fatalf("SET_INFO of a NULL DACL: %#x", st)
		}
		got, st := c.QueryInfo(fid, wire.InfoSecurity, 0, 4, 4096)
		if st != 0 || len(got) < 20 || le.Uint16(got[2:])&0x0004 == 0 || le.Uint32(got[16:]) != 0 {
			t.Fatalf("QUERY_INFO after a NULL DACL was set: %x %#x; want DACL_PRESENT with no DACL", got, st)
		}
		p, err := f.GetProperties(ctx(t), nil)
		must(t, err)
		perm, err := e.share.GetPermission(ctx(t), *p.FilePermissionKey, nil)
		must(t, err)
		if !strings.Contains(*perm.Permission, "D:NO_ACCESS_CONTROL") {
			t.Fatalf("REST permission after a NULL DACL: %s", *perm.Permission)
		}
	})
}

// TestRenameWithParentOpen: renaming a file is refused with
// SHARING_VIOLATION while an open of the destination directory holds
// DELETE access or does not share write (smbtorture smb2.rename.*_delete_*:
// Windows renames through an open of that directory wanting to add an
// entry and sharing read and write); an open sharing write without DELETE
// access lets it through, sharing delete or not (smbtorture
// smb2.notify.rec renames inside a directory open sharing read and write).
func TestRenameWithParentOpen(t *testing.T) {
	engines(t, func(t *testing.T, e *env) {
		c := e.smb(t)
		d, st := c.Create("pd", readData, shareR|shareW|shareD, createNew, dirFile)
		if st != 0 {
			t.Fatalf("mkdir: %#x", st)
		}
		c.CloseFile(d)
		fid, st := c.Create(`pd\a.txt`, readData|writeData|deleteAcc, shareR|shareW|shareD, createNew, nonDir)
		if st != 0 {
			t.Fatalf("create: %#x", st)
		}
		for i, p := range []struct {
			access, share uint32
			want          uint32
		}{
			{readData | deleteAcc, shareR | shareW | shareD, smbtest.StatusSharingViolation},
			{readData, shareR | shareD, smbtest.StatusSharingViolation},
			{readData, 0, smbtest.StatusSharingViolation},
			{readData, shareR | shareW, 0},
			{readData, shareR | shareW | shareD, 0},
		} {
			d, st := c.Create("pd", p.access, p.share, openOnly, dirFile)
			if st != 0 {
				t.Fatalf("open the directory: %#x", st)
			}
			to := `pd\b` + strconv.Itoa(i) + ".txt"
			if got := rename(c, fid, to); got != p.want {
				t.Errorf("rename with the directory open for %#x sharing %d: %#x, want %#x", p.access, p.share, got, p.want)
			}
			c.CloseFile(d)
		}
	})
}

// TestChangeTimeSetStays: a change time set explicitly stays as set: a
// later SET_INFO that changes nothing (all zero) and writes through the
// handle leave it (MS-FSA Open.UserSetChangeTime; smbtorture
// smb2.setinfo), while the last-write time, not set, moves.
func TestChangeTimeSetStays(t *testing.T) {
	engines(t, func(t *testing.T, e *env) {
		e.createFile(t, "ct.txt", []byte("x"))
		c := e.smb(t)
		fid, st := c.Create("ct.txt", readData|writeData|0x100|0x80, shareR|shareW|shareD, openOnly, nonDir)
		if st != 0 {
			t.Fatalf("open: %#x", st)
		}
		when := uint64(time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC).Unix()+11644473600) * 1e7
		basic := func(change uint64) []byte {
			b := make([]byte, 40)
			le.PutUint64(b[24:], change)
			return b
		}
		if st := c.SetInfo(fid, wire.InfoFile, 4, 0, basic(when)); st != 0 {
			t.Fatalf("set the change time: %#x", st)
		}
		if st := c.SetInfo(fid, wire.InfoFile, 4, 0, basic(0)); st != 0 {
			t.Fatalf("set nothing: %#x", st)
		}
		if st := c.Write(fid, 0, []byte("y")); st != 0 {
			t.Fatalf("write: %#x", st)
		}
		got, st := c.QueryInfo(fid, wire.InfoFile, 4, 0, 40)
		if st != 0 {
			t.Fatalf("query: %#x", st)
		}
		if ct, wt := le.Uint64(got[24:]), le.Uint64(got[16:]); ct != when || wt <= when {
			t.Fatalf("change time %d (set %d), last-write time %d: want the change time as set and the last-write time moved", ct, when, wt)
		}
	})
}

// TestDeleteShareWithOpenHandles settles REST Delete Share while SMB
// handles are open in the share. Azure documents no error for it (the
// error table of Azure Files has none, Delete Share lists only lease
// conditions) and deletes the share, closing what is open in it: Delete
// Share answers 202, the open handles are gone (their next operation
// answers FILE_CLOSED, or NETWORK_NAME_DELETED for the tree), and a new
// tree connect finds no share.
func TestDeleteShareWithOpenHandles(t *testing.T) {
	engines(t, func(t *testing.T, e *env) {
		e.createFile(t, "open.txt", []byte("data"))
		c := e.smb(t)
		fid, st := c.Create("open.txt", readData|writeData, 0, openOnly, nonDir)
		if st != 0 {
			t.Fatalf("open: %#x", st)
		}
		if _, err := e.share.Delete(ctx(t), nil); err != nil {
			t.Fatalf("Delete Share with an SMB handle open: %s", code(err))
		}
		if _, st := c.Read(fid, 0, 4); st != smbtest.StatusFileClosed && st != statusNetworkNameDeleted {
			t.Fatalf("read through a handle of the deleted share: %#x, want STATUS_FILE_CLOSED or STATUS_NETWORK_NAME_DELETED", st)
		}
		d := e.smbNoTree(t)
		if err := d.TreeConnect(e.name); err == nil {
			t.Fatal("tree connect to the deleted share succeeded")
		}
	})
}

const statusNetworkNameDeleted = 0xC00000C9

func (e *env) smbNoTree(t *testing.T) *smbtest.Client {
	t.Helper()
	c, err := smbtest.Dial(e.em.SMBAddr(), emulator.Account, emulator.Key)
	must(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

// TestCompoundValidation: a compound whose first request says it is
// related is INVALID_PARAMETER, and so are the requests related to it; a
// related request of an unknown command is INVALID_PARAMETER, not the
// status of the request before it (smbtorture smb2.compound.invalid1 and
// invalid4, MS-SMB2 3.3.5.2.7.2).
func TestCompoundValidation(t *testing.T) {
	engines(t, func(t *testing.T, e *env) {
		c := e.smb(t)
		e.createFile(t, "empty.txt", nil)
		bogus := wire.FileID{Persistent: ^uint64(0), Volatile: ^uint64(0)}
		create := smbtest.CreateBody("cmp.txt", readData|writeData|deleteAcc, shareR|shareW|shareD, openIf, nonDir)
		hs, _, err := c.CompoundFlags([]bool{true, true, false}, []uint16{wire.Create, wire.Close, wire.Close},
			[][]byte{create, closeBody(bogus), closeBody(bogus)})
		must(t, err)
		if hs[0].Status != statusInvalidParameter || hs[1].Status != statusInvalidParameter || hs[2].Status != smbtest.StatusFileClosed {
			t.Errorf("first request related: %#x, %#x, %#x; want INVALID_PARAMETER, INVALID_PARAMETER, FILE_CLOSED",
				hs[0].Status, hs[1].Status, hs[2].Status)
		}
		fid, st := c.Create("empty.txt", readData, shareR|shareW|shareD, openOnly, nonDir)
		if st != 0 {
			t.Fatalf("open: %#x", st)
		}
		read := make([]byte, 49)
		le.PutUint16(read, 49)
		le.PutUint32(read[4:], 1)
		le.PutUint64(read[16:], fid.Persistent)
		le.PutUint64(read[24:], fid.Volatile)
		hs, _, err = c.Compound(true, []uint16{wire.Read, 0xff}, [][]byte{read, {4, 0, 0, 0}})
		must(t, err)
		if hs[0].Status != statusEndOfFile || hs[1].Status != statusInvalidParameter {
			t.Errorf("READ at the end, then a related unknown command: %#x, %#x; want END_OF_FILE, INVALID_PARAMETER",
				hs[0].Status, hs[1].Status)
		}
	})
}

// TestInfoAnswers pins SET_INFO and QUERY_INFO answers smbtorture checks
// against Windows: a file cannot be given the DIRECTORY attribute nor a
// directory TEMPORARY (INVALID_PARAMETER); a file pending deletion has no
// links; FileFsControlInformation answers (no quotas); and in a compound
// a READ related to a refused WRITE still reads (only a failed CREATE is
// inherited).
func TestInfoAnswers(t *testing.T) {
	engines(t, func(t *testing.T, e *env) {
		c := e.smb(t)
		basic := func(attrs uint32) []byte { return le.AppendUint32(make([]byte, 32), attrs)[:36:36] }
		fid, st := c.Create("i.txt", readData|writeData|deleteAcc|0x100|0x80, shareR|shareW|shareD, openIf, nonDir)
		if st != 0 {
			t.Fatalf("create: %#x", st)
		}
		c.Write(fid, 0, []byte("abc"))
		if st := c.SetInfo(fid, wire.InfoFile, 4, 0, append(basic(0x10), 0, 0, 0, 0)); st != statusInvalidParameter {
			t.Errorf("DIRECTORY attribute on a file: %#x, want STATUS_INVALID_PARAMETER", st)
		}
		d, st := c.Create("idir", readData|0x100|0x80, shareR|shareW|shareD, createNew, dirFile)
		if st != 0 {
			t.Fatalf("mkdir: %#x", st)
		}
		if st := c.SetInfo(d, wire.InfoFile, 4, 0, append(basic(0x100), 0, 0, 0, 0)); st != statusInvalidParameter {
			t.Errorf("TEMPORARY attribute on a directory: %#x, want STATUS_INVALID_PARAMETER", st)
		}
		if _, st := c.QueryInfo(d, wire.InfoFilesystem, 6, 0, 48); st != 0 {
			t.Errorf("FileFsControlInformation: %#x", st)
		}
		if st := c.SetDisposition(fid, true); st != 0 {
			t.Fatalf("set delete pending: %#x", st)
		}
		std, st := c.QueryInfo(fid, wire.InfoFile, 5, 0, 24)
		if st != 0 || le.Uint32(std[16:]) != 0 || std[20] != 1 {
			t.Errorf("FileStandardInformation of a file pending deletion: %x %#x; want no links, delete pending", std, st)
		}
		c.SetDisposition(fid, false)
		ro, st := c.Create("i.txt", readData, shareR|shareW|shareD, openOnly, nonDir)
		if st != 0 {
			t.Fatalf("open for reading: %#x", st)
		}
		rel := wire.FileID{Persistent: ^uint64(0), Volatile: ^uint64(0)}
		read := make([]byte, 49)
		le.PutUint16(read, 49)
		le.PutUint32(read[4:], 1)
		le.PutUint64(read[16:], ro.Persistent)
		le.PutUint64(read[24:], ro.Volatile)
		write := make([]byte, 48)
		le.PutUint16(write, 49)
		le.PutUint16(write[2:], wire.HeaderSize+48)
		le.PutUint32(write[4:], 1)
		le.PutUint64(write[16:], rel.Persistent)
		le.PutUint64(write[24:], rel.Volatile)
		relRead := append([]byte(nil), read...)
		le.PutUint64(relRead[16:], rel.Persistent)
		le.PutUint64(relRead[24:], rel.Volatile)
		hs, _, err := c.Compound(true, []uint16{wire.Read, wire.Write, wire.Read}, [][]byte{read, append(write, 'x'), relRead})
		must(t, err)
		if hs[0].Status != 0 || hs[1].Status != smbtest.StatusAccessDenied || hs[2].Status != 0 {
			t.Errorf("READ, WRITE, READ related on a read-only open: %#x, %#x, %#x; want success, ACCESS_DENIED, success",
				hs[0].Status, hs[1].Status, hs[2].Status)
		}
	})
}

// ioctl sends an FSCTL and returns the status and output.
func ioctl(t *testing.T, c *smbtest.Client, fid wire.FileID, code uint32, in []byte, max uint32) (uint32, []byte) {
	t.Helper()
	b := make([]byte, 56)
	le.PutUint16(b, 57)
	le.PutUint32(b[4:], code)
	le.PutUint64(b[8:], fid.Persistent)
	le.PutUint64(b[16:], fid.Volatile)
	le.PutUint32(b[24:], wire.HeaderSize+56)
	le.PutUint32(b[28:], uint32(len(in)))
	le.PutUint32(b[44:], max)
	le.PutUint32(b[48:], 1)
	h, resp, err := c.Do(wire.Ioctl, append(b, in...))
	must(t, err)
	r := resp[wire.HeaderSize:]
	if len(r) < 48 || le.Uint16(r) != 49 {
		return h.Status, nil
	}
	off, n := le.Uint32(r[32:]), le.Uint32(r[36:])
	return h.Status, resp[off : off+n]
}

// TestServerSideCopy: FSCTL_SRV_REQUEST_RESUME_KEY and
// FSCTL_SRV_COPYCHUNK copy within the share without the bytes crossing
// the network (smbclient's scopy, Explorer, Linux cifs copy_file_range);
// REST reads what was copied; a bad key is OBJECT_NAME_NOT_FOUND, a range
// past the source's end INVALID_VIEW_SIZE, a source range another open
// locked FILE_LOCK_CONFLICT, limits INVALID_PARAMETER with the server's
// limits in the answer.
func TestServerSideCopy(t *testing.T) {
	engines(t, func(t *testing.T, e *env) {
		data := bytes.Repeat([]byte("0123456789abcdef"), 8192) // 128 KiB
		e.createFile(t, "src.bin", data)
		out, err := e.smbclient(t, e.name, []string{"-m", "SMB3"}, "scopy src.bin copy.bin")
		if err != nil || strings.Contains(out, "NT_STATUS") {
			t.Fatalf("smbclient scopy: %v\n%s", err, out)
		}
		if got := restBytes(t, e.file("copy.bin")); !bytes.Equal(got, data) {
			t.Fatalf("REST reads %d bytes of the server-side copy, want the %d of the source", len(got), len(data))
		}

		c, other := e.smb(t), e.smb(t)
		src, _ := c.Create("src.bin", readData, shareR|shareW|shareD, openOnly, nonDir)
		dst, _ := c.Create("dst.bin", readData|writeData, shareR|shareW|shareD, openIf, nonDir)
		st, key := ioctl(t, c, src, 0x00140078, nil, 32)
		if st != 0 || len(key) < 24 {
			t.Fatalf("FSCTL_SRV_REQUEST_RESUME_KEY: %#x %x", st, key)
		}
		copyReq := func(key []byte, chunks ...[3]uint64) []byte {
			b := append(append([]byte(nil), key[:24]...), make([]byte, 8)...)
			le.PutUint32(b[24:], uint32(len(chunks)))
			for _, ch := range chunks {
				b = le.AppendUint64(le.AppendUint64(b, ch[0]), ch[1])
				b = le.AppendUint64(b, ch[2]) // Length and Reserved
			}
			return b
		}
		st, res := ioctl(t, c, dst, 0x001440F2, copyReq(key, [3]uint64{16, 0, 4096}, [3]uint64{0, 4096, 16}), 12)
		if st != 0 || len(res) != 12 || le.Uint32(res) != 2 || le.Uint32(res[8:]) != 4112 {
			t.Fatalf("FSCTL_SRV_COPYCHUNK: %#x %x", st, res)
		}
		if got := restBytes(t, e.file("dst.bin")); !bytes.Equal(got, append(append([]byte(nil), data[16:4112]...), data[:16]...)) {
			t.Fatalf("REST reads %q... of the copied chunks", got[:32])
		}
		bad := bytes.Repeat([]byte("x"), 24)
		if st, _ := ioctl(t, c, dst, 0x001440F2, copyReq(bad, [3]uint64{0, 0, 16}), 12); st != 0xC0000034 {
			t.Errorf("unknown resume key: %#x, want STATUS_OBJECT_NAME_NOT_FOUND", st)
		}
		if st, _ := ioctl(t, c, dst, 0x001440F2, copyReq(key, [3]uint64{uint64(len(data)) - 8, 0, 16}), 12); st != statusInvalidViewSize {
			t.Errorf("a range past the source's end: %#x, want STATUS_INVALID_VIEW_SIZE", st)
		}
		st, res = ioctl(t, c, dst, 0x001440F2, copyReq(key, [3]uint64{0, 0, 2 << 20}), 12)
		if st != statusInvalidParameter || len(res) != 12 || le.Uint32(res) != 256 || le.Uint32(res[4:]) != 1<<20 || le.Uint32(res[8:]) != 16<<20 {
			t.Errorf("a chunk over the limit: %#x %x, want STATUS_INVALID_PARAMETER with the limits", st, res)
		}
		lk, _ := other.Create("src.bin", readData|writeData, shareR|shareW|shareD, openOnly, nonDir)
		if st := other.Lock(lk, 0, 100, wire.LockExclusive|wire.LockFailImmediately); st != 0 {
			t.Fatalf("lock: %#x", st)
		}
		if st, _ := ioctl(t, c, dst, 0x001440F2, copyReq(key, [3]uint64{0, 0, 16}), 12); st != smbtest.StatusFileLockConflict {
			t.Errorf("copy of a range another open locked: %#x, want STATUS_FILE_LOCK_CONFLICT", st)
		}
	})
}

const statusInvalidViewSize = 0xC000001F

// withContext adds one create context to a CREATE body.
func withContext(b []byte, name string, data []byte) []byte {
	for len(b)%8 != 0 {
		b = append(b, 0)
	}
	le.PutUint32(b[48:], uint32(wire.HeaderSize+len(b)))
	ctx := make([]byte, 16)
	le.PutUint16(ctx[4:], 16)
	le.PutUint16(ctx[6:], uint16(len(name)))
	ctx = append(ctx, name...)
	for len(ctx)%8 != 0 {
		ctx = append(ctx, 0)
	}
	le.PutUint16(ctx[10:], uint16(len(ctx)))
	le.PutUint32(ctx[12:], uint32(len(data)))
	ctx = append(ctx, data...)
	le.PutUint32(b[52:], uint32(len(ctx)))
	return append(b, ctx...)
}

// TestAllocationSizeAtCreate: the allocation size a CREATE asks for
// ("AlSi", rounded up to whole 4 KiB clusters), or sets later, is what the
// open reports while the file is smaller (smbtorture smb2.create.blob and
// smb2.setinfo); the file's size does not change.
func TestAllocationSizeAtCreate(t *testing.T) {
	engines(t, func(t *testing.T, e *env) {
		c := e.smb(t)
		b := withContext(smbtest.CreateBody("alloc.bin", readData|writeData, shareR|shareW|shareD, openIf, nonDir),
			"AlSi", le.AppendUint64(nil, 1<<20-100))
		h, resp, err := c.Do(wire.Create, b)
		must(t, err)
		if h.Status != 0 {
			t.Fatalf("create: %#x", h.Status)
		}
		r := resp[wire.HeaderSize:]
		if alloc, eof := le.Uint64(r[40:]), le.Uint64(r[48:]); alloc != 1<<20 || eof != 0 {
			t.Fatalf("CREATE response: allocation %d, end of file %d; want 1 MiB and 0", alloc, eof)
		}
		fid := wire.FileID{Persistent: le.Uint64(r[64:]), Volatile: le.Uint64(r[72:])}
		std, st := c.QueryInfo(fid, wire.InfoFile, 5, 0, 24)
		if st != 0 || le.Uint64(std) != 1<<20 || le.Uint64(std[8:]) != 0 {
			t.Fatalf("FileStandardInformation: %x %#x; want allocation 1 MiB, end of file 0", std, st)
		}
		p, err := e.file("alloc.bin").GetProperties(ctx(t), nil)
		must(t, err)
		if *p.ContentLength != 0 {
			t.Fatalf("REST Content-Length %d, want 0", *p.ContentLength)
		}
		// SET_INFO FileAllocationInformation sets it too (smbtorture
		// smb2.setinfo).
		for _, v := range []uint64{0, 4096, 10} {
			if st := c.SetInfo(fid, wire.InfoFile, 19, 0, le.AppendUint64(nil, v)); st != 0 {
				t.Fatalf("set allocation %d: %#x", v, st)
			}
			std, _ := c.QueryInfo(fid, wire.InfoFile, 5, 0, 24)
			if want := (v + 4095) &^ 4095; le.Uint64(std) != want || le.Uint64(std[8:]) != 0 {
				t.Fatalf("after setting the allocation to %d: allocation %d, end of file %d; want %d, 0", v, le.Uint64(std), le.Uint64(std[8:]), want)
			}
		}
	})
}

// TestPositionInformation: the current byte offset set through
// FilePositionInformation, and the mode through FileModeInformation, read
// back as set (smbtorture smb2.setinfo), in their classes and in
// FileAllInformation; a mode bit fixed at create is INVALID_PARAMETER.
func TestPositionInformation(t *testing.T) {
	engines(t, func(t *testing.T, e *env) {
		e.createFile(t, "pos.txt", []byte("x"))
		c := e.smb(t)
		fid, st := c.Create("pos.txt", readData, shareR|shareW|shareD, openOnly, nonDir)
		if st != 0 {
			t.Fatalf("open: %#x", st)
		}
		if st := c.SetInfo(fid, wire.InfoFile, 14, 0, le.AppendUint64(nil, 123456)); st != 0 {
			t.Fatalf("set position: %#x", st)
		}
		if got, st := c.QueryInfo(fid, wire.InfoFile, 14, 0, 8); st != 0 || le.Uint64(got) != 123456 {
			t.Fatalf("FilePositionInformation: %x %#x, want 123456", got, st)
		}
		if got, st := c.QueryInfo(fid, wire.InfoFile, 18, 0, 4096); st != 0 || le.Uint64(got[80:]) != 123456 {
			t.Fatalf("FileAllInformation position: %x %#x, want 123456", got, st)
		}
		// The mode: write-through may be set, FILE_DIRECTORY_FILE (1) not.
		if st := c.SetInfo(fid, wire.InfoFile, 16, 0, le.AppendUint32(nil, 2)); st != 0 {
			t.Fatalf("set mode 2: %#x", st)
		}
		if got, st := c.QueryInfo(fid, wire.InfoFile, 16, 0, 4); st != 0 || le.Uint32(got) != 2 {
			t.Fatalf("FileModeInformation: %x %#x, want 2", got, st)
		}
		if st := c.SetInfo(fid, wire.InfoFile, 16, 0, le.AppendUint32(nil, 1)); st != statusInvalidParameter {
			t.Fatalf("set mode 1: %#x, want STATUS_INVALID_PARAMETER", st)
		}
	})
}

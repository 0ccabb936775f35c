package file

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strconv"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/content"
	"github.com/lazuli-storage/lazuli/internal/engine/memstore"
	"github.com/lazuli-storage/lazuli/storage"
)

func newSvc(t *testing.T) (*Service, context.Context) {
	t.Helper()
	eng := memstore.New()
	t.Cleanup(func() { eng.Close() })
	n := 0
	svc := New(eng, time.Now, func() string { n++; return "id-" + strconv.FormatInt(int64(n), 10) })
	return svc, context.Background()
}

func mustNil(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func wantCode(t *testing.T, what string, err error, code azerr.Code) {
	t.Helper()
	e, ok := azerr.As(err)
	if code == 0 {
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return
	}
	if !ok || e.Code != code {
		t.Fatalf("%s: got %v, want %s", what, err, code)
	}
}

// setup makes share "s" with a 1 KiB file "d/f" holding bytes.
func setup(t *testing.T, svc *Service, ctx context.Context) Ref {
	t.Helper()
	_, err := svc.CreateShare(ctx, CreateShareRequest{Ref: ShareRef{Account: "a", Name: "s"}})
	mustNil(t, err)
	_, err = svc.Create(ctx, CreateRequest{Ref: Ref{Account: "a", Share: "s", Path: "d"}, Dir: true})
	mustNil(t, err)
	ref := Ref{Account: "a", Share: "s", Path: "d/f"}
	_, err = svc.Create(ctx, CreateRequest{Ref: ref, Size: 1024})
	mustNil(t, err)
	data, err := svc.Ingest(ctx, bytes.NewReader(bytes.Repeat([]byte{7}, 1024)), 1024, nil)
	mustNil(t, err)
	_, err = svc.PutRange(ctx, PutRangeRequest{Ref: ref, Start: 0, End: 1023, Data: data})
	mustNil(t, err)
	return ref
}

// insertHandle records an open handle on the node at ref directly, as the
// SMB server would.
func insertHandle(t *testing.T, svc *Service, ctx context.Context, ref Ref, h Handle, pending bool) {
	t.Helper()
	mustNil(t, svc.eng.Update(ctx, func(tx storage.Tx) error {
		sh, n, err := svc.resolve(tx, ref, false)
		if err != nil {
			return err
		}
		h.FileID = n.ID
		if h.ID == 0 {
			h.ID = newID()
		}
		n.Handles++
		n.DeletePending = n.DeletePending || pending
		if err := tx.Set(handleKey(sh.ID, n.ID, h.ID), encodeHandle(&h)); err != nil {
			return err
		}
		return putNode(tx, sh.ID, n)
	}))
}

// restOps runs each REST operation of the sharing table against ref.
func restOps(svc *Service, ctx context.Context, ref Ref) map[string]func() error {
	one := func() content.Ingested {
		d, _ := svc.Ingest(ctx, bytes.NewReader([]byte{1}), 1, nil)
		return d
	}
	size := int64(1024)
	meta := []content.KV{{"k", "v"}}
	return map[string]func() error{
		"CreateFile":        func() error { _, err := svc.Create(ctx, CreateRequest{Ref: ref, Size: 1024}); return err },
		"GetFile":           func() error { _, err := svc.Read(ctx, ref, 0, -1, false, ""); return err },
		"SetFileProperties": func() error { _, err := svc.Set(ctx, SetRequest{Ref: ref, Size: &size}); return err },
		"SetFileMetadata":   func() error { _, err := svc.Set(ctx, SetRequest{Ref: ref, Meta: &meta}); return err },
		"DeleteFile":        func() error { return svc.Delete(ctx, ref, false, "") },
		"PutRange": func() error {
			_, err := svc.PutRange(ctx, PutRangeRequest{Ref: ref, Start: 0, End: 0, Data: one()})
			return err
		},
		"ListRanges":        func() error { _, err := svc.ListRanges(ctx, ref, 0, -1, "", false, ""); return err },
		"GetFileProperties": func() error { _, err := svc.Get(ctx, ref, false, ""); return err },
	}
}

// TestRESTSharingViolations checks every row of the "Managing file locks"
// table: an SMB open with read, write and delete access and the given
// share mode makes exactly the listed REST operations fail with 409
// SharingViolation.
func TestRESTSharingViolations(t *testing.T) {
	all := FileReadData | FileWriteData | Delete
	rows := []struct {
		name  string
		share uint32
		fail  []string
	}{
		{"None", 0, []string{"CreateFile", "GetFile", "SetFileProperties", "SetFileMetadata", "DeleteFile", "PutRange", "ListRanges"}},
		{"Read", FileShareRead, []string{"CreateFile", "SetFileProperties", "SetFileMetadata", "DeleteFile", "PutRange"}},
		{"Write", FileShareWrite, []string{"CreateFile", "GetFile", "DeleteFile", "ListRanges"}},
		{"Delete", FileShareDelete, []string{"CreateFile", "GetFile", "SetFileProperties", "SetFileMetadata", "PutRange", "ListRanges", "DeleteFile"}},
		{"ReadWrite", FileShareRead | FileShareWrite, []string{"CreateFile", "DeleteFile"}},
		{"ReadDelete", FileShareRead | FileShareDelete, []string{"CreateFile", "SetFileProperties", "SetFileMetadata", "PutRange", "DeleteFile"}},
		{"WriteDelete", FileShareWrite | FileShareDelete, []string{"GetFile", "ListRanges", "DeleteFile"}},
		{"ReadWriteDelete", FileShareRead | FileShareWrite | FileShareDelete, []string{"DeleteFile"}},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			svc, ctx := newSvc(t)
			ref := setup(t, svc, ctx)
			insertHandle(t, svc, ctx, ref, Handle{Access: all, ShareAccess: row.share}, false)
			fails := map[string]bool{}
			for _, f := range row.fail {
				fails[f] = true
			}
			for name, op := range restOps(svc, ctx, ref) {
				var want azerr.Code
				if fails[name] {
					want = azerr.SharingViolation
				}
				wantCode(t, name, op(), want)
			}
		})
	}
}

// TestRESTDeleteWithAnyHandle: Delete File fails while any handle is
// open, even one that shares everything and holds no data access.
func TestRESTDeleteWithAnyHandle(t *testing.T) {
	svc, ctx := newSvc(t)
	ref := setup(t, svc, ctx)
	insertHandle(t, svc, ctx, ref, Handle{Access: 0x80 /* FILE_READ_ATTRIBUTES */, ShareAccess: 7}, false)
	wantCode(t, "DeleteFile", svc.Delete(ctx, ref, false, ""), azerr.SharingViolation)
	// An attribute-only open is not counted by the other checks.
	_, err := svc.Read(ctx, ref, 0, -1, false, "")
	wantCode(t, "GetFile", err, 0)
}

// TestUnconfirmedDeletePendingIsSMBDeletePending: every REST operation on
// a file an SMB client marked for deletion is 409 SMBDeletePending (the
// code the concurrency article names; the error table calls it
// DeletePending), and listings omit the file.
func TestUnconfirmedDeletePendingIsSMBDeletePending(t *testing.T) {
	svc, ctx := newSvc(t)
	ref := setup(t, svc, ctx)
	insertHandle(t, svc, ctx, ref, Handle{Access: Delete, ShareAccess: 7}, true)
	for name, op := range restOps(svc, ctx, ref) {
		wantCode(t, name, op(), azerr.SMBDeletePending)
	}
	res, err := svc.List(ctx, ListRequest{Ref: Ref{Account: "a", Share: "s", Path: "d"}, Max: 10})
	mustNil(t, err)
	if len(res.Entries) != 0 {
		t.Fatalf("pending file listed: %v", res.Entries[0].Name)
	}
}

// TestRESTFileLockConflict: a byte-range lock blocks REST writes to the
// whole file; an exclusive lock blocks reads of the bytes it covers.
func TestRESTFileLockConflict(t *testing.T) {
	svc, ctx := newSvc(t)
	ref := setup(t, svc, ctx)
	insertHandle(t, svc, ctx, ref, Handle{Access: FileReadData | FileWriteData, ShareAccess: 7,
		Locks: []Lock{{Off: 512, Len: 10, Exclusive: true}}}, false)
	ops := restOps(svc, ctx, ref)
	wantCode(t, "PutRange", ops["PutRange"](), azerr.FileLockConflict)
	_, err := svc.Read(ctx, ref, 500, 20, true, "")
	wantCode(t, "GetFile over the lock", err, azerr.FileLockConflict)
	_, err = svc.Read(ctx, ref, 0, 100, true, "")
	wantCode(t, "GetFile beside the lock", err, 0)
	wantCode(t, "SetFileMetadata", ops["SetFileMetadata"](), 0)
}

func TestSMBShareModes(t *testing.T) {
	svc, ctx := newSvc(t)
	setup(t, svc, ctx)
	sr := ShareRef{Account: "a", Name: "s"}
	open := func(access, share uint32) error {
		_, err := svc.Open(ctx, OpenRequest{Share: sr, Path: `d\f`, Disposition: OpenExist, DesiredAccess: access, ShareAccess: share})
		return err
	}
	// A(Read, share Write) then B(Write, share Read): allowed.
	mustNil(t, open(FileReadData, FileShareWrite))
	mustNil(t, open(FileWriteData, FileShareRead))
	// A third reader must share write and read with both.
	wantCode(t, "reader sharing only read", open(FileReadData, FileShareRead), azerr.SharingViolation)
	wantCode(t, "reader where the first open denies read", open(FileReadData, FileShareRead|FileShareWrite), azerr.SharingViolation)
	// Attribute-only opens never conflict.
	mustNil(t, open(0x80, 0))

	// A(Write, share Read) then B(Write, share Write): B fails.
	svc2, _ := newSvc(t)
	setup(t, svc2, ctx)
	o2 := func(access, share uint32) error {
		_, err := svc2.Open(ctx, OpenRequest{Share: sr, Path: "d/f", Disposition: OpenExist, DesiredAccess: access, ShareAccess: share})
		return err
	}
	mustNil(t, o2(FileWriteData, FileShareRead))
	wantCode(t, "B", o2(FileWriteData, FileShareWrite), azerr.SharingViolation)
	// A(Write, share Write) then B(Write, share Read): B fails.
	svc3, _ := newSvc(t)
	setup(t, svc3, ctx)
	o3 := func(access, share uint32) error {
		_, err := svc3.Open(ctx, OpenRequest{Share: sr, Path: "d/f", Disposition: OpenExist, DesiredAccess: access, ShareAccess: share})
		return err
	}
	mustNil(t, o3(FileWriteData, FileShareWrite))
	wantCode(t, "B", o3(FileWriteData, FileShareRead), azerr.SharingViolation)
}

func TestSMBLifecycle(t *testing.T) {
	svc, ctx := newSvc(t)
	setup(t, svc, ctx)
	sr := ShareRef{Account: "a", Name: "s"}
	// Create a new file, write past its end, read back.
	res, err := svc.Open(ctx, OpenRequest{Share: sr, Path: `d\New.txt`, Disposition: OpenIf, DesiredAccess: FileReadData | FileWriteData | Delete, ShareAccess: FileShareRead})
	mustNil(t, err)
	if res.Action != Created {
		t.Fatalf("action %v", res.Action)
	}
	data, err := svc.Ingest(ctx, bytes.NewReader([]byte("hello world")), 11, nil)
	mustNil(t, err)
	n, err := svc.WriteAt(ctx, res.Handle, 5, data)
	mustNil(t, err)
	if n.Size != 16 {
		t.Fatalf("size %d", n.Size)
	}
	segs, _, err := svc.ReadAt(ctx, res.Handle, 0, 100)
	mustNil(t, err)
	got, _ := io.ReadAll(svc.Stream(ctx, segs))
	if string(got) != "\x00\x00\x00\x00\x00hello world" {
		t.Fatalf("read %q", got)
	}
	// REST sees the open: Put Range is a sharing violation (share read only).
	_, err = svc.PutRange(ctx, PutRangeRequest{Ref: Ref{Account: "a", Share: "s", Path: "d/new.txt"}, Start: 0, End: 0, Data: data})
	wantCode(t, "PutRange", err, azerr.SharingViolation)
	// Locks.
	mustNil(t, svc.Lock(ctx, res.Handle, 0, 4, true))
	other, err := svc.Open(ctx, OpenRequest{Share: sr, Path: "d/new.txt", Disposition: OpenExist, DesiredAccess: FileReadData, ShareAccess: 7})
	mustNil(t, err)
	_, _, err = svc.ReadAt(ctx, other.Handle, 0, 2)
	wantCode(t, "locked read", err, azerr.FileLockConflict)
	wantCode(t, "second lock", svc.Lock(ctx, other.Handle, 2, 1, false), azerr.FileLockConflict)
	mustNil(t, svc.Unlock(ctx, res.Handle, 0, 4))
	_, _, err = svc.ReadAt(ctx, other.Handle, 0, 2)
	mustNil(t, err)
	// Rename through the handle, then delete on close.
	n, err = svc.RenameHandle(ctx, res.Handle, `d\Renamed.txt`, false)
	mustNil(t, err)
	if n.Name != "Renamed.txt" {
		t.Fatalf("renamed %q", n.Name)
	}
	_, err = svc.Get(ctx, Ref{Account: "a", Share: "s", Path: "d/renamed.TXT"}, false, "")
	mustNil(t, err)
	_, err = svc.SetDeletePending(ctx, res.Handle, true)
	mustNil(t, err)
	_, err = svc.Get(ctx, Ref{Account: "a", Share: "s", Path: "d/renamed.txt"}, false, "")
	wantCode(t, "pending", err, azerr.SMBDeletePending)
	_, err = svc.Close(ctx, res.Handle)
	mustNil(t, err)
	_, err = svc.Get(ctx, Ref{Account: "a", Share: "s", Path: "d/renamed.txt"}, false, "")
	wantCode(t, "still open elsewhere", err, azerr.SMBDeletePending)
	hs, _, err := svc.ListHandles(ctx, Ref{Account: "a", Share: "s"}, true, 0, 100)
	mustNil(t, err)
	if len(hs) != 1 || hs[0].Path != "d/Renamed.txt" {
		t.Fatalf("handles %+v", hs)
	}
	_, err = svc.Close(ctx, other.Handle)
	mustNil(t, err)
	_, err = svc.Get(ctx, Ref{Account: "a", Share: "s", Path: "d/renamed.txt"}, false, "")
	wantCode(t, "deleted", err, azerr.ResourceNotFound)
	_, err = svc.Close(ctx, other.Handle)
	if err != ErrHandleClosed {
		t.Fatalf("double close: %v", err)
	}
	// Force close from REST.
	h1, err := svc.Open(ctx, OpenRequest{Share: sr, Path: "d/f", Disposition: OpenExist, DesiredAccess: FileReadData, ShareAccess: 7})
	mustNil(t, err)
	_, err = svc.Open(ctx, OpenRequest{Share: sr, Path: "d", Disposition: OpenExist, Directory: true, DesiredAccess: FileReadData, ShareAccess: 7})
	mustNil(t, err)
	closed, err := svc.ForceCloseHandles(ctx, Ref{Account: "a", Share: "s"}, "*", true)
	mustNil(t, err)
	if closed != 2 {
		t.Fatalf("closed %d", closed)
	}
	_, err = svc.GetInfo(ctx, h1.Handle)
	if err != ErrHandleClosed {
		t.Fatalf("after force close: %v", err)
	}
	mustNil(t, svc.Delete(ctx, Ref{Account: "a", Share: "s", Path: "d/f"}, false, ""))
}

// TestRESTRenameDirectoryWithOpenHandleBelow: a directory with a handle
// open anywhere below it cannot be renamed over REST.
func TestRESTRenameDirectoryWithOpenHandleBelow(t *testing.T) {
	svc, ctx := newSvc(t)
	ref := setup(t, svc, ctx)
	insertHandle(t, svc, ctx, ref, Handle{Access: FileReadData, ShareAccess: 7}, false)
	_, err := svc.Rename(ctx, RenameRequest{Source: Ref{Account: "a", Share: "s", Path: "d"}, Dest: Ref{Account: "a", Share: "s", Path: "e"}, Dir: true})
	wantCode(t, "rename", err, azerr.SharingViolation)
}

// A read-only file opens for reading only (MS-FSA 2.1.5.1.2.1): an open
// asking to write its data is denied, delete-on-close cannot be asked for,
// and MAXIMUM_ALLOWED grants a handle that cannot write.
func TestSMBOpenReadOnlyFile(t *testing.T) {
	svc, ctx := newSvc(t)
	setup(t, svc, ctx)
	ro := AttrReadOnly
	_, err := svc.Create(ctx, CreateRequest{Ref: Ref{Account: "a", Share: "s", Path: "d/ro"}, Size: 3, SMB: SMBProps{Attrs: &ro}})
	mustNil(t, err)
	sr := ShareRef{Account: "a", Name: "s"}
	open := func(access uint32, deleteOnClose bool) (*OpenResult, error) {
		return svc.Open(ctx, OpenRequest{Share: sr, Path: "d/ro", Disposition: OpenExist, DesiredAccess: access,
			ShareAccess: FileShareRead | FileShareWrite | FileShareDelete, DeleteOnClose: deleteOnClose})
	}
	for _, access := range []uint32{FileWriteData, FileAppendData, GenericWrite, GenericAll, FileReadData | FileWriteData} {
		if _, err := open(access, false); !errors.Is(err, ErrAccessDenied) {
			t.Errorf("open for %#x: %v, want ErrAccessDenied", access, err)
		}
	}
	if _, err := open(Delete, true); !errors.Is(err, ErrCannotDelete) {
		t.Errorf("delete-on-close open: %v, want ErrCannotDelete", err)
	}
	// Reading and changing attributes (how a client clears the flag) open.
	r, err := open(FileReadData|0x100, false) // FILE_WRITE_ATTRIBUTES
	mustNil(t, err)
	_, err = svc.Close(ctx, r.Handle)
	mustNil(t, err)
	m, err := open(MaximumAllowed, false)
	mustNil(t, err)
	data, err := svc.Ingest(ctx, bytes.NewReader([]byte("xyz")), 3, nil)
	mustNil(t, err)
	if _, err := svc.WriteAt(ctx, m.Handle, 0, data); !errors.Is(err, ErrAccessDenied) {
		t.Errorf("write through a MAXIMUM_ALLOWED handle of a read-only file: %v, want ErrAccessDenied", err)
	}
	_, err = svc.Close(ctx, m.Handle)
	mustNil(t, err)
}

package file

import (
	"errors"
	"testing"
)

// TestRenameHandleParentOpens: a rename needs to add an entry to the
// destination's directory as an open wanting write and sharing read and
// write would: an open of that directory sharing read and write without
// delete access lets it through (smbtorture smb2.notify.rec watches such
// a directory), one holding delete access or not sharing write refuses.
func TestRenameHandleParentOpens(t *testing.T) {
	svc, ctx := newSvc(t)
	setup(t, svc, ctx)
	sr := ShareRef{Account: "a", Name: "s"}
	_, err := svc.Create(ctx, CreateRequest{Ref: Ref{Account: "a", Share: "s", Path: "pd"}, Dir: true})
	mustNil(t, err)
	_, err = svc.Create(ctx, CreateRequest{Ref: Ref{Account: "a", Share: "s", Path: "pd/f0"}})
	mustNil(t, err)
	f, err := svc.Open(ctx, OpenRequest{Share: sr, Path: "pd/f0", Disposition: OpenExist,
		DesiredAccess: FileReadData | Delete, ShareAccess: FileShareRead | FileShareWrite | FileShareDelete})
	mustNil(t, err)
	for i, tc := range []struct {
		access, share uint32
		ok            bool
	}{
		{FileReadData | FileWriteData, FileShareRead | FileShareWrite, true},
		{FileReadData, FileShareRead | FileShareWrite | FileShareDelete, true},
		{FileReadData | Delete, FileShareRead | FileShareWrite | FileShareDelete, false},
		{FileReadData, FileShareRead | FileShareDelete, false},
		{FileReadData, 0, false},
	} {
		d, err := svc.Open(ctx, OpenRequest{Share: sr, Path: "pd", Disposition: OpenExist, Directory: true,
			DesiredAccess: tc.access, ShareAccess: tc.share})
		mustNil(t, err)
		to := "pd/f" + string(rune('1'+i))
		_, err = svc.RenameHandle(ctx, f.Handle, to, false)
		switch {
		case tc.ok && err != nil:
			t.Fatalf("parent open %#x share %#x: rename: %v", tc.access, tc.share, err)
		case !tc.ok && !errors.Is(err, ErrParentInUse):
			t.Fatalf("parent open %#x share %#x: rename: %v, want ErrParentInUse", tc.access, tc.share, err)
		}
		_, err = svc.Close(ctx, d.Handle)
		mustNil(t, err)
		if !tc.ok {
			_, err = svc.RenameHandle(ctx, f.Handle, to, false)
			mustNil(t, err)
		}
	}
}

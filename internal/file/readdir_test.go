package file

import (
	"testing"

	"github.com/lazuli-storage/lazuli/internal/azerr"
)

// TestSMBReadDirKeepsDeletePending: a file marked for deletion while
// another handle keeps it open is still listed to SMB clients until that
// handle closes (Windows does so; smbtorture smb2.dir.modify checks it),
// while REST keeps answering 409 SMBDeletePending and its listings omit it.
func TestSMBReadDirKeepsDeletePending(t *testing.T) {
	svc, ctx := newSvc(t)
	setup(t, svc, ctx)
	sr := ShareRef{Account: "a", Name: "s"}
	f, err := svc.Open(ctx, OpenRequest{Share: sr, Path: `d\f`, Disposition: OpenExist, DesiredAccess: FileReadData | Delete, ShareAccess: 7})
	mustNil(t, err)
	_, err = svc.SetDeletePending(ctx, f.Handle, true)
	mustNil(t, err)
	d, err := svc.Open(ctx, OpenRequest{Share: sr, Path: `d`, Disposition: OpenExist, DesiredAccess: FileReadData, ShareAccess: 7})
	mustNil(t, err)
	names := func() []string {
		nodes, _, err := svc.ReadDir(ctx, d.Handle, "", "", 10)
		mustNil(t, err)
		var out []string
		for _, n := range nodes {
			out = append(out, n.Name)
		}
		return out
	}
	if got := names(); len(got) != 1 || got[0] != "f" {
		t.Fatalf("listed while delete pending: %v, want [f]", got)
	}
	_, err = svc.Get(ctx, Ref{Account: "a", Share: "s", Path: "d/f"}, false, "")
	wantCode(t, "GetFileProperties", err, azerr.SMBDeletePending)
	res, err := svc.List(ctx, ListRequest{Ref: Ref{Account: "a", Share: "s", Path: "d"}, Max: 10})
	mustNil(t, err)
	if len(res.Entries) != 0 {
		t.Fatalf("REST listed a pending file: %v", res.Entries[0].Name)
	}
	_, err = svc.Close(ctx, f.Handle)
	mustNil(t, err)
	if got := names(); len(got) != 0 {
		t.Fatalf("listed after the last close: %v", got)
	}
}

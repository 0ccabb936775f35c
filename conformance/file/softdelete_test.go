package file_test

import (
	"net/http"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/service"

	"github.com/lazuli-storage/lazuli/conformance/harness"
)

// TestShareSoftDelete: with share delete retention on (set in raw XML:
// azfile has no option for it), a deleted share is listed with
// include=deleted and Restore Share brings it back with its files.
func TestShareSoftDelete(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		props := `<?xml version="1.0" encoding="utf-8"?><StorageServiceProperties><ShareDeleteRetentionPolicy><Enabled>true</Enabled><Days>3</Days></ShareDeleteRetentionPolicy></StorageServiceProperties>`
		wantRaw(t, raw(t, tg, http.MethodPut, "?restype=service&comp=properties", nil, []byte(props)), 202, "")
		e := newEnv(t, tg)
		f := e.sc.NewRootDirectoryClient().NewFileClient("keep.txt")
		_, err := f.Create(ctx, 4, nil)
		must(t, err)
		_, err = f.UploadRange(ctx, 0, body([]byte("kept")), nil)
		must(t, err)
		_, err = e.sc.Delete(ctx, nil)
		must(t, err)
		_, err = e.sc.GetProperties(ctx, nil)
		mustCode(t, err, 404, "ShareNotFound")
		pg, err := e.svc.NewListSharesPager(&service.ListSharesOptions{Prefix: ptr(e.name)}).NextPage(ctx)
		must(t, err)
		if len(pg.Shares) != 0 {
			t.Fatal("deleted share listed without include=deleted")
		}
		pg, err = e.svc.NewListSharesPager(&service.ListSharesOptions{Prefix: ptr(e.name), Include: service.ListSharesInclude{Deleted: true}}).NextPage(ctx)
		must(t, err)
		if len(pg.Shares) != 1 || pg.Shares[0].Deleted == nil || !*pg.Shares[0].Deleted || pg.Shares[0].Version == nil ||
			*pg.Shares[0].Properties.RemainingRetentionDays != 3 || pg.Shares[0].Properties.DeletedTime == nil {
			t.Fatalf("deleted listing: %+v", pg.Shares)
		}
		version := *pg.Shares[0].Version
		// The name is free while the deleted share waits.
		_, err = e.svc.CreateShare(ctx, e.name, nil)
		must(t, err)
		_, err = e.svc.RestoreShare(ctx, e.name, version, nil)
		mustCode(t, err, 409, "ShareAlreadyExists")
		_, err = e.svc.DeleteShare(ctx, e.name, nil)
		must(t, err)
		_, err = e.svc.RestoreShare(ctx, e.name, version, nil)
		must(t, err)
		dl, err := f.DownloadStream(ctx, nil)
		must(t, err)
		if string(readAll(t, dl.Body)) != "kept" {
			t.Fatal("restored content")
		}
		// A restored version is gone from the deleted shares.
		_, err = e.svc.RestoreShare(ctx, e.name, version, nil)
		mustCode(t, err, 404, "ShareNotFound")
		_, err = e.svc.RestoreShare(ctx, e.name+"x", version, nil)
		mustCode(t, err, 404, "ShareNotFound")
	})
}

// TestDeleteShareWithLeasedSnapshot: x-ms-delete-snapshots: include stops
// at a leased snapshot (409 DeleteShareWhenSnapshotLeased); include-leased
// deletes it too.
func TestDeleteShareWithLeasedSnapshot(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		e := newEnv(t, tg)
		snap, err := e.sc.CreateSnapshot(ctx, nil)
		must(t, err)
		wantRaw(t, raw(t, tg, http.MethodPut, e.name+"?restype=share&comp=lease&sharesnapshot="+*snap.Snapshot,
			map[string]string{"x-ms-lease-action": "acquire", "x-ms-lease-duration": "-1"}, nil), 201, "")
		wantRaw(t, raw(t, tg, http.MethodDelete, e.name+"?restype=share", map[string]string{"x-ms-delete-snapshots": "include"}, nil), 409, "DeleteShareWhenSnapshotLeased")
		wantRaw(t, raw(t, tg, http.MethodDelete, e.name+"?restype=share", map[string]string{"x-ms-delete-snapshots": "include-leased"}, nil), 202, "")
		wantRaw(t, raw(t, tg, http.MethodGet, e.name+"?restype=share&sharesnapshot="+*snap.Snapshot, nil, nil), 404, "ShareNotFound")
	})
}

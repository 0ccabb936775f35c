package dfs

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"

	"github.com/lazuli-storage/lazuli/conformance/harness"
)

// mustCode checks that err is the Azure error status/code.
func mustCode(t *testing.T, err error, status int, code string) {
	t.Helper()
	var re *azcore.ResponseError
	if !errors.As(err, &re) || re.StatusCode != status || re.ErrorCode != code {
		t.Fatalf("got %v, want %d %s", err, status, code)
	}
}

// On an account with a hierarchical namespace a name is a file or a
// directory: the Blob writes of a file at a directory, the From-URL
// copies included, are 409 PathConflict, and page blobs are not offered
// (409 BlobOperationNotSupported), nor blocks for a file Path - Create
// made.
func TestSDKBlobWritesKeepTheNamespace(t *testing.T) {
	harness.ForEachHNS(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		fs := newFS(t, tg)
		if _, err := fs.NewFileClient("dir/f.txt").Create(ctx, nil); err != nil {
			t.Fatal(err)
		}
		cc := tg.Blob(t).ServiceClient().NewContainerClient(fsName(fs))
		src := cc.NewBlockBlobClient("src.txt")
		if _, err := src.Upload(ctx, body([]byte("source")), nil); err != nil {
			t.Fatal(err)
		}
		srcURL, err := src.BlobClient().GetSASURL(sas.BlobPermissions{Read: true}, time.Now().Add(time.Hour), nil)
		if err != nil {
			t.Fatal(err)
		}
		dir := cc.NewBlockBlobClient("dir")
		_, err = dir.Upload(ctx, body([]byte("x")), nil)
		mustCode(t, err, 409, "PathConflict")
		_, err = dir.UploadBlobFromURL(ctx, srcURL, nil)
		mustCode(t, err, 409, "PathConflict")
		_, err = dir.CopyFromURL(ctx, srcURL, nil)
		mustCode(t, err, 409, "PathConflict")
		_, err = dir.StartCopyFromURL(ctx, src.URL(), nil)
		mustCode(t, err, 409, "PathConflict")
		_, err = cc.NewBlockBlobClient("src.txt/under").Upload(ctx, body([]byte("x")), nil)
		mustCode(t, err, 409, "PathConflict")
		p, err := fs.NewDirectoryClient("dir").GetProperties(ctx, nil)
		if err != nil || !isFolder(p.Metadata) {
			t.Fatalf("dir is no longer a directory: %v %v", err, p.Metadata)
		}

		// A file Path - Create made takes no blocks until Put Blob
		// replaces it.
		made := cc.NewBlockBlobClient("dir/f.txt")
		_, err = made.StageBlock(ctx, "QUFBQQ==", body([]byte("abcd")), nil)
		mustCode(t, err, 409, "BlobOperationNotSupported")
		_, err = made.CommitBlockList(ctx, nil, nil)
		mustCode(t, err, 409, "BlobOperationNotSupported")
		if _, err := made.Upload(ctx, body([]byte("blob")), nil); err != nil {
			t.Fatal(err)
		}
		if _, err := made.StageBlock(ctx, "QUFBQQ==", body([]byte("abcd")), nil); err != nil {
			t.Fatal(err)
		}

		_, err = cc.NewPageBlobClient("disk.vhd").Create(ctx, 512, nil)
		mustCode(t, err, 409, "BlobOperationNotSupported")
		_, err = cc.NewPageBlobClient("src.txt").NewGetPageRangesPager(nil).NextPage(ctx)
		mustCode(t, err, 409, "BlobOperationNotSupported")
		app := cc.NewAppendBlobClient("logs/app.log")
		if _, err := app.Create(ctx, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := app.AppendBlock(ctx, body([]byte("line\n")), nil); err != nil {
			t.Fatal(err)
		}
		if got := download(t, fs.NewFileClient("logs/app.log")); got != "line\n" {
			t.Fatalf("logs/app.log holds %q", got)
		}
	})
}

// isFolder reports whether metadata carries hdi_isfolder=true (in any
// case, as the SDK may canonicalize the name).
func isFolder(md map[string]*string) bool {
	for k, v := range md {
		if strings.EqualFold(k, "hdi_isfolder") && v != nil && strings.EqualFold(*v, "true") {
			return true
		}
	}
	return false
}

// Undelete Blob brings a soft-deleted file back only as the type its
// name now has: not where a directory now is (409 PathConflict).
func TestSDKUndeleteKeepsTheNamespace(t *testing.T) {
	harness.ForEachHNS(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		svc := retainDeleted(t, tg)
		fs := newFS(t, tg)
		cc := svc.NewContainerClient(fsName(fs))
		x := cc.NewBlockBlobClient("x")
		if _, err := x.Upload(ctx, body([]byte("x")), nil); err != nil {
			t.Fatal(err)
		}
		if _, err := x.Delete(ctx, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := cc.NewBlockBlobClient("x/y").Upload(ctx, body([]byte("y")), nil); err != nil {
			t.Fatal(err)
		}
		_, err := x.Undelete(ctx, nil)
		mustCode(t, err, 409, "PathConflict")
		if p, err := fs.NewDirectoryClient("x").GetProperties(ctx, nil); err != nil || !isFolder(p.Metadata) {
			t.Fatalf("x is no longer a directory: %v", err)
		}
		// Gone again, x comes back as the file it was.
		if _, err := fs.NewDirectoryClient("x").Delete(ctx, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := x.Undelete(ctx, nil); err != nil {
			t.Fatal(err)
		}
		if got := download(t, fs.NewFileClient("x")); got != "x" {
			t.Fatalf("x holds %q", got)
		}
	})
}

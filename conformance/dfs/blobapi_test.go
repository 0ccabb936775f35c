package dfs

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/filesystem"

	"github.com/lazuli-storage/lazuli/conformance/harness"
)

// On an account with a hierarchical namespace the Blob API deletes a
// directory only when it is empty (409 DirectoryNotEmpty), as Azure's
// known issues describe: recursive deletes are the dfs API's.
func TestSDKBlobDeleteOfNonEmptyDirectory(t *testing.T) {
	harness.ForEachHNS(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		fs := newFS(t, tg)
		if _, err := fs.NewFileClient("dir/sub/f.txt").Create(ctx, nil); err != nil {
			t.Fatal(err)
		}
		cc := tg.Blob(t).ServiceClient().NewContainerClient(fsName(fs))
		_, err := cc.NewBlobClient("dir").Delete(ctx, nil)
		var re *azcore.ResponseError
		if !errors.As(err, &re) || re.StatusCode != 409 || re.ErrorCode != "DirectoryNotEmpty" {
			t.Fatalf("delete of a non-empty directory: %v", err)
		}
		if _, err := cc.NewBlobClient("dir/sub/f.txt").Delete(ctx, nil); err != nil {
			t.Fatal(err)
		}
		// Empty now: the Blob API deletes it.
		if _, err := cc.NewBlobClient("dir/sub").Delete(ctx, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := fs.NewDirectoryClient("dir/sub").GetProperties(ctx, nil); err == nil {
			t.Fatal("dir/sub is still there")
		}
		if _, err := fs.NewDirectoryClient("dir").GetProperties(ctx, nil); err != nil {
			t.Fatalf("dir went with its child: %v", err)
		}
	})
}

// fsName is the name of the filesystem fs addresses.
func fsName(fs *filesystem.Client) string {
	u, _ := url.Parse(fs.BlobURL())
	p := strings.TrimSuffix(u.Path, "/")
	return p[strings.LastIndexByte(p, '/')+1:]
}

package dfs

import (
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/filesystem"

	"github.com/lazuli-storage/lazuli/conformance/harness"
)

// NewListDirectoryPathsPager (List Blobs with showonly=directories)
// lists the directories of a filesystem and no file, in pages of
// MaxResults.
func TestSDKListDirectoryPaths(t *testing.T) {
	harness.ForEachHNS(t, func(t *testing.T, tg *harness.Target) {
		fs := newFS(t, tg)
		for _, name := range []string{"a/b/f1", "a/f2", "z"} {
			if _, err := fs.NewFileClient(name).Create(harness.Ctx(t), nil); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := fs.NewDirectoryClient("e").Create(harness.Ctx(t), nil); err != nil {
			t.Fatal(err)
		}
		list := func(o *filesystem.ListDirectoryPathsOptions) (names []string, pages int) {
			p := fs.NewListDirectoryPathsPager(o)
			for p.More() {
				page, err := p.NextPage(harness.Ctx(t))
				if err != nil {
					t.Fatal(err)
				}
				pages++
				for _, it := range page.Segment.PathItems {
					names = append(names, *it.Name)
				}
			}
			return names, pages
		}
		if names, _ := list(nil); strings.Join(names, ",") != "a,a/b,e" {
			t.Fatalf("directories %v", names)
		}
		if names, pages := list(&filesystem.ListDirectoryPathsOptions{MaxResults: to.Ptr(int32(1))}); strings.Join(names, ",") != "a,a/b,e" || pages != 3 {
			t.Fatalf("directories one a page: %v in %d pages", names, pages)
		}
		if names, _ := list(&filesystem.ListDirectoryPathsOptions{Prefix: to.Ptr("a/")}); strings.Join(names, ",") != "a/b" {
			t.Fatalf("directories under a/: %v", names)
		}
	})
}

// An encryption context given at Create (file.CreateOptions) comes back
// on a read (DownloadStream) and in NewListPathsPager, and only for files.
func TestSDKEncryptionContext(t *testing.T) {
	harness.ForEachHNS(t, func(t *testing.T, tg *harness.Target) {
		fs := newFS(t, tg)
		const ec = "customer-key-7"
		f := fs.NewFileClient("d/f.txt")
		if _, err := f.Create(harness.Ctx(t), &file.CreateOptions{EncryptionContext: to.Ptr(ec)}); err != nil {
			t.Fatal(err)
		}
		if err := f.UploadBuffer(harness.Ctx(t), []byte("hello"), nil); err != nil {
			t.Fatal(err)
		}
		r, err := f.DownloadStream(harness.Ctx(t), nil)
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		if r.EncryptionContext == nil || *r.EncryptionContext != ec {
			t.Fatalf("read: encryption context %v", r.EncryptionContext)
		}
		p := fs.NewListPathsPager(true, nil)
		seen := map[string]string{}
		for p.More() {
			page, err := p.NextPage(harness.Ctx(t))
			if err != nil {
				t.Fatal(err)
			}
			for _, it := range page.Paths {
				seen[*it.Name] = ""
				if it.EncryptionContext != nil {
					seen[*it.Name] = *it.EncryptionContext
				}
			}
		}
		if len(seen) != 2 || seen["d"] != "" || seen["d/f.txt"] != ec {
			t.Fatalf("listed %v", seen)
		}
	})
}

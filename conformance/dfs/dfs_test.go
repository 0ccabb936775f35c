// Package dfs drives lazuli's Data Lake Storage Gen2 API (lazuli
// --hierarchicalNamespace) with the official Go SDK, azdatalake, on every
// target engine.
package dfs

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/datalakeerror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/filesystem"

	"github.com/lazuli-storage/lazuli/conformance/harness"
)

// newFS creates a filesystem on the target.
func newFS(t *testing.T, tg *harness.Target) *filesystem.Client {
	t.Helper()
	fs := tg.DataLake(t).NewFileSystemClient(harness.UniqueName("lake"))
	if _, err := fs.Create(harness.Ctx(t), nil); err != nil {
		t.Fatal(err)
	}
	return fs
}

func body(b []byte) io.ReadSeekCloser { return streaming.NopCloser(bytes.NewReader(b)) }

// listAll lists every path of fs recursively.
func listAll(t *testing.T, fs *filesystem.Client) []string {
	t.Helper()
	var out []string
	p := fs.NewListPathsPager(true, nil)
	for p.More() {
		page, err := p.NextPage(harness.Ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Paths {
			n := *it.Name
			if it.IsDirectory != nil && *it.IsDirectory {
				n += "/"
			}
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

func TestSDKRoundTrip(t *testing.T) {
	harness.ForEachHNS(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		fs := newFS(t, tg)
		if _, err := fs.NewDirectoryClient("raw/2024").Create(ctx, nil); err != nil {
			t.Fatal(err)
		}
		f := fs.NewFileClient("raw/2024/events.json")
		if _, err := f.Create(ctx, nil); err != nil {
			t.Fatal(err)
		}
		a, b := []byte(`{"n":1}`+"\n"), []byte(`{"n":2}`+"\n")
		if _, err := f.AppendData(ctx, int64(len(a)), body(b), nil); err != nil {
			t.Fatal(err)
		}
		if _, err := f.AppendData(ctx, 0, body(a), nil); err != nil {
			t.Fatal(err)
		}
		if _, err := f.FlushData(ctx, int64(len(a)), &file.FlushDataOptions{RetainUncommittedData: to.Ptr(true)}); err != nil {
			t.Fatal(err)
		}
		if _, err := f.FlushData(ctx, int64(len(a)+len(b)+1), nil); !datalakeerror.HasCode(err, "InvalidFlushPosition") {
			t.Fatalf("flush past the appended data: %v", err)
		}
		if _, err := f.FlushData(ctx, int64(len(a)+len(b)), nil); err != nil {
			t.Fatal(err)
		}
		got := download(t, f)
		if got != string(a)+string(b) {
			t.Fatalf("content %q", got)
		}
		if want := []string{"raw/", "raw/2024/", "raw/2024/events.json"}; fmt.Sprint(listAll(t, fs)) != fmt.Sprint(want) {
			t.Fatalf("paths %v, want %v", listAll(t, fs), want)
		}
		if _, err := f.SetAccessControl(ctx, &file.SetAccessControlOptions{Owner: to.Ptr("alice"), Permissions: to.Ptr("rwxr-x---")}); err != nil {
			t.Fatal(err)
		}
		acl, err := f.GetAccessControl(ctx, nil)
		if err != nil || *acl.Owner != "alice" || *acl.Permissions != "rwxr-x---" || *acl.ACL != "user::rwx,group::r-x,other::---" {
			t.Fatalf("access control %+v %v", acl, err)
		}
		if _, err := fs.NewDirectoryClient("raw").Rename(ctx, "curated", nil); err != nil {
			t.Fatal(err)
		}
		if want := []string{"curated/", "curated/2024/", "curated/2024/events.json"}; fmt.Sprint(listAll(t, fs)) != fmt.Sprint(want) {
			t.Fatalf("paths after rename %v, want %v", listAll(t, fs), want)
		}
		if got := download(t, fs.NewFileClient("curated/2024/events.json")); got != string(a)+string(b) {
			t.Fatalf("content after rename %q", got)
		}
		if _, err := fs.NewDirectoryClient("curated").Delete(ctx, nil); err != nil {
			t.Fatal(err)
		}
		if paths := listAll(t, fs); len(paths) != 0 {
			t.Fatalf("left %v", paths)
		}
	})
}

func download(t *testing.T, f *file.Client) string {
	t.Helper()
	r, err := f.DownloadStream(harness.Ctx(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	b, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSDKRenameRace renames one directory to several destinations at
// once: exactly one rename wins and every file is there once.
func TestSDKRenameRace(t *testing.T) {
	harness.ForEachHNS(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		fs := newFS(t, tg)
		const files = 20
		for i := 0; i < files; i++ {
			if _, err := fs.NewFileClient(fmt.Sprintf("src/d%d/f%d", i%3, i)).Create(ctx, nil); err != nil {
				t.Fatal(err)
			}
		}
		const n = 6
		var wins atomic.Int32
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				<-start
				_, err := fs.NewDirectoryClient("src").Rename(ctx, fmt.Sprintf("dst%d", i), nil)
				switch {
				case err == nil:
					wins.Add(1)
				case datalakeerror.HasCode(err, "SourcePathNotFound", "ServerBusy"):
				default:
					t.Errorf("rename %d: %v", i, err)
				}
			}(i)
		}
		close(start)
		wg.Wait()
		if wins.Load() != 1 {
			t.Fatalf("%d renames won", wins.Load())
		}
		var fileCount int
		root := ""
		for _, p := range listAll(t, fs) {
			top, _, _ := strings.Cut(strings.TrimSuffix(p, "/"), "/")
			if root == "" {
				root = top
			}
			if top != root || top == "src" {
				t.Fatalf("paths under two roots: %v", listAll(t, fs))
			}
			if !strings.HasSuffix(p, "/") {
				fileCount++
			}
		}
		if fileCount != files {
			t.Fatalf("%d files, want %d", fileCount, files)
		}
	})
}

// TestSDKParallelAppends has many writers append to one file at their
// own positions; one flush at the end makes the file their bytes in
// position order.
func TestSDKParallelAppends(t *testing.T) {
	harness.ForEachHNS(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		fs := newFS(t, tg)
		f := fs.NewFileClient("big.bin")
		if _, err := f.Create(ctx, nil); err != nil {
			t.Fatal(err)
		}
		const n, size = 12, 1000
		var want bytes.Buffer
		var wg sync.WaitGroup
		for i := 0; i < n; i++ {
			chunk := bytes.Repeat([]byte{byte('a' + i)}, size)
			want.Write(chunk)
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				if _, err := f.AppendData(ctx, int64(i*size), body(chunk), nil); err != nil {
					t.Errorf("append %d: %v", i, err)
				}
			}(i)
		}
		wg.Wait()
		if _, err := f.FlushData(ctx, n*size, nil); err != nil {
			t.Fatal(err)
		}
		if got := download(t, f); got != want.String() {
			t.Fatalf("content differs (%d bytes)", len(got))
		}
	})
}

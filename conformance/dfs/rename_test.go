package dfs

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/lazuli-storage/lazuli/conformance/harness"
)

// TestSDKRenameAtomicToListings lists a tree while it is renamed back and
// forth (on postgres3-tcp the renames and the listings go to different
// instances): every listing, one page, sees the whole tree under exactly
// one name.
func TestSDKRenameAtomicToListings(t *testing.T) {
	harness.ForEachHNS(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		fs := newFS(t, tg)
		const files = 60
		for i := 0; i < files; i++ {
			if _, err := fs.NewFileClient(fmt.Sprintf("one/d%d/f%02d", i%3, i)).Create(ctx, nil); err != nil {
				t.Fatal(err)
			}
		}
		const renames = 20
		done := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(done)
			names := [2]string{"one", "two"}
			for i := 0; i < renames; i++ {
				if _, err := fs.NewDirectoryClient(names[i%2]).Rename(ctx, names[(i+1)%2], nil); err != nil {
					t.Errorf("rename %d: %v", i, err)
					return
				}
			}
		}()
		for listings := 0; ; listings++ {
			select {
			case <-done:
				wg.Wait()
				t.Logf("%d listings during %d renames", listings, renames)
				if paths := listAll(t, fs); len(paths) != files+4 || !strings.HasPrefix(paths[0], "one/") {
					t.Fatalf("after %d renames: %v", renames, paths)
				}
				return
			default:
			}
			paths := listAll(t, fs)
			if len(paths) != files+4 {
				t.Fatalf("a listing saw %d paths, want %d: %v", len(paths), files+4, paths)
			}
			root, _, _ := strings.Cut(paths[0], "/")
			for _, p := range paths {
				if !strings.HasPrefix(p, root+"/") {
					t.Fatalf("a listing saw the tree under two names: %v", paths)
				}
			}
		}
	})
}

package blob

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// TestHNSRenameAcrossFilesystemsRace races renames of a directory from
// fsys to fsys2 with renames of a directory under it back to fsys,
// creates and deletes of files under it and readers of both
// filesystems, on every engine. Exactly one rename of the top wins;
// every file is afterwards in one filesystem once (or gone, when its
// delete won), with its content; a created file is there once when its
// create succeeded; and no pair of listings taken in one instant sees
// the untouched files in both filesystems or in neither.
func TestHNSRenameAcrossFilesystemsRace(t *testing.T) {
	onAllEngines(t, func(t *testing.T, s *Service) {
		s.UseHierarchicalNamespace(func(string) bool { return true })
		ctx := context.Background()
		if _, err := s.CreateContainer(ctx, "acct", "fsys2", nil, ""); err != nil {
			t.Fatal(err)
		}
		at := func(c, name string) Ref { return Ref{Account: "acct", Container: c, Name: name} }
		var backErr error
		created, deleted := treeRace{
			top: at("fsys", "top"), dst: at("fsys2", "top"),
			// d0 only gains files and d2 only loses some; d1 moves back
			// to fsys once the top has moved.
			other: func() {
				// Until the top has moved there is no fsys2/top/d1.
				for {
					_, backErr = s.RenamePath(ctx, RenameRequest{Src: at("fsys2", "top/d1"), Dst: at("fsys", "back")})
					if c := code(backErr); c != "ServerBusy" && c != "SourcePathNotFound" {
						return
					}
				}
			},
			read: func() bool {
				// fsys before fsys2: the top only moves to fsys2, so its
				// untouched files are seen once or twice, never not at
				// all.
				seen := 0
				for _, c := range []string{"fsys", "fsys2"} {
					ps, _, err := s.ListPaths(ctx, "acct", c, ListPathsRequest{Recursive: true})
					if code(err) == "ServerBusy" {
						return true
					}
					if err != nil {
						t.Error(err)
						return false
					}
					for _, p := range ps {
						if strings.HasPrefix(p.Name, "top/d0/f") {
							seen++
						}
					}
				}
				if seen != treeFiles/3 && seen != 2*treeFiles/3 {
					t.Errorf("listings saw %d of the %d files of d0", seen, treeFiles/3)
					return false
				}
				return true
			},
		}.run(t, s)
		if backErr != nil {
			t.Fatalf("rename of d1 back: %v", backErr)
		}
		where := filesByLeaf(t, s, "fsys", "fsys2")
		checkTreeFiles(t, s, where, created, deleted)
		// The files of d1 are back in fsys.
		for i := 1; i < treeFiles; i += 3 {
			leaf := fmt.Sprintf("f%02d", i)
			if rs := where[leaf]; rs[0].Container != "fsys" || rs[0].Name != "back/"+leaf {
				t.Fatalf("%s of d1 is at %v, want fsys back/%s", leaf, rs[0], leaf)
			}
		}
		// The name index of each filesystem agrees with its directories.
		indexedDirs(t, s, "fsys")
		indexedDirs(t, s, "fsys2")
	})
}

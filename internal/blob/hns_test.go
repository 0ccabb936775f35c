package blob

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/conditional"
	"github.com/lazuli-storage/lazuli/internal/content"
	"github.com/lazuli-storage/lazuli/internal/engine/logstore"
	"github.com/lazuli-storage/lazuli/internal/engine/memstore"
	"github.com/lazuli-storage/lazuli/internal/engine/sqlitestore"
	"github.com/lazuli-storage/lazuli/internal/keyenc"
	"github.com/lazuli-storage/lazuli/storage"
)

// onHNSEngines runs fn on a fresh service with container "fsys" on the
// memory, log and SQLite engines (PostgreSQL runs the same operations in
// the conformance suite).
func onHNSEngines(t *testing.T, fn func(t *testing.T, s *Service)) {
	open := map[string]func(t *testing.T) storage.Engine{
		"memory": func(t *testing.T) storage.Engine { return memstore.New() },
		"log": func(t *testing.T) storage.Engine {
			e, err := logstore.Open(logstore.Options{Dir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			return e
		},
		"sqlite": func(t *testing.T) storage.Engine {
			e, err := sqlitestore.Open(sqlitestore.Options{Dir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			return e
		},
	}
	for _, name := range []string{"memory", "log", "sqlite"} {
		t.Run(name, func(t *testing.T) {
			e := open[name](t)
			t.Cleanup(func() { e.Close() })
			var n atomic.Int64
			s := New(e, time.Now, func() string { return fmt.Sprintf("%08d-0000-0000-0000-000000000000", n.Add(1)) })
			s.UseHierarchicalNamespace(func(string) bool { return true })
			if _, err := s.CreateContainer(context.Background(), "acct", "fsys", nil, ""); err != nil {
				t.Fatal(err)
			}
			fn(t, s)
		})
	}
}

func ref(name string) Ref { return Ref{Account: "acct", Container: "fsys", Name: name} }

// mustFile creates name with content through create, append and flush.
func mustFile(tb testing.TB, s *Service, name string, content []byte) {
	tb.Helper()
	ctx := context.Background()
	if _, err := s.CreatePath(ctx, CreatePathRequest{Ref: ref(name)}); err != nil {
		tb.Fatal(err)
	}
	if len(content) == 0 {
		return
	}
	if err := s.AppendData(ctx, ref(name), 0, Ingested{Segs: []Segment{{Len: int64(len(content)), Data: content}}, Size: int64(len(content))}, Cond{}); err != nil {
		tb.Fatal(err)
	}
	if _, err := s.FlushData(ctx, FlushRequest{Ref: ref(name), Position: int64(len(content))}); err != nil {
		tb.Fatal(err)
	}
}

// allPaths lists every path of fsys, recursively, in one snapshot.
func allPaths(tb testing.TB, s *Service) []string {
	tb.Helper()
	ps, next, err := s.ListPaths(context.Background(), "acct", "fsys", ListPathsRequest{Recursive: true})
	if err != nil {
		tb.Fatal(err)
	}
	if next != "" {
		tb.Fatalf("unexpected continuation %q", next)
	}
	var out []string
	for _, p := range ps {
		n := p.Name
		if p.Dir {
			n += "/"
		}
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func code(err error) string {
	if e, ok := azerr.As(err); ok {
		return e.Code.String()
	}
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestHNSCreateImpliesParents(t *testing.T) {
	onHNSEngines(t, func(t *testing.T, s *Service) {
		mustFile(t, s, "a/b/c.txt", []byte("x"))
		if got, want := strings.Join(allPaths(t, s), " "), "a/ a/b/ a/b/c.txt"; got != want {
			t.Fatalf("paths %q, want %q", got, want)
		}
		// A file cannot be made where a directory is, nor under a file.
		if _, err := s.CreatePath(context.Background(), CreatePathRequest{Ref: ref("a/b")}); code(err) != "PathConflict" {
			t.Fatalf("file over directory: %v", err)
		}
		if _, err := s.CreatePath(context.Background(), CreatePathRequest{Ref: ref("a/b/c.txt/d"), Dir: true}); code(err) != "PathConflict" {
			t.Fatalf("directory under a file: %v", err)
		}
	})
}

func TestHNSBlobImpliesDirectories(t *testing.T) {
	onHNSEngines(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		if _, err := s.PutBlob(ctx, PutBlobRequest{Ref: ref("x/y/z.txt"), Type: BlockBlob}); err != nil {
			t.Fatal(err)
		}
		if got, want := strings.Join(allPaths(t, s), " "), "x/ x/y/ x/y/z.txt"; got != want {
			t.Fatalf("paths %q, want %q", got, want)
		}
		p, err := s.GetPath(ctx, ref("x/y"), Cond{})
		if err != nil || !p.Dir {
			t.Fatalf("implied directory: %+v %v", p, err)
		}
		top, _, err := s.ListPaths(ctx, "acct", "fsys", ListPathsRequest{})
		if err != nil || len(top) != 1 || top[0].Name != "x" || !top[0].Dir {
			t.Fatalf("non-recursive listing: %v %v", top, err)
		}
	})
}

func TestHNSFlushPosition(t *testing.T) {
	onHNSEngines(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		mustFile(t, s, "f", nil)
		put := func(pos int64, data string) {
			t.Helper()
			if err := s.AppendData(ctx, ref("f"), pos, Ingested{Segs: []Segment{{Len: int64(len(data)), Data: []byte(data)}}, Size: int64(len(data))}, Cond{}); err != nil {
				t.Fatal(err)
			}
		}
		put(3, "def")
		put(0, "abc")
		put(6, "ghi")
		for _, pos := range []int64{1, 4, 10} {
			if _, err := s.FlushData(ctx, FlushRequest{Ref: ref("f"), Position: pos, Retain: true}); code(err) != "InvalidFlushPosition" {
				t.Fatalf("flush at %d: %v", pos, err)
			}
		}
		b, err := s.FlushData(ctx, FlushRequest{Ref: ref("f"), Position: 6, Retain: true})
		if err != nil || b.Size != 6 {
			t.Fatalf("flush at 6: %v", err)
		}
		// The retained append at 6 is still there; a flush below the
		// end is refused.
		if _, err := s.FlushData(ctx, FlushRequest{Ref: ref("f"), Position: 3}); code(err) != "InvalidFlushPosition" {
			t.Fatalf("flush below the end: %v", err)
		}
		if _, err := s.FlushData(ctx, FlushRequest{Ref: ref("f"), Position: 9}); err != nil {
			t.Fatal(err)
		}
		if got := readAll(t, s, "f"); got != "abcdefghi" {
			t.Fatalf("content %q", got)
		}
	})
}

func readAll(tb testing.TB, s *Service, name string) string {
	tb.Helper()
	return readRef(tb, s, ref(name))
}

// readRef is the content of the file r.
func readRef(tb testing.TB, s *Service, r Ref) string {
	tb.Helper()
	b, err := s.GetBlob(context.Background(), r, Cond{}, "")
	if err != nil {
		tb.Fatal(err)
	}
	var buf bytes.Buffer
	rc := s.Open(context.Background(), b, 0, b.Size)
	defer rc.Close()
	if _, err := io.Copy(&buf, rc); err != nil {
		tb.Fatal(err)
	}
	return buf.String()
}

// TestHNSRenameRace renames one directory to many destinations at once:
// exactly one wins, and every path under it is there once, under the
// winner's name.
func TestHNSRenameRace(t *testing.T) {
	onHNSEngines(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		const files = 40
		for i := 0; i < files; i++ {
			mustFile(t, s, fmt.Sprintf("src/d%d/f%d", i%4, i), []byte{byte(i)})
		}
		const n = 8
		g := newGate(n)
		var wins atomic.Int32
		var wg sync.WaitGroup
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				g.wait()
				_, err := s.RenamePath(ctx, RenameRequest{Src: ref("src"), Dst: ref(fmt.Sprintf("dst%d", i))})
				switch code(err) {
				case "":
					wins.Add(1)
				case "SourcePathNotFound", "ServerBusy":
				default:
					t.Errorf("rename %d: %v", i, err)
				}
			}(i)
		}
		g.open()
		wg.Wait()
		if wins.Load() != 1 {
			t.Fatalf("%d renames won", wins.Load())
		}
		paths := allPaths(t, s)
		var filesSeen int
		root := ""
		for _, p := range paths {
			if !strings.HasSuffix(p, "/") {
				filesSeen++
			}
			top, _, _ := strings.Cut(p, "/")
			if root == "" {
				root = top
			}
			if top != root || top == "src" {
				t.Fatalf("paths under two roots or the source: %v", paths)
			}
		}
		if filesSeen != files {
			t.Fatalf("%d files after the rename, want %d", filesSeen, files)
		}
	})
}

// TestHNSRenameAtomicToReaders lists the tree while it is renamed back
// and forth: every listing sees the whole tree under exactly one name.
func TestHNSRenameAtomicToReaders(t *testing.T) {
	onHNSEngines(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		const files = 30
		for i := 0; i < files; i++ {
			mustFile(t, s, fmt.Sprintf("one/sub/f%02d", i), nil)
		}
		done := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			names := [2]string{"one", "two"}
			for i := 0; i < 20; i++ {
				if _, err := s.RenamePath(ctx, RenameRequest{Src: ref(names[i%2]), Dst: ref(names[(i+1)%2])}); err != nil {
					t.Errorf("rename: %v", err)
					break
				}
			}
			close(done)
		}()
		for {
			select {
			case <-done:
				wg.Wait()
				return
			default:
			}
			paths := allPaths(t, s)
			if len(paths) != files+2 {
				t.Fatalf("a listing saw %d paths, want %d: %v", len(paths), files+2, paths)
			}
			root, _, _ := strings.Cut(paths[0], "/")
			for _, p := range paths {
				if !strings.HasPrefix(p, root+"/") {
					t.Fatalf("a listing saw two names: %v", paths)
				}
			}
		}
	})
}

// TestHNSRenameVsCreate races creates into a directory with its rename:
// every created file exists once, under the old name (a create after the
// rename makes the directory again) or the new one.
func TestHNSRenameVsCreate(t *testing.T) {
	onHNSEngines(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		mustFile(t, s, "d/seed", nil)
		const n = 12
		g := newGate(n + 1)
		var wg sync.WaitGroup
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				g.wait()
				for {
					_, err := s.CreatePath(ctx, CreatePathRequest{Ref: ref(fmt.Sprintf("d/new%02d", i))})
					if code(err) == "ServerBusy" {
						continue
					}
					if err != nil {
						t.Errorf("create: %v", err)
					}
					return
				}
			}(i)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			g.wait()
			if _, err := s.RenamePath(ctx, RenameRequest{Src: ref("d"), Dst: ref("e")}); err != nil {
				t.Errorf("rename: %v", err)
			}
		}()
		g.open()
		wg.Wait()
		seen := map[string]int{}
		for _, p := range allPaths(t, s) {
			if _, leaf, ok := strings.Cut(p, "/"); ok && leaf != "" {
				seen[leaf]++
			}
		}
		if seen["seed"] != 1 {
			t.Fatalf("seed seen %d times", seen["seed"])
		}
		for i := 0; i < n; i++ {
			if c := seen[fmt.Sprintf("new%02d", i)]; c != 1 {
				t.Fatalf("new%02d seen %d times: %v", i, c, allPaths(t, s))
			}
		}
	})
}

// TestHNSFlushRace races flushes of one file guarded by the same If-Match:
// exactly one commits.
func TestHNSFlushRace(t *testing.T) {
	onHNSEngines(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		p, err := s.CreatePath(ctx, CreatePathRequest{Ref: ref("f")})
		if err != nil {
			t.Fatal(err)
		}
		const n = 8
		for i := 0; i < n; i++ {
			d := []byte("0123456789")
			if err := s.AppendData(ctx, ref("f"), int64(i*10), Ingested{Segs: []Segment{{Len: 10, Data: d}}, Size: 10}, Cond{}); err != nil {
				t.Fatal(err)
			}
		}
		etag := content.ETagRaw(p.Blob.ETag)
		g := newGate(n)
		var wins atomic.Int32
		var wg sync.WaitGroup
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				g.wait()
				c := Cond{Conditions: conditional.Conditions{IfMatch: []string{etag}}}
				_, err := s.FlushData(ctx, FlushRequest{Ref: ref("f"), Position: int64((i + 1) * 10), Retain: true, Cond: c})
				switch code(err) {
				case "":
					wins.Add(1)
				case "ConditionNotMet", "ServerBusy":
				default:
					t.Errorf("flush %d: %v", i, err)
				}
			}(i)
		}
		g.open()
		wg.Wait()
		if wins.Load() != 1 {
			t.Fatalf("%d flushes won", wins.Load())
		}
	})
}

func TestHNSDeleteRecursiveContinuation(t *testing.T) {
	s := New(memstore.New(), time.Now, func() string { return "00000000-0000-0000-0000-000000000001" })
	ctx := context.Background()
	if _, err := s.CreateContainer(ctx, "acct", "fsys", nil, ""); err != nil {
		t.Fatal(err)
	}
	n := DeleteBatch + 10
	for i := 0; i < n; i++ {
		if _, err := s.PutBlob(ctx, PutBlobRequest{Ref: ref(fmt.Sprintf("big/f%05d", i)), Type: BlockBlob}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.DeletePath(ctx, ref("big"), false, "", Cond{}); code(err) != "DirectoryNotEmpty" {
		t.Fatalf("non-recursive delete: %v", err)
	}
	next, err := s.DeletePath(ctx, ref("big"), true, "", Cond{})
	if err != nil || next == "" {
		t.Fatalf("first batch: %q %v", next, err)
	}
	if next, err = s.DeletePath(ctx, ref("big"), true, next, Cond{}); err != nil || next != "" {
		t.Fatalf("second batch: %q %v", next, err)
	}
	if paths := allPaths(t, s); len(paths) != 0 {
		t.Fatalf("left %d paths", len(paths))
	}
}

func TestHNSListContinuation(t *testing.T) {
	onHNSEngines(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		for _, n := range []string{"a/x", "a-b", "a/y/z", "b", "c/d/e"} {
			if _, err := s.PutBlob(ctx, PutBlobRequest{Ref: ref(n), Type: BlockBlob}); err != nil {
				t.Fatal(err)
			}
		}
		for _, rec := range []bool{true, false} {
			want := map[string]bool{}
			full, _, err := s.ListPaths(ctx, "acct", "fsys", ListPathsRequest{Recursive: rec})
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range full {
				want[p.Name] = true
			}
			got := map[string]int{}
			cont := ""
			for pages := 0; ; pages++ {
				ps, next, err := s.ListPaths(ctx, "acct", "fsys", ListPathsRequest{Recursive: rec, Max: 1, Continuation: cont})
				if err != nil {
					t.Fatal(err)
				}
				for _, p := range ps {
					got[p.Name]++
				}
				if next == "" {
					break
				}
				cont = next
			}
			for n := range want {
				if got[n] != 1 {
					t.Fatalf("recursive=%v: %s listed %d times across pages (%v)", rec, n, got[n], got)
				}
			}
			if len(got) != len(want) {
				t.Fatalf("recursive=%v: pages listed %v, one page %v", rec, got, want)
			}
		}
	})
}

func TestHNSAccessControl(t *testing.T) {
	onHNSEngines(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		p, err := s.CreatePath(ctx, CreatePathRequest{Ref: ref("d"), Dir: true})
		if err != nil || p.ACL.Permissions != "rwxr-x---" || p.ACL.Owner != Superuser {
			t.Fatalf("default access: %+v %v", p, err)
		}
		p, err = s.CreatePath(ctx, CreatePathRequest{Ref: ref("d/f"), Permissions: "rwxrwxrwx", Umask: "0022"})
		if err != nil || p.ACL.Permissions != "rwxr-xr-x" {
			t.Fatalf("umask: %+v %v", p.ACL, err)
		}
		acl := "user::rwx,user:1234:r-x,group::r--,mask::r-x,other::---,default:user::rwx"
		if _, err := s.SetAccessControl(ctx, ref("d/f"), "alice", "staff", "", acl, Cond{}); err != nil {
			t.Fatal(err)
		}
		p, err = s.GetPath(ctx, ref("d/f"), Cond{})
		if err != nil || p.ACL.ACL != acl || p.ACL.Owner != "alice" || p.ACL.Group != "staff" || p.ACL.Permissions != "rwxr-x---" || !p.ACL.Extended() {
			t.Fatalf("after set: %+v %v", p.ACL, err)
		}
		if _, err := s.SetAccessControl(ctx, ref("d/f"), "", "", "", "user::rwx,bogus", Cond{}); code(err) != "InvalidAccessControlList" {
			t.Fatalf("bad ACL: %v", err)
		}
		// The access control moves with a rename.
		if _, err := s.RenamePath(ctx, RenameRequest{Src: ref("d"), Dst: ref("e")}); err != nil {
			t.Fatal(err)
		}
		p, err = s.GetPath(ctx, ref("e/f"), Cond{})
		if err != nil || p.ACL.Owner != "alice" || p.ACL.ACL != acl {
			t.Fatalf("after rename: %+v %v", p.ACL, err)
		}
	})
}

func TestHNSSetAccessControlRecursive(t *testing.T) {
	onHNSEngines(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		for i := 0; i < 5; i++ {
			mustFile(t, s, fmt.Sprintf("top/d%d/f", i), nil)
		}
		// set, in batches of three paths: top, 5 directories, 5 files.
		acl := "user::rwx,user:oid-7:r-x,group::r-x,mask::r-x,other::---,default:user::rwx,default:group::---,default:other::---"
		var dirs, files int
		cont := ""
		for calls := 0; ; calls++ {
			res, err := s.SetAccessControlRecursive(ctx, ref("top"), "set", acl, cont, 3, false)
			if err != nil {
				t.Fatal(err)
			}
			dirs, files = dirs+res.Directories, files+res.Files
			if res.Next == "" {
				break
			}
			cont = res.Next
			if calls > 10 {
				t.Fatal("no end")
			}
		}
		if dirs != 6 || files != 5 {
			t.Fatalf("%d directories, %d files", dirs, files)
		}
		p, _ := s.GetPath(ctx, ref("top/d3/f"), Cond{})
		if p.ACL.ACL != "user::rwx,user:oid-7:r-x,group::r-x,mask::r-x,other::---" {
			t.Fatalf("file ACL %q (a file takes no default entries)", p.ACL.ACL)
		}
		p, _ = s.GetPath(ctx, ref("top/d3"), Cond{})
		if p.ACL.ACL != acl {
			t.Fatalf("directory ACL %q", p.ACL.ACL)
		}
		// modify replaces and adds entries; remove drops named ones.
		if _, err := s.SetAccessControlRecursive(ctx, ref("top/d3"), "modify", "user:oid-7:rwx,group:g-1:r--", "", 0, false); err != nil {
			t.Fatal(err)
		}
		p, _ = s.GetPath(ctx, ref("top/d3/f"), Cond{})
		if p.ACL.ACL != "user::rwx,user:oid-7:rwx,group::r-x,mask::r-x,other::---,group:g-1:r--" {
			t.Fatalf("after modify %q", p.ACL.ACL)
		}
		if _, err := s.SetAccessControlRecursive(ctx, ref("top/d3"), "remove", "user:oid-7,group:g-1", "", 0, false); err != nil {
			t.Fatal(err)
		}
		p, _ = s.GetPath(ctx, ref("top/d3/f"), Cond{})
		if p.ACL.ACL != "user::rwx,group::r-x,mask::r-x,other::---" {
			t.Fatalf("after remove %q", p.ACL.ACL)
		}
		if _, err := s.SetAccessControlRecursive(ctx, ref("top"), "remove", "user::", "", 0, false); code(err) != "InvalidAccessControlList" {
			t.Fatalf("removing the owner entry: %v", err)
		}
	})
}

// Deleting a filesystem removes the access control of its paths.
func TestHNSDeleteContainerDropsACLs(t *testing.T) {
	s := New(memstore.New(), time.Now, func() string { return "00000000-0000-0000-0000-000000000001" })
	ctx := context.Background()
	if _, err := s.CreateContainer(ctx, "acct", "fsys", nil, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreatePath(ctx, CreatePathRequest{Ref: ref("d/f"), Owner: "alice"}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteContainer(ctx, "acct", "fsys", Cond{}); err != nil {
		t.Fatal(err)
	}
	err := s.eng.View(ctx, func(tx storage.Tx) error {
		p := containerACLsPrefix("acct", "fsys")
		it := tx.Scan(p, keyenc.PrefixEnd(p), false)
		defer it.Close()
		if it.Next() {
			t.Errorf("access control record %q left", it.Key())
		}
		return it.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A rename carries what is stored beside a path: uncommitted appends,
// which a flush at the new name commits, and blob tags with their index.
func TestHNSRenameCarriesAppendsAndTags(t *testing.T) {
	onHNSEngines(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		mustFile(t, s, "in/f", []byte("abc"))
		if err := s.AppendData(ctx, ref("in/f"), 3, Ingested{Segs: []Segment{{Len: 3, Data: []byte("def")}}, Size: 3}, Cond{}); err != nil {
			t.Fatal(err)
		}
		if err := s.SetTags(ctx, ref("in/f"), []KV{{"team", "lake"}}, Cond{}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.RenamePath(ctx, RenameRequest{Src: ref("in"), Dst: ref("out")}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.FlushData(ctx, FlushRequest{Ref: ref("out/f"), Position: 6}); err != nil {
			t.Fatal(err)
		}
		if got := readAll(t, s, "out/f"); got != "abcdef" {
			t.Fatalf("content %q", got)
		}
		found, _, err := s.FindBlobs(ctx, "acct", "", `"team"='lake'`, "", 10)
		if err != nil || len(found) != 1 || found[0].Name != "out/f" {
			t.Fatalf("tag index after rename: %+v %v", found, err)
		}
	})
}

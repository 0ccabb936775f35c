package blob

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/conditional"
	"github.com/lazuli-storage/lazuli/storage"
)

// softHNS turns soft delete on for the account of an onHNSEngines service.
func softHNS(t *testing.T, s *Service) {
	t.Helper()
	if err := s.SetServiceProps(context.Background(), "acct", &ServiceProps{XML: []byte(retainOneDay)}); err != nil {
		t.Fatal(err)
	}
}

func deletedPaths(t *testing.T, s *Service) []DeletedPath {
	t.Helper()
	ds, next, err := s.ListDeletedPaths(context.Background(), "acct", "fsys", "", "", 5000)
	if err != nil || next != "" {
		t.Fatalf("list deleted paths: %v %q", err, next)
	}
	return ds
}

// TestHNSSoftDeleteTree deletes a directory recursively with soft delete
// on: it is one deleted entry (its tree is not listed), and Undelete Path
// brings back the directory with every path under it, content and access
// control as they were.
func TestHNSSoftDeleteTree(t *testing.T) {
	onHNSEngines(t, func(t *testing.T, s *Service) {
		softHNS(t, s)
		ctx := context.Background()
		mustFile(t, s, "top/d/f1", []byte("one"))
		mustFile(t, s, "top/d/e/f2", []byte("two"))
		if _, err := s.SetAccessControl(ctx, ref("top/d/f1"), "", "", "rw-------", "", Cond{}); err != nil {
			t.Fatal(err)
		}
		before := allPaths(t, s)
		next, id, err := s.DeletePathKept(ctx, ref("top/d"), true, "", Cond{})
		if err != nil || next != "" || id == "" {
			t.Fatalf("delete: %q %q %v", next, id, err)
		}
		ds := deletedPaths(t, s)
		if len(ds) != 1 || ds[0].Blob.Name != "top/d" || ds[0].DeletionID != id || !ds[0].Blob.IsDir() {
			t.Fatalf("deleted paths: %+v", ds)
		}
		if got := allPaths(t, s); !slices.Equal(got, []string{"top/"}) {
			t.Fatalf("after the delete: %q", got)
		}
		dir, err := s.UndeletePath(ctx, ref("top/d"), id)
		if err != nil || !dir {
			t.Fatalf("undelete: %v %v", dir, err)
		}
		if got := allPaths(t, s); !slices.Equal(got, before) {
			t.Fatalf("after the undelete: %q, want %q", got, before)
		}
		if got := readAll(t, s, "top/d/e/f2"); got != "two" {
			t.Fatalf("content %q", got)
		}
		p, err := s.GetPath(ctx, ref("top/d/f1"), Cond{})
		if err != nil || p.ACL.Permissions != "rw-------" {
			t.Fatalf("access control: %+v %v", p, err)
		}
		if len(deletedPaths(t, s)) != 0 {
			t.Fatal("the entry outlived its undelete")
		}
		// The index holds the tree again: a new file goes under it.
		mustFile(t, s, "top/d/e/f3", []byte("three"))
	})
}

// TestHNSSoftDeleteIDs deletes the same file twice (Path - Delete, then
// Delete Blob): two entries with two ids. Pinned answers of Undelete
// Path: an unknown id 404 BlobNotFound, a live path of the name 409
// PathAlreadyExists, a parent that is gone 404 ParentNotFound.
func TestHNSSoftDeleteIDs(t *testing.T) {
	onHNSEngines(t, func(t *testing.T, s *Service) {
		softHNS(t, s)
		ctx := context.Background()
		mustFile(t, s, "a/f", []byte("first"))
		if _, _, err := s.DeletePathKept(ctx, ref("a/f"), false, "", Cond{}); err != nil {
			t.Fatal(err)
		}
		mustFile(t, s, "a/f", []byte("second"))
		if err := s.DeleteBlob(ctx, ref("a/f"), "", Cond{}); err != nil {
			t.Fatal(err)
		}
		ds := deletedPaths(t, s)
		if len(ds) != 2 || ds[0].DeletionID == ds[1].DeletionID || ds[0].Blob.Name != "a/f" || ds[1].Blob.Name != "a/f" {
			t.Fatalf("deleted paths: %+v", ds)
		}
		// Paging: one entry a page.
		page, next, err := s.ListDeletedPaths(ctx, "acct", "fsys", "a/", "", 1)
		if err != nil || len(page) != 1 || next == "" {
			t.Fatalf("page 1: %v %q %v", page, next, err)
		}
		page, next, err = s.ListDeletedPaths(ctx, "acct", "fsys", "a/", next, 1)
		if err != nil || len(page) != 1 || next != "" || page[0].DeletionID != ds[1].DeletionID {
			t.Fatalf("page 2: %v %q %v", page, next, err)
		}
		if _, err := s.UndeletePath(ctx, ref("a/f"), "12345"); code(err) != "BlobNotFound" {
			t.Fatalf("unknown id: %v", err)
		}
		if _, err := s.UndeletePath(ctx, ref("a/f"), ds[0].DeletionID); err != nil {
			t.Fatal(err)
		}
		if got := readAll(t, s, "a/f"); got != "first" {
			t.Fatalf("content %q", got)
		}
		if _, err := s.UndeletePath(ctx, ref("a/f"), ds[1].DeletionID); code(err) != "PathAlreadyExists" {
			t.Fatalf("over a live path: %v", err)
		}
		if _, err := s.DeletePath(ctx, ref("a"), true, "", Cond{}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.UndeletePath(ctx, ref("a/f"), ds[1].DeletionID); code(err) != "ParentNotFound" {
			t.Fatalf("parent gone: %v", err)
		}
	})
}

// TestHNSUndeletePathRace races undeletes of one deletion id (exactly one
// wins, the others find no entry) and an undelete against a create of the
// same path (one of them wins; the path is the winner's).
func TestHNSUndeletePathRace(t *testing.T) {
	onHNSEngines(t, func(t *testing.T, s *Service) {
		softHNS(t, s)
		ctx := context.Background()
		for round := range 3 {
			name := fmt.Sprintf("r%d/f", round)
			mustFile(t, s, name, []byte("old"))
			_, id, err := s.DeletePathKept(ctx, ref(name), false, "", Cond{})
			if err != nil {
				t.Fatal(err)
			}
			const n = 8
			g := newGate(n)
			errs := make([]error, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					g.wait()
					_, errs[i] = s.UndeletePath(ctx, ref(name), id)
				}()
			}
			g.open()
			wg.Wait()
			wins := 0
			for _, err := range errs {
				switch code(err) {
				case "":
					wins++
				case "BlobNotFound", "PathAlreadyExists", "ServerBusy":
				default:
					t.Fatalf("undelete: %v", err)
				}
			}
			if wins != 1 {
				t.Fatalf("round %d: %d undeletes won", round, wins)
			}
			// Undelete against a create of the same name.
			if _, id, err = s.DeletePathKept(ctx, ref(name), false, "", Cond{}); err != nil {
				t.Fatal(err)
			}
			g = newGate(2)
			var undelErr, createErr error
			wg.Add(2)
			go func() {
				defer wg.Done()
				g.wait()
				_, undelErr = s.UndeletePath(ctx, ref(name), id)
			}()
			go func() {
				defer wg.Done()
				g.wait()
				_, createErr = s.CreatePath(ctx, CreatePathRequest{Ref: ref(name), Cond: Cond{Conditions: conditional.Conditions{IfNoneMatch: []string{"*"}}}})
			}()
			g.open()
			wg.Wait()
			got := readAll(t, s, name)
			switch {
			case undelErr == nil && createErr == nil:
				t.Fatal("both the undelete and the create won")
			case undelErr == nil:
				if got != "old" {
					t.Fatalf("undelete won, content %q", got)
				}
			case createErr == nil:
				if got != "" || code(undelErr) != "PathAlreadyExists" {
					t.Fatalf("create won, content %q, undelete %v", got, undelErr)
				}
			default:
				t.Fatalf("neither won: %v / %v", undelErr, createErr)
			}
		}
	})
}

// TestHNSSoftDeleteContainerRoundTrip deletes a path, then its container
// (soft deleted too): the restored container brings the deleted path
// entry back, still listed and restorable, and the purge of ended
// retentions takes it with its tree.
func TestHNSSoftDeleteContainerRoundTrip(t *testing.T) {
	onHNSEngines(t, func(t *testing.T, s *Service) {
		softHNS(t, s)
		s.UseContainerRetention(func(string) int { return 2 })
		ctx := context.Background()
		mustFile(t, s, "d/f", []byte("x"))
		if _, err := s.DeletePath(ctx, ref("d"), true, "", Cond{}); err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteContainer(ctx, "acct", "fsys", Cond{}); err != nil {
			t.Fatal(err)
		}
		ds, err := s.ListDeletedContainers(ctx, "acct", "")
		if err != nil || len(ds) != 1 {
			t.Fatalf("deleted containers: %v %v", ds, err)
		}
		if _, err := s.RestoreContainer(ctx, "acct", "fsys", ds[0].Version); err != nil {
			t.Fatal(err)
		}
		if err := s.PurgeExpired(ctx); err != nil {
			t.Fatal(err)
		}
		paths := deletedPaths(t, s)
		if len(paths) != 1 || paths[0].Blob.Name != "d" {
			t.Fatalf("deleted paths after the restore: %+v", paths)
		}
		if _, err := s.UndeletePath(ctx, ref("d"), paths[0].DeletionID); err != nil {
			t.Fatal(err)
		}
		if got := readAll(t, s, "d/f"); got != "x" {
			t.Fatalf("content %q", got)
		}
	})
}

// TestHNSSoftDeletePurge lets the retention of a deleted tree end: the
// entry leaves the listing at once, and the purge removes its records,
// tree and expiry entry.
func TestHNSSoftDeletePurge(t *testing.T) {
	s, clk := newService(t)
	s.UseHierarchicalNamespace(func(string) bool { return true })
	ctx := context.Background()
	if err := s.SetServiceProps(ctx, "acct", &ServiceProps{XML: []byte(retainOneDay)}); err != nil {
		t.Fatal(err)
	}
	r := Ref{Account: "acct", Container: "cont", Name: "d/e/f"}
	if _, err := s.CreatePath(ctx, CreatePathRequest{Ref: r}); err != nil {
		t.Fatal(err)
	}
	_, id, err := s.DeletePathKept(ctx, Ref{Account: "acct", Container: "cont", Name: "d"}, true, "", Cond{})
	if err != nil || id == "" {
		t.Fatalf("delete: %q %v", id, err)
	}
	count := func() (n int) {
		err := s.eng.View(ctx, func(tx storage.Tx) error {
			for _, kind := range []byte{kindDeletedPath, kindDeletedTree, kindPathExpiry} {
				it := tx.Scan([]byte{kind}, []byte{kind + 1}, false)
				for it.Next() {
					n++
				}
				it.Close()
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(); n != 4 {
		t.Fatalf("%d keys after the delete, want 4 (entry, two tree paths, expiry)", n)
	}
	clk.add(24 * time.Hour)
	if ds, _, err := s.ListDeletedPaths(ctx, "acct", "cont", "", "", 10); err != nil || len(ds) != 0 {
		t.Fatalf("listed after its retention: %v %v", ds, err)
	}
	if _, err := s.UndeletePath(ctx, Ref{Account: "acct", Container: "cont", Name: "d"}, id); code(err) != "BlobNotFound" {
		t.Fatalf("undelete after its retention: %v", err)
	}
	if err := s.PurgeExpired(ctx); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 0 {
		t.Fatalf("%d keys after the purge", n)
	}
}

// TestHNSSoftDeleteInBatches soft-deletes a directory larger than one
// Path - Delete batch: the continuation carries the deletion id, so the
// calls make one entry, and its undelete brings every path back.
func TestHNSSoftDeleteInBatches(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a directory of more than DeleteBatch paths")
	}
	s, _ := newService(t)
	s.UseHierarchicalNamespace(func(string) bool { return true })
	ctx := context.Background()
	if err := s.SetServiceProps(ctx, "acct", &ServiceProps{XML: []byte(retainOneDay)}); err != nil {
		t.Fatal(err)
	}
	top := Ref{Account: "acct", Container: "cont", Name: "top"}
	if _, err := s.CreatePath(ctx, CreatePathRequest{Ref: Ref{Account: "acct", Container: "cont", Name: "top/d"}, Dir: true}); err != nil {
		t.Fatal(err)
	}
	err := s.eng.Update(ctx, func(tx storage.Tx) error {
		now := s.now()
		for i := 0; i < DeleteBatch+5; i++ {
			name := fmt.Sprintf("top/d/f%05d", i)
			k, err := s.keyOf(tx, "acct", "cont", name)
			if err != nil {
				return err
			}
			b := &Blob{Name: name, Type: BlockBlob, Created: now, Modified: now, key: k}
			b.replacing(nil)
			if err := putBlob(tx, "acct", "cont", b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	next, id, err := s.DeletePathKept(ctx, top, true, "", Cond{})
	if err != nil || next == "" || id != "" {
		t.Fatalf("first batch: %q %q %v", next, id, err)
	}
	for next != "" {
		if next, id, err = s.DeletePathKept(ctx, top, true, next, Cond{}); err != nil {
			t.Fatal(err)
		}
	}
	ds, _, err := s.ListDeletedPaths(ctx, "acct", "cont", "", "", 10)
	if err != nil || len(ds) != 1 || ds[0].DeletionID != id {
		t.Fatalf("deleted paths: %+v %v (id %q)", ds, err, id)
	}
	if _, err := s.UndeletePath(ctx, top, id); err != nil {
		t.Fatal(err)
	}
	n, cont := 0, ""
	for {
		ps, next, err := s.ListPaths(ctx, "acct", "cont", ListPathsRequest{Recursive: true, Continuation: cont})
		if err != nil {
			t.Fatal(err)
		}
		if n += len(ps); next == "" {
			break
		}
		cont = next
	}
	if n != DeleteBatch+7 {
		t.Fatalf("%d paths back, want %d", n, DeleteBatch+7)
	}
}

// TestHNSDeletedPathsAccess: a caller with an identity lists deleted
// paths only with read and execute on the root, as it lists paths (403
// AuthorizationPermissionMismatch otherwise), and undeletes only with
// write on the parent.
func TestHNSDeletedPathsAccess(t *testing.T) {
	onHNSEngines(t, func(t *testing.T, s *Service) {
		softHNS(t, s)
		bg := context.Background()
		mustFile(t, s, "f", []byte("x"))
		_, id, err := s.DeletePathKept(bg, ref("f"), false, "", Cond{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.SetRootAccessControl(bg, "acct", "fsys", "", "", "rwx------", ""); err != nil {
			t.Fatal(err)
		}
		bob := WithCaller(bg, &Caller{OID: "bob"})
		if _, _, err := s.ListDeletedPaths(bob, "acct", "fsys", "", "", 10); code(err) != "AuthorizationPermissionMismatch" {
			t.Fatalf("list without access: %v", err)
		}
		if _, err := s.UndeletePath(bob, ref("f"), id); code(err) != "AuthorizationPermissionMismatch" {
			t.Fatalf("undelete without access: %v", err)
		}
		if _, err := s.SetRootAccessControl(bg, "acct", "fsys", "", "", "rwxrwxrwx", ""); err != nil {
			t.Fatal(err)
		}
		if ds, _, err := s.ListDeletedPaths(bob, "acct", "fsys", "", "", 10); err != nil || len(ds) != 1 {
			t.Fatalf("list with access: %v %v", ds, err)
		}
		if _, err := s.UndeletePath(bob, ref("f"), id); err != nil {
			t.Fatal(err)
		}
	})
}

// TestHNSListBlobsIncludeDeleted: List Blobs with include=deleted on an
// account with a namespace lists the deleted path entries after the live
// blob of their name, each with its DeletionId (a deleted tree as its
// directory alone), page by page.
func TestHNSListBlobsIncludeDeleted(t *testing.T) {
	onHNSEngines(t, func(t *testing.T, s *Service) {
		softHNS(t, s)
		ctx := context.Background()
		mustFile(t, s, "a/f", []byte("1"))
		if err := s.DeleteBlob(ctx, ref("a/f"), "", Cond{}); err != nil {
			t.Fatal(err)
		}
		mustFile(t, s, "a/f", []byte("2"))
		if err := s.DeleteBlob(ctx, ref("a/f"), "", Cond{}); err != nil {
			t.Fatal(err)
		}
		mustFile(t, s, "a/f", []byte("3"))
		mustFile(t, s, "t/x/y", []byte("4"))
		if _, err := s.DeletePath(ctx, ref("t/x"), true, "", Cond{}); err != nil {
			t.Fatal(err)
		}
		var got []string
		marker := ""
		for {
			items, next, err := s.ListBlobs(ctx, "acct", "fsys", ListBlobsRequest{Deleted: true, Max: 1, Marker: marker})
			if err != nil {
				t.Fatal(err)
			}
			for _, it := range items {
				e := it.Blob.Name
				if it.Deleted != nil {
					e += " deleted"
				}
				if it.DeletionID != "" {
					e += " id"
				}
				got = append(got, e)
			}
			if marker = next; next == "" {
				break
			}
		}
		want := []string{"a", "a/f", "a/f deleted id", "a/f deleted id", "t", "t/x deleted id"}
		if !slices.Equal(got, want) {
			t.Fatalf("listing %q, want %q", got, want)
		}
	})
}

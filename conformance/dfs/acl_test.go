package dfs

import (
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/directory"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/file"

	"github.com/lazuli-storage/lazuli/conformance/harness"
)

// New children take the parent directory's default ACL: a file as its
// access ACL capped by the create mode (the umask is ignored), a
// directory as both access and default ACL.
func TestSDKDefaultACLInherited(t *testing.T) {
	harness.ForEachHNS(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		fs := newFS(t, tg)
		d := fs.NewDirectoryClient("shared")
		if _, err := d.Create(ctx, nil); err != nil {
			t.Fatal(err)
		}
		defaults := "default:user::rwx,default:user:oid-7:rw-,default:group::r-x,default:mask::rwx,default:other::r--"
		if _, err := d.SetAccessControl(ctx, &directory.SetAccessControlOptions{ACL: to.Ptr("user::rwx,group::r-x,other::---," + defaults)}); err != nil {
			t.Fatal(err)
		}
		f := fs.NewFileClient("shared/report.csv")
		if _, err := f.Create(ctx, &file.CreateOptions{Permissions: to.Ptr("0750"), Umask: to.Ptr("0777")}); err != nil {
			t.Fatal(err)
		}
		fa, err := f.GetAccessControl(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if deref(fa.ACL) != "user::rwx,user:oid-7:rw-,group::r-x,mask::r-x,other::---" {
			t.Fatalf("file ACL %v", deref(fa.ACL))
		}
		sub := fs.NewDirectoryClient("shared/sub")
		if _, err := sub.Create(ctx, nil); err != nil {
			t.Fatal(err)
		}
		sa, err := sub.GetAccessControl(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if want := "user::rwx,user:oid-7:rw-,group::r-x,mask::rwx,other::r--," + defaults; deref(sa.ACL) != want {
			t.Fatalf("directory ACL %v, want %v", deref(sa.ACL), want)
		}
	})
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// The root directory has access control of its own: set and read through
// the directory client of "" (the filesystem URL), and changed with
// everything under it by Set Access Control Recursive.
func TestSDKRootAccessControl(t *testing.T) {
	harness.ForEachHNS(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		fs := newFS(t, tg)
		root := fs.NewDirectoryClient("")
		got, err := root.GetAccessControl(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if deref(got.Owner) != "$superuser" || deref(got.Permissions) != "rwxr-x---" {
			t.Fatalf("new root: %s %s", deref(got.Owner), deref(got.Permissions))
		}
		if _, err := fs.NewFileClient("d/f.txt").Create(ctx, nil); err != nil {
			t.Fatal(err)
		}
		acl := "user::rwx,user:oid-9:r-x,group::r-x,mask::r-x,other::--x"
		res, err := root.SetAccessControlRecursive(ctx, acl, nil)
		if err != nil {
			t.Fatal(err)
		}
		if *res.DirectoriesSuccessful != 2 || *res.FilesSuccessful != 1 || *res.FailureCount != 0 {
			t.Fatalf("changed %d directories, %d files, %d failures", *res.DirectoriesSuccessful, *res.FilesSuccessful, *res.FailureCount)
		}
		for _, p := range []string{"", "d"} {
			got, err := fs.NewDirectoryClient(p).GetAccessControl(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if deref(got.ACL) != acl {
				t.Fatalf("%q ACL %s", p, deref(got.ACL))
			}
		}
		if _, err := root.SetAccessControl(ctx, &directory.SetAccessControlOptions{Permissions: to.Ptr("rwxrwx---")}); err != nil {
			t.Fatal(err)
		}
		got, err = root.GetAccessControl(ctx, nil)
		if err != nil || deref(got.Permissions) != "rwxrwx---+" {
			t.Fatalf("root permissions %v %v", deref(got.Permissions), err)
		}
	})
}

// The root's default ACL is inherited like any directory's: by a file
// made at the top and by the directories made on the way to a path.
func TestSDKRootDefaultACLInherited(t *testing.T) {
	harness.ForEachHNS(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		fs := newFS(t, tg)
		defaults := "default:user::rwx,default:user:oid-3:r-x,default:group::r-x,default:mask::r-x,default:other::---"
		if _, err := fs.NewDirectoryClient("").SetAccessControl(ctx, &directory.SetAccessControlOptions{ACL: to.Ptr("user::rwx,group::r-x,other::---," + defaults)}); err != nil {
			t.Fatal(err)
		}
		if _, err := fs.NewFileClient("top.txt").Create(ctx, nil); err != nil {
			t.Fatal(err)
		}
		fa, err := fs.NewFileClient("top.txt").GetAccessControl(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if deref(fa.ACL) != "user::rw-,user:oid-3:r-x,group::r-x,mask::r--,other::---" {
			t.Fatalf("file ACL %s", deref(fa.ACL))
		}
		if _, err := fs.NewFileClient("made/on/the/way.txt").Create(ctx, nil); err != nil {
			t.Fatal(err)
		}
		da, err := fs.NewDirectoryClient("made").GetAccessControl(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if want := "user::rwx,user:oid-3:r-x,group::r-x,mask::r-x,other::---," + defaults; deref(da.ACL) != want {
			t.Fatalf("directory ACL %s, want %s", deref(da.ACL), want)
		}
	})
}

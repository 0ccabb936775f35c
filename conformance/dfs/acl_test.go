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

package oauth_test

import (
	"context"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/filesystem"

	"github.com/lazuli-storage/lazuli/emulator"
)

// A path an OAuth caller creates is owned by the token's oid; one a
// Shared Key caller creates by $superuser.
func TestDataLakeOwnerIsCallerOID(t *testing.T) {
	s := startWith(t, emulator.Options{OAuth: true, HierarchicalNamespace: true})
	ctx := context.Background()
	cred := goodToken()
	fs, err := filesystem.NewClient(s.url("blob")+"owned", cred, &filesystem.ClientOptions{ClientOptions: s.opts()})
	must(t, err)
	_, err = fs.Create(ctx, nil)
	must(t, err)
	_, err = fs.NewDirectoryClient("dir").Create(ctx, nil)
	must(t, err)
	f := fs.NewFileClient("dir/f.txt")
	_, err = f.Create(ctx, nil)
	must(t, err)
	got, err := f.GetAccessControl(ctx, nil)
	must(t, err)
	if got.Owner == nil || *got.Owner != cred.oid {
		t.Fatalf("owner %v, want %s", got.Owner, cred.oid)
	}
	d, err := fs.NewDirectoryClient("dir").GetAccessControl(ctx, nil)
	must(t, err)
	if d.Owner == nil || *d.Owner != cred.oid || d.Group == nil || *d.Group != "$superuser" {
		t.Fatalf("directory owner %v group %v", d.Owner, d.Group)
	}
}

package oauth_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/service"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/directory"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/filesystem"
	dlsas "github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/sas"
	dlservice "github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/service"

	"github.com/lazuli-storage/lazuli/emulator"
	"github.com/lazuli-storage/lazuli/internal/engine/memstore"
)

const (
	aliceOID = "a11ce000-0000-0000-0000-000000000001"
	bobOID   = "b0b00000-0000-0000-0000-000000000002"
	teamGID  = "7ea70000-0000-0000-0000-0000000000a1"
)

// principal returns a token for oid with the given groups and roles.
func principal(oid string, groups, roles []string) *testToken {
	t := goodToken()
	t.oid, t.groups, t.roles = oid, groups, roles
	return t
}

// lake is a filesystem made by the Shared Key caller (the superuser),
// with a client per principal.
type lake struct {
	s     *server
	admin *filesystem.Client
	name  string
}

func newLake(t *testing.T, s *server, name string) *lake {
	t.Helper()
	cred, err := azdatalake.NewSharedKeyCredential(emulator.Account, emulator.Key)
	must(t, err)
	fs, err := filesystem.NewClientWithSharedKeyCredential(s.url("blob")+name, cred, &filesystem.ClientOptions{ClientOptions: s.opts()})
	must(t, err)
	_, err = fs.Create(context.Background(), nil)
	must(t, err)
	return &lake{s: s, admin: fs, name: name}
}

func (l *lake) as(t *testing.T, tok *testToken) *filesystem.Client {
	t.Helper()
	fs, err := filesystem.NewClient(l.s.url("blob")+l.name, tok, &filesystem.ClientOptions{ClientOptions: l.s.opts()})
	must(t, err)
	return fs
}

func setACL(t *testing.T, d *directory.Client, acl string) {
	t.Helper()
	_, err := d.SetAccessControl(context.Background(), &directory.SetAccessControlOptions{ACL: to.Ptr(acl)})
	must(t, err)
}

// OAuth callers are held to the POSIX ACLs as ADLS evaluates them:
// execute to traverse, write and execute on the parent to create and
// delete, read to read, the mask over named entries, group entries
// matched against the token's groups claim, the sticky bit, and only the
// owner changing access control. Each refusal is 403
// AuthorizationPermissionMismatch.
func TestDataLakeACLsBindOAuthCallers(t *testing.T) {
	s := startWith(t, emulator.Options{OAuth: true, HierarchicalNamespace: true})
	ctx := context.Background()
	l := newLake(t, s, "acls")
	// The root lets alice and the team through; data is alice's to
	// write in, secret the team's.
	setACL(t, l.admin.NewDirectoryClient(""), "user::rwx,user:"+aliceOID+":--x,group::r-x,group:"+teamGID+":--x,mask::r-x,other::---")
	_, err := l.admin.NewDirectoryClient("data").Create(ctx, nil)
	must(t, err)
	setACL(t, l.admin.NewDirectoryClient("data"), "user::rwx,user:"+aliceOID+":rwx,group::r-x,mask::rwx,other::rwx")
	_, err = l.admin.NewDirectoryClient("secret").Create(ctx, nil)
	must(t, err)
	_, err = l.admin.NewFileClient("data/report.csv").Create(ctx, nil)
	must(t, err)

	alice := l.as(t, principal(aliceOID, nil, nil))
	bob := l.as(t, principal(bobOID, []string{teamGID}, nil))

	// Alice creates in data and owns what she makes.
	_, err = alice.NewFileClient("data/a.txt").Create(ctx, nil)
	must(t, err)
	got, err := alice.NewFileClient("data/a.txt").GetAccessControl(ctx, nil)
	must(t, err)
	if deref(got.Owner) != aliceOID {
		t.Fatalf("owner %s", deref(got.Owner))
	}
	// Not in secret (no write), nor at the root (execute only).
	_, err = alice.NewFileClient("secret/x.txt").Create(ctx, nil)
	refused(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch")
	_, err = alice.NewFileClient("top.txt").Create(ctx, nil)
	refused(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch")
	// Listing needs read and execute on the directory listed.
	_, err = alice.NewListPathsPager(false, nil).NextPage(ctx)
	refused(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch")
	_, err = alice.NewListPathsPager(true, &filesystem.ListPathsOptions{Prefix: to.Ptr("data")}).NextPage(ctx)
	must(t, err)
	// Reading a file needs read on it (through the Blob API too).
	_, err = alice.NewFileClient("data/report.csv").DownloadStream(ctx, nil)
	refused(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch")
	// Only the owner changes access control, only the superuser the owner.
	_, err = alice.NewFileClient("data/report.csv").SetAccessControl(ctx, &file.SetAccessControlOptions{Permissions: to.Ptr("rwxrwxrwx")})
	refused(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch")
	_, err = alice.NewFileClient("data/a.txt").SetAccessControl(ctx, &file.SetAccessControlOptions{Permissions: to.Ptr("rw-r--r--")})
	must(t, err)
	_, err = alice.NewFileClient("data/a.txt").SetAccessControl(ctx, &file.SetAccessControlOptions{Owner: to.Ptr(bobOID)})
	refused(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch")

	// The mask caps named entries: alice's rwx on data becomes r-x.
	setACL(t, l.admin.NewDirectoryClient("data"), "user::rwx,user:"+aliceOID+":rwx,group::r-x,mask::r-x,other::rwx")
	_, err = alice.NewFileClient("data/b.txt").Create(ctx, nil)
	refused(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch")

	// Bob gets in through his group.
	_, err = bob.NewFileClient("secret/b.txt").Create(ctx, nil)
	refused(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch")
	setACL(t, l.admin.NewDirectoryClient("secret"), "user::rwx,group::r-x,group:"+teamGID+":rwx,mask::rwx,other::---")
	_, err = bob.NewFileClient("secret/b.txt").Create(ctx, nil)
	must(t, err)

	// The sticky bit: in a directory everyone writes to, only the owner
	// of a child (or of the directory, or the superuser) removes it.
	_, err = l.admin.NewDirectoryClient("").SetAccessControl(ctx, &directory.SetAccessControlOptions{
		ACL: to.Ptr("user::rwx,user:" + aliceOID + ":--x,group::r-x,group:" + teamGID + ":--x,mask::r-x,other::--x")})
	must(t, err)
	_, err = l.admin.NewDirectoryClient("tmp").Create(ctx, &directory.CreateOptions{Permissions: to.Ptr("1777")})
	must(t, err)
	_, err = alice.NewFileClient("tmp/mine.txt").Create(ctx, nil)
	must(t, err)
	_, err = bob.NewFileClient("tmp/mine.txt").Delete(ctx, nil)
	refused(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch")
	_, err = bob.NewFileClient("tmp/mine.txt").Rename(ctx, "tmp/bobs.txt", nil)
	refused(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch")
	_, err = alice.NewFileClient("tmp/mine.txt").Delete(ctx, nil)
	must(t, err)

	// A token naming Storage Blob Data Owner is the superuser.
	owner := l.as(t, principal(bobOID, nil, []string{"Storage Blob Data Owner"}))
	_, err = owner.NewFileClient("secret/owned.txt").Create(ctx, nil)
	must(t, err)
	_, err = owner.NewFileClient("data/report.csv").SetAccessControl(ctx, &file.SetAccessControlOptions{Owner: to.Ptr(aliceOID)})
	must(t, err)
	_, err = alice.NewFileClient("data/report.csv").DownloadStream(ctx, nil)
	must(t, err)
}

// The refusal is Azure's 403 AuthorizationPermissionMismatch with the
// JSON error body of the dfs API.
func TestDataLakeACLRefusalOnTheWire(t *testing.T) {
	s := startWith(t, emulator.Options{OAuth: true, HierarchicalNamespace: true})
	newLake(t, s, "wire")
	req, err := http.NewRequest(http.MethodPut, s.url("blob")+"wire/f.txt?resource=file", nil)
	must(t, err)
	req.Header.Set("Authorization", "Bearer "+principal(aliceOID, nil, nil).jwt())
	req.Header.Set("X-Ms-Version", "2023-11-03")
	resp, err := s.transport.Do(req)
	must(t, err)
	defer resp.Body.Close()
	var body struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 403 || resp.Header.Get("X-Ms-Error-Code") != "AuthorizationPermissionMismatch" || body.Error.Code != "AuthorizationPermissionMismatch" {
		t.Fatalf("%d %s %+v", resp.StatusCode, resp.Header.Get("X-Ms-Error-Code"), body)
	}
}

// Set Access Control Recursive names each path it cannot change (one
// the caller does not own): without forceFlag it stops at the first,
// with it (ContinueOnFailure) it goes on and counts them all.
func TestDataLakeRecursiveACLFailures(t *testing.T) {
	s := startWith(t, emulator.Options{OAuth: true, HierarchicalNamespace: true})
	ctx := context.Background()
	l := newLake(t, s, "recursive")
	setACL(t, l.admin.NewDirectoryClient(""), "user::rwx,group::r-x,other::rwx")
	alice := l.as(t, principal(aliceOID, nil, nil))
	_, err := alice.NewDirectoryClient("tree").Create(ctx, nil)
	must(t, err)
	for _, f := range []string{"tree/a.txt", "tree/c.txt"} {
		_, err = alice.NewFileClient(f).Create(ctx, nil)
		must(t, err)
	}
	// The superuser's file in alice's tree.
	_, err = l.admin.NewFileClient("tree/b.txt").Create(ctx, nil)
	must(t, err)

	acl := "user::rwx,user:" + bobOID + ":r-x,group::r-x,other::---"
	res, err := alice.NewDirectoryClient("tree").SetAccessControlRecursive(ctx, acl, nil)
	must(t, err)
	if *res.FailureCount != 1 || len(res.FailedEntries) != 1 || deref(res.FailedEntries[0].Name) != "tree/b.txt" ||
		deref(res.FailedEntries[0].Type) != "FILE" || deref(res.FailedEntries[0].ErrorMessage) == "" {
		t.Fatalf("failures %d %+v", *res.FailureCount, res.FailedEntries)
	}
	// tree and tree/a.txt came before it; tree/c.txt was not reached.
	if *res.DirectoriesSuccessful != 1 || *res.FilesSuccessful != 1 {
		t.Fatalf("stopped after %d directories and %d files", *res.DirectoriesSuccessful, *res.FilesSuccessful)
	}
	c, err := alice.NewFileClient("tree/c.txt").GetAccessControl(ctx, nil)
	must(t, err)
	if deref(c.ACL) == acl {
		t.Fatal("the change went past the failure without forceFlag")
	}

	res, err = alice.NewDirectoryClient("tree").SetAccessControlRecursive(ctx, acl, &directory.SetAccessControlRecursiveOptions{ContinueOnFailure: to.Ptr(true)})
	must(t, err)
	if *res.FailureCount != 1 || *res.DirectoriesSuccessful != 1 || *res.FilesSuccessful != 2 {
		t.Fatalf("with forceFlag: %d failures, %d directories, %d files", *res.FailureCount, *res.DirectoriesSuccessful, *res.FilesSuccessful)
	}
	c, err = alice.NewFileClient("tree/c.txt").GetAccessControl(ctx, nil)
	must(t, err)
	if deref(c.ACL) != acl {
		t.Fatalf("c.txt ACL %s", deref(c.ACL))
	}
}

// A user delegation SAS does what the owner of its key may do (its data
// role when it asked for the key, else the ACLs), as Azure documents for
// skoid; with suoid it is also held to that oid's ACLs; with saoid it is
// not (the key's owner vouched for it). What it creates belongs to the
// oid it names, or to the key's owner.
func TestDataLakeUserDelegationSASObjectIDs(t *testing.T) {
	s := startWith(t, emulator.Options{OAuth: true, HierarchicalNamespace: true})
	ctx := context.Background()
	l := newLake(t, s, "delegated")
	now := time.Now().UTC()
	// key returns a user delegation key of the principal tok.
	key := func(tok *testToken) *dlservice.UserDelegationCredential {
		svc, err := dlservice.NewClient(s.url("blob"), tok, &dlservice.ClientOptions{ClientOptions: s.opts()})
		must(t, err)
		udc, err := svc.GetUserDelegationCredential(ctx, dlservice.KeyInfo{
			Start: to.Ptr(now.Add(-time.Minute).Format(dlsas.TimeFormat)), Expiry: to.Ptr(now.Add(time.Hour).Format(dlsas.TimeFormat))}, nil)
		must(t, err)
		return udc
	}
	const keyOID, carolOID = "ce11a000-0000-0000-0000-000000000003", "ca401000-0000-0000-0000-000000000004"
	plain := key(principal(keyOID, nil, nil))
	contributor := key(principal(carolOID, nil, []string{"Storage Blob Data Contributor"}))
	create := func(udc *dlservice.UserDelegationCredential, name string, v dlsas.DatalakeSignatureValues) error {
		v.Protocol, v.ExpiryTime, v.FileSystemName = dlsas.ProtocolHTTPS, now.Add(30*time.Minute), "delegated"
		v.Permissions = to.Ptr(dlsas.FileSystemPermissions{Read: true, Write: true, Create: true}).String()
		qp, err := v.SignWithUserDelegation(udc)
		must(t, err)
		f, err := file.NewClientWithNoCredential(s.url("blob")+"delegated/"+name+"?"+qp.Encode(), &file.ClientOptions{ClientOptions: s.opts()})
		must(t, err)
		_, err = f.Create(ctx, nil)
		return err
	}
	owner := func(name, want string) {
		t.Helper()
		got, err := l.admin.NewFileClient(name).GetAccessControl(ctx, nil)
		must(t, err)
		if deref(got.Owner) != want {
			t.Fatalf("%s: owner %s, want %s", name, deref(got.Owner), want)
		}
	}
	deny := func(err error) { t.Helper(); refused(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch") }

	// The root lets alice write, not the key's owner: neither suoid nor
	// saoid nor a SAS without them gets past the owner's lack of access.
	setACL(t, l.admin.NewDirectoryClient(""), "user::rwx,user:"+aliceOID+":rwx,group::r-x,mask::rwx,other::---")
	deny(create(plain, "u.txt", dlsas.DatalakeSignatureValues{UnauthorizedObjectID: aliceOID}))
	deny(create(plain, "a.txt", dlsas.DatalakeSignatureValues{AuthorizedObjectID: aliceOID}))
	deny(create(plain, "k.txt", dlsas.DatalakeSignatureValues{}))

	// Once the owner may write too, suoid alice may, suoid bob (no
	// entry) may not, and saoid bob may: he is not checked.
	setACL(t, l.admin.NewDirectoryClient(""), "user::rwx,user:"+aliceOID+":rwx,user:"+keyOID+":rwx,group::r-x,mask::rwx,other::---")
	must(t, create(plain, "u.txt", dlsas.DatalakeSignatureValues{UnauthorizedObjectID: aliceOID}))
	owner("u.txt", aliceOID)
	deny(create(plain, "b.txt", dlsas.DatalakeSignatureValues{UnauthorizedObjectID: bobOID}))
	must(t, create(plain, "a.txt", dlsas.DatalakeSignatureValues{AuthorizedObjectID: bobOID}))
	owner("a.txt", bobOID)
	must(t, create(plain, "k.txt", dlsas.DatalakeSignatureValues{}))
	owner("k.txt", keyOID)

	// A key owner with a data role needs no ACL entry: carol's
	// Contributor role lets her SAS create, as suoid alice or as herself.
	must(t, create(contributor, "c-u.txt", dlsas.DatalakeSignatureValues{UnauthorizedObjectID: aliceOID}))
	deny(create(contributor, "c-b.txt", dlsas.DatalakeSignatureValues{UnauthorizedObjectID: bobOID}))
	must(t, create(contributor, "c.txt", dlsas.DatalakeSignatureValues{}))
	owner("c.txt", carolOID)
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// upn=true names users by the user principal names lazuli learned from
// the tokens it accepted: through the Go SDK's UPN options and raw HTTP,
// on another instance sharing the engine too. A user whose token carried
// no name (bob) and group entries stay as stored.
func TestDataLakeUPN(t *testing.T) {
	s := startWith(t, emulator.Options{OAuth: true, HierarchicalNamespace: true, Engine: memstore.New()})
	other := startWith(t, emulator.Options{OAuth: true, HierarchicalNamespace: true, Engine: s.emu.Engine()})
	ctx := context.Background()
	l := newLake(t, s, "upn")
	setACL(t, l.admin.NewDirectoryClient(""), "user::rwx,user:"+bobOID+":rwx,group::r-x,group:"+aliceOID+":r-x,mask::rwx,other::rwx")
	tok := principal(aliceOID, nil, nil)
	tok.upn = "alice@contoso.com"
	alice := l.as(t, tok)
	_, err := alice.NewFileClient("mine.txt").Create(ctx, nil)
	must(t, err)
	_, err = l.as(t, principal(bobOID, nil, nil)).NewFileClient("bobs.txt").Create(ctx, nil)
	must(t, err)
	for _, srv := range []*server{s, other} {
		fs := (&lake{s: srv, admin: l.admin, name: l.name}).as(t, principal(aliceOID, nil, nil))
		page, err := fs.NewListPathsPager(false, &filesystem.ListPathsOptions{UPN: to.Ptr(true)}).NextPage(ctx)
		must(t, err)
		owners := map[string]string{}
		for _, p := range page.Paths {
			owners[deref(p.Name)] = deref(p.Owner)
		}
		if owners["mine.txt"] != "alice@contoso.com" || owners["bobs.txt"] != bobOID {
			t.Fatalf("list upn: %v", owners)
		}
		page, err = fs.NewListPathsPager(false, nil).NextPage(ctx)
		must(t, err)
		for _, p := range page.Paths {
			if deref(p.Name) == "mine.txt" && deref(p.Owner) != aliceOID {
				t.Fatalf("list: owner %q", deref(p.Owner))
			}
		}
		got, err := fs.NewFileClient("mine.txt").GetAccessControl(ctx, &file.GetAccessControlOptions{UPN: to.Ptr(true)})
		must(t, err)
		if deref(got.Owner) != "alice@contoso.com" {
			t.Fatalf("get access control: owner %q", deref(got.Owner))
		}
		root, err := fs.NewDirectoryClient("").GetAccessControl(ctx, &directory.GetAccessControlOptions{UPN: to.Ptr(true)})
		must(t, err)
		if want := "user::rwx,user:" + bobOID + ":rwx,group::r-x,group:" + aliceOID + ":r-x,mask::rwx,other::rwx"; deref(root.ACL) != want {
			t.Fatalf("root acl %q, want %q", deref(root.ACL), want)
		}
		req, err := http.NewRequest(http.MethodHead, srv.url("blob")+"upn/mine.txt?action=getAccessControl&upn=true", nil)
		must(t, err)
		req.Header.Set("Authorization", "Bearer "+principal(bobOID, nil, nil).jwt())
		req.Header.Set("X-Ms-Version", "2023-11-03")
		resp, err := srv.transport.Do(req)
		must(t, err)
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("X-Ms-Owner") != "alice@contoso.com" {
			t.Fatalf("%d owner %q", resp.StatusCode, resp.Header.Get("X-Ms-Owner"))
		}
	}
}

// The Blob API is held to the same ACLs on an HNS account: an upload
// needs write and execute on the parent, a blob an OAuth caller writes is
// its own and the directories made on the way too, and a read needs read.
func TestDataLakeACLsBindBlobAPI(t *testing.T) {
	s := startWith(t, emulator.Options{OAuth: true, HierarchicalNamespace: true})
	ctx := context.Background()
	l := newLake(t, s, "blobapi")
	setACL(t, l.admin.NewDirectoryClient(""), "user::rwx,user:"+aliceOID+":rwx,group::r-x,mask::rwx,other::---")
	_, err := l.admin.NewDirectoryClient("locked").Create(ctx, nil)
	must(t, err)
	svc, err := service.NewClient(s.url("blob"), principal(aliceOID, nil, nil), &service.ClientOptions{ClientOptions: s.opts()})
	must(t, err)
	cc := svc.NewContainerClient("blobapi")
	_, err = cc.NewBlockBlobClient("mine/deep/a.txt").UploadBuffer(ctx, []byte("hers"), nil)
	must(t, err)
	for _, p := range []string{"mine", "mine/deep", "mine/deep/a.txt"} {
		got, err := l.admin.NewFileClient(p).GetAccessControl(ctx, nil)
		must(t, err)
		if deref(got.Owner) != aliceOID {
			t.Fatalf("%s owner %s", p, deref(got.Owner))
		}
	}
	_, err = cc.NewBlockBlobClient("locked/a.txt").UploadBuffer(ctx, []byte("x"), nil)
	refused(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch")
	_, err = l.admin.NewFileClient("locked/secret.txt").Create(ctx, nil)
	must(t, err)
	_, err = cc.NewBlobClient("locked/secret.txt").DownloadStream(ctx, nil)
	refused(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch")
	_, err = cc.NewBlobClient("locked/secret.txt").Delete(ctx, nil)
	refused(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch")
	// List Blobs lists the directory its prefix names.
	_, err = cc.NewListBlobsFlatPager(nil).NextPage(ctx)
	must(t, err)
	_, err = cc.NewListBlobsHierarchyPager("/", &container.ListBlobsHierarchyOptions{Prefix: to.Ptr("locked/")}).NextPage(ctx)
	refused(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch")
}

// A recursive listing lists the contents of every directory under the
// one asked for, so it needs read and execute on each of them.
func TestDataLakeRecursiveListingNeedsEachDirectory(t *testing.T) {
	s := startWith(t, emulator.Options{OAuth: true, HierarchicalNamespace: true})
	ctx := context.Background()
	l := newLake(t, s, "listing")
	readable := "user::rwx,user:" + aliceOID + ":r-x,group::r-x,mask::r-x,other::---"
	setACL(t, l.admin.NewDirectoryClient(""), readable)
	for _, f := range []string{"pub/a.txt", "priv/b.txt"} {
		_, err := l.admin.NewFileClient(f).Create(ctx, nil)
		must(t, err)
	}
	setACL(t, l.admin.NewDirectoryClient("pub"), readable)
	alice := l.as(t, principal(aliceOID, nil, nil))
	_, err := alice.NewListPathsPager(false, nil).NextPage(ctx)
	must(t, err)
	_, err = alice.NewListPathsPager(true, nil).NextPage(ctx)
	refused(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch")
	setACL(t, l.admin.NewDirectoryClient("priv"), readable)
	page, err := alice.NewListPathsPager(true, nil).NextPage(ctx)
	must(t, err)
	if len(page.Paths) != 4 {
		t.Fatalf("%d paths", len(page.Paths))
	}
}

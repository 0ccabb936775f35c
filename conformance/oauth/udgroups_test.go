package oauth_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/file"
	dlsas "github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/sas"
	dlservice "github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/service"

	"github.com/lazuli-storage/lazuli/emulator"
)

// A user delegation SAS is checked against object ids only: Azure
// documents the ACL check of a delegation SAS as a POSIX ACL check
// "against the object ID" (suoid), and the owner of the key as skoid; a
// SAS carries no groups, and the groups claim of the token the key was
// asked with is not part of the key. So a named-group entry that lets
// the key's owner in over OAuth does not let its SAS in, with or without
// suoid, and a named-user entry for the owner does.
func TestDataLakeUserDelegationSASIgnoresGroups(t *testing.T) {
	s := startWith(t, emulator.Options{OAuth: true, HierarchicalNamespace: true})
	ctx := context.Background()
	l := newLake(t, s, "udgroups")
	now := time.Now().UTC()
	const keyOID = "9e0a0000-0000-0000-0000-000000000005"
	member := principal(keyOID, []string{teamGID}, nil)
	svc, err := dlservice.NewClient(s.url("blob"), member, &dlservice.ClientOptions{ClientOptions: s.opts()})
	must(t, err)
	udc, err := svc.GetUserDelegationCredential(ctx, dlservice.KeyInfo{
		Start: to.Ptr(now.Add(-time.Minute).Format(dlsas.TimeFormat)), Expiry: to.Ptr(now.Add(time.Hour).Format(dlsas.TimeFormat))}, nil)
	must(t, err)
	create := func(name string, v dlsas.DatalakeSignatureValues) error {
		v.Protocol, v.ExpiryTime, v.FileSystemName = dlsas.ProtocolHTTPS, now.Add(30*time.Minute), "udgroups"
		v.Permissions = to.Ptr(dlsas.FileSystemPermissions{Read: true, Write: true, Create: true}).String()
		qp, err := v.SignWithUserDelegation(udc)
		must(t, err)
		f, err := file.NewClientWithNoCredential(s.url("blob")+"udgroups/"+name+"?"+qp.Encode(), &file.ClientOptions{ClientOptions: s.opts()})
		must(t, err)
		_, err = f.Create(ctx, nil)
		return err
	}
	deny := func(err error) { t.Helper(); refused(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch") }

	// The team may write in the root; alice too, by name.
	setACL(t, l.admin.NewDirectoryClient(""), "user::rwx,user:"+aliceOID+":rwx,group::r-x,group:"+teamGID+":rwx,mask::rwx,other::---")
	// Over OAuth the key's owner is in the team: the group entry lets it in.
	_, err = l.as(t, member).NewFileClient("oauth.txt").Create(ctx, nil)
	must(t, err)
	// Its SAS is not: the group entry does not count for skoid...
	deny(create("k.txt", dlsas.DatalakeSignatureValues{}))
	// ...nor for an suoid who has an entry of her own, since the key's
	// owner must be allowed too.
	deny(create("u.txt", dlsas.DatalakeSignatureValues{UnauthorizedObjectID: aliceOID}))
	deny(create("a.txt", dlsas.DatalakeSignatureValues{AuthorizedObjectID: aliceOID}))

	// A named-user entry for the key's owner lets the same SAS in.
	setACL(t, l.admin.NewDirectoryClient(""), "user::rwx,user:"+aliceOID+":rwx,user:"+keyOID+":rwx,group::r-x,group:"+teamGID+":rwx,mask::rwx,other::---")
	must(t, create("k.txt", dlsas.DatalakeSignatureValues{}))
	must(t, create("u.txt", dlsas.DatalakeSignatureValues{UnauthorizedObjectID: aliceOID}))

}

package oauth_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/service"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/file"

	"github.com/lazuli-storage/lazuli/emulator"
)

// A Blob write over a directory is checked against the ACLs before the
// namespace: a caller that may not write there is refused (403), one
// that may learns of the conflict (409 PathConflict). Put Block and Put
// Block List on a file Path - Create made are checked the same way.
func TestDataLakeBlobWriteOverDirectoryChecksACLFirst(t *testing.T) {
	s := startWith(t, emulator.Options{OAuth: true, HierarchicalNamespace: true})
	ctx := context.Background()
	l := newLake(t, s, "aclfirst")
	setACL(t, l.admin.NewDirectoryClient(""), "user::rwx,user:"+aliceOID+":rwx,group::r-x,mask::rwx,other::---")
	_, err := l.admin.NewFileClient("dir/f.txt").Create(ctx, nil)
	must(t, err)
	blobAs := func(oid string) *service.Client {
		svc, err := service.NewClient(s.url("blob"), principal(oid, nil, nil), &service.ClientOptions{ClientOptions: s.opts()})
		must(t, err)
		return svc
	}
	_, err = blobAs(bobOID).NewContainerClient("aclfirst").NewBlockBlobClient("dir").UploadBuffer(ctx, []byte("x"), nil)
	refused(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch")
	_, err = blobAs(aliceOID).NewContainerClient("aclfirst").NewBlockBlobClient("dir").UploadBuffer(ctx, []byte("x"), nil)
	refused(t, err, http.StatusConflict, "PathConflict")

	// So do Put Block and Put Block List on a file Path - Create made.
	setACL(t, l.admin.NewDirectoryClient("dir"), "user::rwx,user:"+aliceOID+":rwx,group::r-x,mask::rwx,other::---")
	_, err = l.admin.NewFileClient("dir/f.txt").SetAccessControl(ctx, &file.SetAccessControlOptions{
		ACL: to.Ptr("user::rw-,user:" + aliceOID + ":rw-,group::r--,mask::rw-,other::---")})
	must(t, err)
	for oid, want := range map[string]int{bobOID: http.StatusForbidden, aliceOID: http.StatusConflict} {
		code := map[int]string{http.StatusForbidden: "AuthorizationPermissionMismatch", http.StatusConflict: "BlobOperationNotSupported"}[want]
		f := blobAs(oid).NewContainerClient("aclfirst").NewBlockBlobClient("dir/f.txt")
		_, err = f.StageBlock(ctx, "QUFBQQ==", streaming.NopCloser(strings.NewReader("abcd")), nil)
		refused(t, err, want, code)
		_, err = f.CommitBlockList(ctx, []string{"QUFBQQ=="}, nil)
		refused(t, err, want, code)
	}
}

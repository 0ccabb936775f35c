package oauth_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/service"
)

// TestUserDelegationSASNewerFields signs user delegation SAS with the Go
// SDK's own signer (sv of the SDK's newest service version) and uses them
// against lazuli: a directory SAS (sr=d, sdd), the create permission with
// and without overwrite, signed request headers and query parameters
// (srh, srq) bound to the values the request carries, and a Blob Batch
// under a container SAS.
func TestUserDelegationSASNewerFields(t *testing.T) {
	s := start(t, true)
	ctx := context.Background()
	svc, err := service.NewClient(s.url("blob"), goodToken(), &service.ClientOptions{ClientOptions: s.opts()})
	must(t, err)
	_, err = svc.CreateContainer(ctx, "fields", nil)
	must(t, err)
	cc := svc.NewContainerClient("fields")
	for _, n := range []string{"dir/sub/a.txt", "dir/b.txt", "top.txt", "x1", "x2"} {
		_, err = cc.NewBlockBlobClient(n).UploadBuffer(ctx, []byte(n), nil)
		must(t, err)
	}
	now := time.Now().UTC()
	udc, err := svc.GetUserDelegationCredential(ctx, service.KeyInfo{
		Start: to.Ptr(now.Add(-time.Minute).Format(sas.TimeFormat)), Expiry: to.Ptr(now.Add(time.Hour).Format(sas.TimeFormat))}, nil)
	must(t, err)
	sign := func(v sas.BlobSignatureValues) string {
		t.Helper()
		v.Protocol, v.ContainerName, v.ExpiryTime = sas.ProtocolHTTPS, "fields", now.Add(30*time.Minute)
		qp, err := v.SignWithUserDelegation(udc)
		must(t, err)
		return qp.Encode()
	}
	blobAt := func(name, q string) *blob.Client {
		c, err := blob.NewClientWithNoCredential(s.url("blob")+"fields/"+name+"?"+q, &blob.ClientOptions{ClientOptions: s.opts()})
		must(t, err)
		return c
	}
	read := to.Ptr(sas.BlobPermissions{Read: true}).String()

	// Directory SAS: the blobs under dir/sub, nothing above.
	dq := sign(sas.BlobSignatureValues{Directory: "dir/sub", Permissions: read})
	_, err = blobAt("dir/sub/a.txt", dq).GetProperties(ctx, nil)
	must(t, err)
	_, err = blobAt("dir/b.txt", dq).GetProperties(ctx, nil)
	refused(t, err, http.StatusForbidden, "AuthenticationFailed")

	// Create without write: a new blob yes, an overwrite no.
	cq := sign(sas.BlobSignatureValues{BlobName: "fresh.txt", Permissions: to.Ptr(sas.BlobPermissions{Create: true}).String()})
	nb, err := blockblob.NewClientWithNoCredential(s.url("blob")+"fields/fresh.txt?"+cq, &blockblob.ClientOptions{ClientOptions: s.opts()})
	must(t, err)
	_, err = nb.UploadBuffer(ctx, []byte("1"), nil)
	must(t, err)
	_, err = nb.UploadBuffer(ctx, []byte("2"), nil)
	refused(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch")
	wq := sign(sas.BlobSignatureValues{BlobName: "fresh.txt", Permissions: to.Ptr(sas.BlobPermissions{Create: true, Write: true}).String()})
	ow, err := blockblob.NewClientWithNoCredential(s.url("blob")+"fields/fresh.txt?"+wq, &blockblob.ClientOptions{ClientOptions: s.opts()})
	must(t, err)
	_, err = ow.UploadBuffer(ctx, []byte("2"), nil)
	must(t, err)

	// srh and srq: the request must carry the bound header and query
	// parameter with the signed values.
	bq := sign(sas.BlobSignatureValues{BlobName: "top.txt", Permissions: read,
		SignedRequestHeaders:         map[string]string{"x-ms-client-request-id": "bound-id"},
		SignedRequestQueryParameters: map[string]string{"timeout": "30"}})
	get := func(query, requestID string) int {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, s.url("blob")+"fields/top.txt?"+bq+query, nil)
		must(t, err)
		req.Header.Set("x-ms-version", sas.Version)
		if requestID != "" {
			req.Header.Set("x-ms-client-request-id", requestID)
		}
		resp, err := s.transport.Do(req)
		must(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	if st := get("&timeout=30", "bound-id"); st != 200 {
		t.Fatalf("bound header and parameter: %d", st)
	}
	for _, c := range []struct{ query, id string }{{"&timeout=30", "other-id"}, {"&timeout=31", "bound-id"}, {"", "bound-id"}, {"&timeout=30", ""}} {
		if st := get(c.query, c.id); st != 403 {
			t.Fatalf("query %q id %q: %d, want 403", c.query, c.id, st)
		}
	}

	// Blob Batch under a container user delegation SAS.
	kq := sign(sas.BlobSignatureValues{Permissions: to.Ptr(sas.ContainerPermissions{Delete: true, Read: true, List: true}).String()})
	kc, err := container.NewClientWithNoCredential(s.url("blob")+"fields?"+kq, &container.ClientOptions{ClientOptions: s.opts()})
	must(t, err)
	bb, err := kc.NewBatchBuilder()
	must(t, err)
	must(t, bb.Delete("x1", nil))
	must(t, bb.Delete("x2", nil))
	resp, err := kc.SubmitBatch(ctx, bb, nil)
	must(t, err)
	for _, r := range resp.Responses {
		if r.Error != nil {
			t.Fatalf("batch under a user delegation SAS: %v", r.Error)
		}
	}
	_, err = cc.NewBlobClient("x1").GetProperties(ctx, nil)
	if err == nil {
		t.Fatal("x1 survived the batch")
	}
}

package blob_test

import (
	"crypto/md5"
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"

	"github.com/lazuli-storage/lazuli/conformance/harness"
)

// accountSASClient is an azblob client authorized by an account SAS with
// the given permissions over service, container and object.
func accountSASClient(t *testing.T, tg *harness.Target, p sas.AccountPermissions) *azblob.Client {
	t.Helper()
	cred, err := azblob.NewSharedKeyCredential(tg.Account, tg.Key)
	must(t, err)
	qp, err := sas.AccountSignatureValues{Protocol: sas.ProtocolHTTPSandHTTP, ExpiryTime: time.Now().Add(time.Hour).UTC(),
		Permissions: p.String(), ResourceTypes: (&sas.AccountResourceTypes{Service: true, Container: true, Object: true}).String()}.SignWithSharedKey(cred)
	must(t, err)
	c, err := azblob.NewClientWithNoCredential(tg.BlobURL+"/?"+qp.Encode(), &azblob.ClientOptions{ClientOptions: tg.ClientOptions()})
	must(t, err)
	return c
}

// TestAccountSASCreateAndWrite pins the account SAS permission rules of
// writes that create: Create Container is allowed with create or write;
// Put Blob and Copy Blob with create alone may make a new blob but not
// overwrite one (403 AuthorizationPermissionMismatch), which needs write.
func TestAccountSASCreateAndWrite(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		createOnly := accountSASClient(t, tg, sas.AccountPermissions{Create: true, Read: true})
		writeOnly := accountSASClient(t, tg, sas.AccountPermissions{Write: true, Read: true})
		for i, c := range []*azblob.Client{createOnly, writeOnly} {
			name := harness.UniqueName("sasc")
			if _, err := c.CreateContainer(ctx, name, nil); err != nil {
				t.Fatalf("create container with account SAS %d: %v", i, err)
			}
		}
		e := newEnv(t, tg)
		_, err := e.cc.NewBlockBlobClient("src").Upload(ctx, body([]byte("source")), nil)
		must(t, err)
		srcURL, err := e.cc.NewBlobClient("src").GetSASURL(sas.BlobPermissions{Read: true}, time.Now().Add(time.Hour), nil)
		must(t, err)
		cc := createOnly.ServiceClient().NewContainerClient(e.name)
		_, err = cc.NewBlockBlobClient("fresh").Upload(ctx, body([]byte("new")), nil)
		must(t, err)
		_, err = cc.NewBlockBlobClient("fresh").Upload(ctx, body([]byte("again")), nil)
		mustCode(t, err, 403, "AuthorizationPermissionMismatch")
		_, err = cc.NewBlobClient("copy").StartCopyFromURL(ctx, srcURL, nil)
		must(t, err)
		_, err = cc.NewBlobClient("copy").StartCopyFromURL(ctx, srcURL, nil)
		mustCode(t, err, 403, "AuthorizationPermissionMismatch")
		wc := writeOnly.ServiceClient().NewContainerClient(e.name)
		_, err = wc.NewBlobClient("copy").StartCopyFromURL(ctx, srcURL, nil)
		must(t, err)
		_, err = wc.NewBlockBlobClient("fresh").Upload(ctx, body([]byte("again")), nil)
		must(t, err)
	})
}

// TestContainerSASScope pins that a container (service) SAS reaches the
// blobs in the container but not the container's properties.
func TestContainerSASScope(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		_, err := e.cc.NewBlockBlobClient("b").Upload(ctx, body([]byte("x")), nil)
		must(t, err)
		u, err := e.cc.GetSASURL(sas.ContainerPermissions{Read: true, List: true}, time.Now().Add(time.Hour), nil)
		must(t, err)
		sc, err := container.NewClientWithNoCredential(u, &container.ClientOptions{ClientOptions: tg.ClientOptions()})
		must(t, err)
		_, err = sc.GetProperties(ctx, nil)
		mustCode(t, err, 403, "AuthorizationFailure")
		_, err = sc.NewListBlobsFlatPager(nil).NextPage(ctx)
		must(t, err)
		_, err = sc.NewBlobClient("b").GetProperties(ctx, nil)
		must(t, err)
	})
}

// TestCopyRules pins Copy Blob details: a source SAS without read is 403
// CannotVerifyCopySource; Copy Blob From URL echoes the source's
// Content-MD5 when sent (TestCopyFromURLContentMD5: only then); x-ms-tags together with copying the source's tags is 400.
func TestCopyRules(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		data := []byte("copy me")
		src := e.cc.NewBlockBlobClient("src")
		_, err := src.Upload(ctx, body(data), nil)
		must(t, err)
		dst := e.cc.NewBlockBlobClient("dst")
		dstSAS, err := dst.GetSASURL(sas.BlobPermissions{Read: true, Write: true, Create: true}, time.Now().Add(time.Hour), nil)
		must(t, err)
		noRead, err := src.GetSASURL(sas.BlobPermissions{Write: true}, time.Now().Add(time.Hour), nil)
		must(t, err)
		req, err := http.NewRequestWithContext(ctx, http.MethodPut, dstSAS, nil)
		must(t, err)
		req.Header.Set("x-ms-version", "2025-01-05")
		req.Header.Set("x-ms-copy-source", noRead)
		resp, err := tg.HTTP.Do(req)
		must(t, err)
		resp.Body.Close()
		expectStatus(t, resp, 403, "CannotVerifyCopySource")

		readSAS, err := src.GetSASURL(sas.BlobPermissions{Read: true}, time.Now().Add(time.Hour), nil)
		must(t, err)
		sum := md5.Sum(data)
		cr, err := e.cc.NewBlobClient("sync").CopyFromURL(ctx, readSAS, &blob.CopyFromURLOptions{SourceContentMD5: sum[:]})
		must(t, err)
		if string(cr.ContentMD5) != string(sum[:]) {
			t.Fatalf("Copy Blob From URL Content-MD5 %x, want %x", cr.ContentMD5, sum)
		}
		_, err = e.cc.NewBlobClient("tagged").StartCopyFromURL(ctx, src.URL(), &blob.StartCopyFromURLOptions{
			BlobTags: map[string]string{"k": "v"}})
		must(t, err)
		expectStatus(t, raw(t, tg, http.MethodPut, e.name+"/both", map[string]string{"x-ms-copy-source": src.URL(),
			"x-ms-tags": "k=v", "x-ms-copy-source-tag-option": "COPY"}, nil), 400, "InvalidHeaderValue")
	})
}

package blob_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"

	"github.com/lazuli-storage/lazuli/conformance/harness"
)

// TestSASResponseHeaderOverrides pins rscc, rscd, rsce, rscl and rsct: a
// service SAS that signs them has Get Blob and Get Blob Properties answer
// with those values instead of the blob's properties.
func TestSASResponseHeaderOverrides(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		bb := e.cc.NewBlockBlobClient("doc")
		_, err := bb.Upload(ctx, body([]byte("content")), &blockblob.UploadOptions{
			HTTPHeaders: &blob.HTTPHeaders{BlobContentType: ptr("text/plain"), BlobCacheControl: ptr("no-cache")}})
		must(t, err)
		cred, err := azblob.NewSharedKeyCredential(tg.Account, tg.Key)
		must(t, err)
		qp, err := sas.BlobSignatureValues{Protocol: sas.ProtocolHTTPSandHTTP, ExpiryTime: time.Now().Add(time.Hour).UTC(),
			Permissions: (&sas.BlobPermissions{Read: true}).String(), ContainerName: e.name, BlobName: "doc",
			CacheControl: "max-age=60", ContentDisposition: "attachment; filename=doc.bin", ContentEncoding: "identity",
			ContentLanguage: "fr", ContentType: "application/x-doc"}.SignWithSharedKey(cred)
		must(t, err)
		c, err := blob.NewClientWithNoCredential(bb.URL()+"?"+qp.Encode(), &blob.ClientOptions{ClientOptions: tg.ClientOptions()})
		must(t, err)
		p, err := c.GetProperties(ctx, nil)
		must(t, err)
		if *p.CacheControl != "max-age=60" || *p.ContentDisposition != "attachment; filename=doc.bin" || *p.ContentEncoding != "identity" ||
			*p.ContentLanguage != "fr" || *p.ContentType != "application/x-doc" {
			t.Fatalf("properties: %q %q %q %q %q", *p.CacheControl, *p.ContentDisposition, *p.ContentEncoding, *p.ContentLanguage, *p.ContentType)
		}
		d, err := c.DownloadStream(ctx, nil)
		must(t, err)
		if string(readAll(t, d.Body)) != "content" || *d.ContentType != "application/x-doc" || *d.CacheControl != "max-age=60" {
			t.Fatalf("download: %q %q", *d.ContentType, *d.CacheControl)
		}
		// The stored properties are unchanged.
		sp, err := bb.GetProperties(ctx, nil)
		must(t, err)
		if *sp.ContentType != "text/plain" || *sp.CacheControl != "no-cache" {
			t.Fatalf("stored: %q %q", *sp.ContentType, *sp.CacheControl)
		}
		// A SAS parameter given twice is refused.
		r := anonGet(t, tg, bb.URL()+"?"+qp.Encode()+"&sig="+qp.Signature())
		if r.StatusCode != http.StatusForbidden || r.Header.Get("x-ms-error-code") != "AuthenticationFailed" {
			t.Fatalf("duplicated sig: %d %s", r.StatusCode, r.Header.Get("x-ms-error-code"))
		}
	})
}

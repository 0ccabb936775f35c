package blob_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"

	"github.com/lazuli-storage/lazuli/conformance/harness"
)

func anonGet(t *testing.T, tg *harness.Target, url string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(harness.Ctx(t), http.MethodGet, url, nil)
	must(t, err)
	req.Header.Set("x-ms-version", "2025-01-05")
	resp, err := tg.HTTP.Do(req)
	must(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// TestSAS checks the Blob service hands auth what it needs: scopes,
// permission letters and the container's stored access policies.
func TestSAS(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		bb := e.cc.NewBlockBlobClient("secret")
		_, err := bb.Upload(ctx, body([]byte("s3cr3t")), nil)
		must(t, err)
		// Private container: anonymous reads are refused.
		if r := anonGet(t, tg, bb.URL()); r.StatusCode != 404 && r.StatusCode != 401 && r.StatusCode != 403 {
			t.Fatalf("anonymous read of private blob: %d", r.StatusCode)
		}
		// Blob SAS with read.
		u, err := bb.GetSASURL(sas.BlobPermissions{Read: true}, time.Now().Add(time.Hour), nil)
		must(t, err)
		r := anonGet(t, tg, u)
		if r.StatusCode != 200 || string(readAll(t, r.Body)) != "s3cr3t" {
			t.Fatalf("SAS read %d %s", r.StatusCode, r.Header.Get("x-ms-error-code"))
		}
		// A SAS without write cannot write.
		u2, err := bb.GetSASURL(sas.BlobPermissions{Read: true}, time.Now().Add(time.Hour), nil)
		must(t, err)
		req, err := http.NewRequestWithContext(ctx, http.MethodPut, u2+"&comp=metadata", nil)
		must(t, err)
		req.Header.Set("x-ms-version", "2025-01-05")
		resp, err := tg.HTTP.Do(req)
		must(t, err)
		resp.Body.Close()
		if resp.StatusCode != 403 || resp.Header.Get("x-ms-error-code") != "AuthorizationPermissionMismatch" {
			t.Fatalf("write with read SAS: %d %s", resp.StatusCode, resp.Header.Get("x-ms-error-code"))
		}
		// Stored access policy: the SAS names the policy, which grants read.
		start := time.Now().Add(-time.Hour).UTC().Truncate(time.Second)
		_, err = e.cc.SetAccessPolicy(ctx, &container.SetAccessPolicyOptions{ContainerACL: []*container.SignedIdentifier{{
			ID: ptr("readers"), AccessPolicy: &container.AccessPolicy{Start: &start, Expiry: ptr(start.Add(3 * time.Hour)), Permission: ptr("r")}}}})
		must(t, err)
		cred, err := azblob.NewSharedKeyCredential(tg.Account, tg.Key)
		must(t, err)
		qp, err := sas.BlobSignatureValues{Protocol: sas.ProtocolHTTPSandHTTP, ContainerName: e.name, BlobName: "secret", Identifier: "readers"}.SignWithSharedKey(cred)
		must(t, err)
		r = anonGet(t, tg, bb.URL()+"?"+qp.Encode())
		if r.StatusCode != 200 {
			t.Fatalf("policy SAS read %d %s", r.StatusCode, r.Header.Get("x-ms-error-code"))
		}
		// Removing the policy revokes the SAS.
		_, err = e.cc.SetAccessPolicy(ctx, nil)
		must(t, err)
		r = anonGet(t, tg, bb.URL()+"?"+qp.Encode())
		if r.StatusCode != 403 {
			t.Fatalf("revoked policy SAS: %d", r.StatusCode)
		}
	})
}

// TestCopySourceAuthorization: a request authorized by SAS must also be
// authorized to read the copy source (its own SAS or public access). A
// private source read anonymously hides its existence, so the copy fails
// with 404 CannotVerifyCopySource.
func TestCopySourceAuthorization(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		src := e.cc.NewBlockBlobClient("private-src")
		_, err := src.Upload(ctx, body([]byte("source")), nil)
		must(t, err)
		dst := e.cc.NewBlockBlobClient("dst")
		dstSAS, err := dst.GetSASURL(sas.BlobPermissions{Read: true, Write: true, Create: true}, time.Now().Add(time.Hour), nil)
		must(t, err)
		put := func(source string) *http.Response {
			req, err := http.NewRequestWithContext(ctx, http.MethodPut, dstSAS, nil)
			must(t, err)
			req.Header.Set("x-ms-version", "2025-01-05")
			req.Header.Set("x-ms-copy-source", source)
			resp, err := tg.HTTP.Do(req)
			must(t, err)
			resp.Body.Close()
			return resp
		}
		if r := put(src.URL()); r.StatusCode != 404 || r.Header.Get("x-ms-error-code") != "CannotVerifyCopySource" {
			t.Fatalf("copy of private source without SAS: %d %s", r.StatusCode, r.Header.Get("x-ms-error-code"))
		}
		srcSAS, err := src.GetSASURL(sas.BlobPermissions{Read: true}, time.Now().Add(time.Hour), nil)
		must(t, err)
		if r := put(srcSAS); r.StatusCode != 202 {
			t.Fatalf("copy with source SAS: %d %s", r.StatusCode, r.Header.Get("x-ms-error-code"))
		}
		got, err := dst.DownloadStream(ctx, nil)
		must(t, err)
		if string(readAll(t, got.Body)) != "source" {
			t.Fatal("copied content")
		}
	})
}

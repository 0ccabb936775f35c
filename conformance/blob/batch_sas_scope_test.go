package blob_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"

	"github.com/lazuli-storage/lazuli/conformance/harness"
)

// TestBatchSubRequestSASScope pins that each sub-request of a batch is
// authorized by its own credentials, for its own blob: in a batch sent to
// container A under A's container SAS, a sub-request carrying A's SAS
// deletes its blob; one carrying container B's SAS for a blob of A fails
// its signature (403 AuthenticationFailed); one for a blob of B, even
// with B's SAS, is outside the batch's container (400 InvalidInput). Only
// the first blob goes.
func TestBatchSubRequestSASScope(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		a := newEnv(t, tg)
		b := newEnv(t, tg)
		for _, c := range []*env{a, b} {
			for _, n := range []string{"x", "y"} {
				_, err := c.cc.NewBlockBlobClient(n).Upload(ctx, body([]byte("data")), nil)
				must(t, err)
			}
		}
		cred, err := azblob.NewSharedKeyCredential(tg.Account, tg.Key)
		must(t, err)
		containerSAS := func(name string) string {
			qp, err := sas.BlobSignatureValues{Protocol: sas.ProtocolHTTPSandHTTP, ExpiryTime: time.Now().Add(time.Hour).UTC(),
				Permissions: (&sas.ContainerPermissions{Read: true, Delete: true, Write: true}).String(), ContainerName: name}.SignWithSharedKey(cred)
			must(t, err)
			return qp.Encode()
		}
		sasA, sasB := containerSAS(a.name), containerSAS(b.name)
		var buf bytes.Buffer
		for i, sub := range []struct{ container, blob, sas string }{
			{a.name, "x", sasA}, {a.name, "y", sasB}, {b.name, "x", sasB},
		} {
			u, err := url.Parse(tg.BlobURL + "/" + sub.container + "/" + sub.blob + "?" + sub.sas)
			must(t, err)
			fmt.Fprintf(&buf, "--sc\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\nContent-ID: %d\r\n\r\n", i)
			fmt.Fprintf(&buf, "DELETE %s HTTP/1.1\r\nx-ms-version: 2025-01-05\r\nContent-Length: 0\r\n\r\n\r\n", u.RequestURI())
		}
		buf.WriteString("--sc--\r\n")
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, tg.BlobURL+"/"+a.name+"?restype=container&comp=batch&"+sasA, bytes.NewReader(buf.Bytes()))
		must(t, err)
		req.Header.Set("Content-Type", "multipart/mixed; boundary=sc")
		req.Header.Set("x-ms-version", "2025-01-05")
		resp, err := tg.HTTP.Do(req)
		must(t, err)
		defer resp.Body.Close()
		if got := batchStatuses(t, resp); fmt.Sprint(got) != "[202 403 400]" {
			t.Fatalf("sub-statuses %v", got)
		}
		_, err = a.cc.NewBlobClient("x").GetProperties(ctx, nil)
		mustCode(t, err, 404, "BlobNotFound")
		for _, c := range []*env{a, b} {
			for _, n := range []string{"y", "x"} {
				if c == a && n == "x" {
					continue
				}
				_, err := c.cc.NewBlobClient(n).GetProperties(ctx, nil)
				must(t, err)
			}
		}
	})
}

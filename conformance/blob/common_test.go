package blob_test

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/lazuli-storage/lazuli/conformance/harness"
	"github.com/lazuli-storage/lazuli/internal/auth/sharedkey"
)

// env is one target with a fresh container.
type env struct {
	tg   *harness.Target
	c    *azblob.Client
	cc   *container.Client
	name string
}

func newEnv(t *testing.T, tg *harness.Target) *env {
	t.Helper()
	c := client(t, tg)
	name := harness.UniqueName("c")
	if _, err := c.CreateContainer(harness.Ctx(t), name, nil); err != nil {
		t.Fatalf("create container: %v", err)
	}
	return &env{tg: tg, c: c, cc: c.ServiceClient().NewContainerClient(name), name: name}
}

// client returns an azblob client for tg. Over TCP it uses its own
// transport whose idle connections are closed when the test ends, so the
// server's graceful shutdown does not wait for connections the client
// dialed but never used.
func client(t *testing.T, tg *harness.Target) *azblob.Client {
	t.Helper()
	opts := tg.ClientOptions()
	if opts.Transport == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		opts.Transport = &http.Client{Transport: tr}
		t.Cleanup(tr.CloseIdleConnections)
	}
	cred, err := azblob.NewSharedKeyCredential(tg.Account, tg.Key)
	must(t, err)
	c, err := azblob.NewClientWithSharedKeyCredential(tg.BlobURL+"/", cred, &azblob.ClientOptions{ClientOptions: opts})
	must(t, err)
	return c
}

func body(b []byte) io.ReadSeekCloser { return streaming.NopCloser(bytes.NewReader(b)) }

func ptr[T any](v T) *T { return &v }

// mustCode asserts err is an Azure error with this status and code.
func mustCode(t *testing.T, err error, status int, code string) {
	t.Helper()
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		t.Fatalf("got %v, want %d %s", err, status, code)
	}
	if re.StatusCode != status || re.ErrorCode != code {
		t.Fatalf("got %d %s, want %d %s", re.StatusCode, re.ErrorCode, status, code)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// raw sends a Shared Key signed request to the blob endpoint; path is
// relative to the account ("container/blob?comp=x").
func raw(t *testing.T, tg *harness.Target, method, path string, hdr map[string]string, payload []byte) *http.Response {
	t.Helper()
	var rd io.Reader
	if payload != nil {
		rd = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(harness.Ctx(t), method, tg.BlobURL+"/"+path, rd)
	must(t, err)
	req.Header.Set("x-ms-version", "2025-01-05")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	if payload != nil {
		req.ContentLength = int64(len(payload))
	}
	must(t, sharedkey.Sign(req, tg.Account, tg.KeyBytes(), false))
	resp, err := tg.HTTP.Do(req)
	must(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func readAll(t *testing.T, r io.Reader) []byte {
	t.Helper()
	b, err := io.ReadAll(r)
	must(t, err)
	return b
}

func isCode(err error, status int, code string) bool {
	var re *azcore.ResponseError
	return errors.As(err, &re) && re.StatusCode == status && re.ErrorCode == code
}

func errorsAs(err error, target any) bool { return errors.As(err, target) }

type azcoreETagT = azcore.ETag

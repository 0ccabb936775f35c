// Package file_test drives lazuli's File service with the official Azure
// SDK for Go (azfile) on every harness target.
package file_test

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/service"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/share"

	"github.com/lazuli-storage/lazuli/conformance/harness"
	"github.com/lazuli-storage/lazuli/internal/auth/sharedkey"
)

// env is one target with a fresh share.
type env struct {
	tg   *harness.Target
	svc  *service.Client
	sc   *share.Client
	name string
}

func newEnv(t *testing.T, tg *harness.Target) *env {
	t.Helper()
	svc := client(t, tg)
	name := harness.UniqueName("s")
	if _, err := svc.CreateShare(harness.Ctx(t), name, nil); err != nil {
		t.Fatalf("create share: %v", err)
	}
	return &env{tg: tg, svc: svc, sc: svc.NewShareClient(name), name: name}
}

// client returns an azfile service client for tg; over TCP its idle
// connections are closed when the test ends.
func client(t *testing.T, tg *harness.Target) *service.Client {
	t.Helper()
	opts := tg.ClientOptions()
	if opts.Transport == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		opts.Transport = &http.Client{Transport: tr}
		t.Cleanup(tr.CloseIdleConnections)
	}
	cred, err := service.NewSharedKeyCredential(tg.Account, tg.Key)
	must(t, err)
	c, err := service.NewClientWithSharedKeyCredential(tg.FileURL+"/", cred, &service.ClientOptions{ClientOptions: opts})
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

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// raw sends a Shared Key signed request to the file endpoint; path is
// relative to the account ("share/dir/file?comp=x").
func raw(t *testing.T, tg *harness.Target, method, path string, hdr map[string]string, payload []byte) *http.Response {
	t.Helper()
	var rd io.Reader
	if payload != nil {
		rd = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(harness.Ctx(t), method, tg.FileURL+"/"+path, rd)
	must(t, err)
	req.Header.Set("x-ms-version", "2025-11-05")
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

// wantRaw asserts a raw response's status and error code ("" for none).
func wantRaw(t *testing.T, resp *http.Response, status int, code string) {
	t.Helper()
	if resp.StatusCode != status || resp.Header.Get("x-ms-error-code") != code {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("got %d %q, want %d %q: %s", resp.StatusCode, resp.Header.Get("x-ms-error-code"), status, code, b)
	}
}

func readAll(t *testing.T, r io.Reader) []byte {
	t.Helper()
	b, err := io.ReadAll(r)
	must(t, err)
	return b
}

// meta reads a metadata value by name case-insensitively (Go's HTTP stack
// canonicalizes the header names the SDK takes metadata names from).
func meta(m map[string]*string, name string) string {
	for k, v := range m {
		if strings.EqualFold(k, name) && v != nil {
			return *v
		}
	}
	return ""
}

func isCode(err error, status int, code string) bool {
	var re *azcore.ResponseError
	return errors.As(err, &re) && re.StatusCode == status && re.ErrorCode == code
}

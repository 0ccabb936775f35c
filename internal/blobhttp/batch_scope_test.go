package blobhttp

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"github.com/lazuli-storage/lazuli/internal/blob"
	"github.com/lazuli-storage/lazuli/internal/guid"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/auth"
	"github.com/lazuli-storage/lazuli/internal/auth/sharedkey"
	"github.com/lazuli-storage/lazuli/internal/engine/memstore"
	"github.com/lazuli-storage/lazuli/internal/httpx"
)

// scopeKey is the key of the second account the batch scope tests use.
var scopeKey = []byte("second-account-key-for-batch-tests")

// scopedHandler serves the development account and "otheracct", both
// authenticated with their keys.
func scopedHandler() http.Handler {
	a := auth.New(auth.Config{Accounts: []auth.Account{{Name: "otheracct", Keys: [][]byte{scopeKey}}}})
	d := httpx.Deps{Auth: a, Now: time.Now,
		BaseURL: func(acct string) string { return "http://127.0.0.1:10000/" + acct }}
	return httpx.Wrap(auth.Blob, New(d, blob.New(memstore.New(), time.Now, guid.NewString)), httpx.Options{Silent: true, Auth: a})
}

// signedDo sends one request signed with the account's key; path starts
// with the account.
func signedDo(t *testing.T, h http.Handler, method, path string, hdr map[string]string, body []byte) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(method, "http://127.0.0.1:10000/"+path, bytes.NewReader(body))
	r.Header.Set("x-ms-version", "2025-01-05")
	r.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	acct, _, _ := strings.Cut(path, "/")
	key, _ := base64.StdEncoding.DecodeString(auth.DevKey)
	if acct == "otheracct" {
		key = scopeKey
	}
	if err := sharedkey.Sign(r, acct, key, false); err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// subRequest frames one signed sub-request; path starts with the account.
func subRequest(t *testing.T, b *bytes.Buffer, i int, method, path string) {
	t.Helper()
	r := httptest.NewRequest(method, "http://127.0.0.1:10000/"+path, nil)
	r.Header.Set("x-ms-version", "2025-01-05")
	r.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
	r.Header.Set("Content-Length", "0")
	if method == http.MethodPut {
		r.Header.Set("x-ms-access-tier", "Cool")
	}
	acct, _, _ := strings.Cut(path, "/")
	key, _ := base64.StdEncoding.DecodeString(auth.DevKey)
	if acct == "otheracct" {
		key = scopeKey
	}
	if err := sharedkey.Sign(r, acct, key, false); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(b, "--bnd\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\nContent-ID: %d\r\n\r\n%s /%s HTTP/1.1\r\n", i, method, path)
	for k := range r.Header {
		fmt.Fprintf(b, "%s: %s\r\n", k, r.Header.Get(k))
	}
	b.WriteString("\r\n\r\n")
}

// subStatuses reads the status line and error code of every part of a
// batch answer.
func subStatuses(t *testing.T, w *httptest.ResponseRecorder) []string {
	t.Helper()
	if w.Code != http.StatusAccepted {
		t.Fatalf("batch: %d %s", w.Code, w.Body)
	}
	_, bnd, _ := strings.Cut(w.Header().Get("Content-Type"), "boundary=")
	mr := multipart.NewReader(w.Body, bnd)
	var out []string
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		text, _ := io.ReadAll(p)
		line, rest, _ := strings.Cut(string(text), "\r\n")
		code := ""
		for _, l := range strings.Split(rest, "\r\n") {
			if v, ok := strings.CutPrefix(l, "x-ms-error-code: "); ok {
				code = " " + v
			}
		}
		out = append(out, strings.TrimPrefix(line, "HTTP/1.1 ")[:3]+code)
	}
}

// A batch addressed to a container runs only Delete Blob and Set Blob
// Tier on blobs of that container; a batch addressed to the account runs
// them only on blobs of that account. Any other sub-request (a blob in
// another container, another account's blob even when signed with that
// account's key, a container or the service itself) is refused in its
// part with 400 InvalidInput and changes nothing.
func TestBatchSubRequestsStayInScope(t *testing.T) {
	h := scopedHandler()
	const acct = auth.DevAccount
	for _, p := range []string{acct + "/caa?restype=container", acct + "/cbb?restype=container", "otheracct/caa?restype=container"} {
		if w := signedDo(t, h, "PUT", p, nil, nil); w.Code != 201 {
			t.Fatalf("create %s: %d %s", p, w.Code, w.Body)
		}
	}
	for _, p := range []string{acct + "/caa/x", acct + "/caa/y", acct + "/cbb/x", "otheracct/caa/x"} {
		if w := signedDo(t, h, "PUT", p, map[string]string{"x-ms-blob-type": "BlockBlob"}, []byte("data")); w.Code != 201 {
			t.Fatalf("put %s: %d %s", p, w.Code, w.Body)
		}
	}
	var b bytes.Buffer
	subRequest(t, &b, 0, http.MethodDelete, acct+"/caa/x")
	subRequest(t, &b, 1, http.MethodDelete, acct+"/cbb/x")
	subRequest(t, &b, 2, http.MethodPut, acct+"/cbb/x?comp=tier")
	subRequest(t, &b, 3, http.MethodDelete, "otheracct/caa/x")
	subRequest(t, &b, 4, http.MethodDelete, acct+"/cbb?restype=container")
	b.WriteString("--bnd--\r\n")
	w := signedDo(t, h, "POST", acct+"/caa?restype=container&comp=batch", map[string]string{"Content-Type": "multipart/mixed; boundary=bnd"}, b.Bytes())
	got := subStatuses(t, w)
	want := []string{"202", "400 InvalidInput", "400 InvalidInput", "400 InvalidInput", "400 InvalidInput"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("container batch parts %q, want %q", got, want)
	}
	for _, p := range []string{acct + "/cbb/x", "otheracct/caa/x", acct + "/cbb?restype=container"} {
		if w := signedDo(t, h, "HEAD", p, nil, nil); w.Code != 200 {
			t.Fatalf("%s after the batch: %d", p, w.Code)
		}
	}
	if w := signedDo(t, h, "HEAD", acct+"/cbb/x", nil, nil); w.Header().Get("x-ms-access-tier") != "Hot" {
		t.Fatalf("tier of cb/x: %q", w.Header().Get("x-ms-access-tier"))
	}

	// At account scope: any container of the account, no other account,
	// no container or service operation.
	b.Reset()
	subRequest(t, &b, 0, http.MethodDelete, acct+"/cbb/x")
	subRequest(t, &b, 1, http.MethodDelete, "otheracct/caa/x")
	subRequest(t, &b, 2, http.MethodDelete, acct+"/cbb?restype=container")
	b.WriteString("--bnd--\r\n")
	w = signedDo(t, h, "POST", acct+"/?comp=batch", map[string]string{"Content-Type": "multipart/mixed; boundary=bnd"}, b.Bytes())
	got = subStatuses(t, w)
	want = []string{"202", "400 InvalidInput", "400 InvalidInput"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("account batch parts %q, want %q", got, want)
	}
	if w := signedDo(t, h, "HEAD", "otheracct/caa/x", nil, nil); w.Code != 200 {
		t.Fatalf("other account's blob after the batch: %d", w.Code)
	}
	if w := signedDo(t, h, "HEAD", acct+"/cbb?restype=container", nil, nil); w.Code != 200 {
		t.Fatalf("container after the batch: %d", w.Code)
	}
}

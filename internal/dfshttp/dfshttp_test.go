package dfshttp

import (
	"bytes"
	"encoding/json"
	"github.com/lazuli-storage/lazuli/internal/blob"
	"github.com/lazuli-storage/lazuli/internal/guid"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/auth"
	"github.com/lazuli-storage/lazuli/internal/blobhttp"
	"github.com/lazuli-storage/lazuli/internal/engine/memstore"
	"github.com/lazuli-storage/lazuli/internal/httpx"
)

// newPort builds the Blob port as the server does: devstoreaccount1 has
// a hierarchical namespace, plainaccount does not.
func newPort() http.Handler {
	return newPortWith(func(a string) bool { return a == "devstoreaccount1" })
}

// newPortWith is newPort with the accounts hns says have a namespace
// (always true: --hierarchicalNamespace).
func newPortWith(hns func(string) bool) http.Handler {
	d := httpx.Deps{Auth: auth.New(auth.Config{}), Now: time.Now,
		BaseURL: func(a string) string { return "http://127.0.0.1:10000/" + a }}
	svc := blob.New(memstore.New(), time.Now, guid.NewString)
	svc.UseHierarchicalNamespace(hns)
	h := httpx.Wrap(auth.Blob, New(d, svc, blobhttp.New(d, svc), hns), httpx.Options{Silent: true})
	return RenameDestination(h, hns, func(a string) bool { return a == "devstoreaccount1" || a == "plainaccount" })
}

func send(t *testing.T, h http.Handler, method, url string, hdr map[string]string, body string) *httptest.ResponseRecorder {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	r := httptest.NewRequest(method, "http://127.0.0.1:10000"+url, rd)
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func want(t *testing.T, w *httptest.ResponseRecorder, status int, code string) {
	t.Helper()
	if w.Code != status || w.Header().Get("x-ms-error-code") != code {
		t.Fatalf("got %d %q, want %d %q: %s", w.Code, w.Header().Get("x-ms-error-code"), status, code, w.Body.String())
	}
}

const acct = "/devstoreaccount1"

func TestErrorsAreJSON(t *testing.T) {
	h := newPort()
	w := send(t, h, "GET", acct+"/nofs?resource=filesystem&recursive=true", nil, "")
	want(t, w, 404, "FilesystemNotFound")
	var body struct {
		Error struct{ Code, Message string }
	}
	if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || body.Error.Code != "FilesystemNotFound" || !strings.Contains(body.Error.Message, "RequestId:") {
		t.Fatalf("body %q: %v", w.Body.String(), err)
	}
	want(t, send(t, h, "PUT", acct+"/fsys?resource=filesystem", nil, ""), 201, "")
	// HEAD errors carry no body.
	w = send(t, h, "HEAD", acct+"/fsys/missing?action=getStatus", nil, "")
	want(t, w, 404, "PathNotFound")
	if w.Body.Len() != 0 {
		t.Fatalf("HEAD body %q", w.Body.String())
	}
}

// An account without a hierarchical namespace gets the Blob service for
// the same requests: no dfs answer at all.
func TestNoNamespaceIsBlob(t *testing.T) {
	h := newPort()
	w := send(t, h, "PUT", "/plainaccount/fsys?resource=filesystem", nil, "")
	if w.Header().Get("x-ms-namespace-enabled") != "" || w.Code == 201 {
		t.Fatalf("dfs answered for a plain account: %d %v", w.Code, w.Header())
	}
	if ct := w.Header().Get("Content-Type"); !strings.Contains(ct, "xml") {
		t.Fatalf("content type %q", ct)
	}
}

func TestAppendFlushWire(t *testing.T) {
	h := newPort()
	want(t, send(t, h, "PUT", acct+"/fsys?resource=filesystem", nil, ""), 201, "")
	want(t, send(t, h, "PUT", acct+"/fsys/dir/file.txt?resource=file", nil, ""), 201, "")
	want(t, send(t, h, "PATCH", acct+"/fsys/dir/file.txt?action=append&position=0", nil, "hello"), 202, "")
	want(t, send(t, h, "PATCH", acct+"/fsys/dir/file.txt?action=flush&position=4", nil, ""), 400, "InvalidFlushPosition")
	want(t, send(t, h, "PATCH", acct+"/fsys/dir/file.txt?action=flush&position=5", map[string]string{
		"x-ms-content-md5": "XUFAKrxLKna5cZ2REBfFkg==", "x-ms-content-type": "text/plain"}, ""), 200, "")
	w := send(t, h, "GET", acct+"/fsys/dir/file.txt", map[string]string{"x-ms-range": "bytes=1-3"}, "")
	if w.Code != 206 || w.Body.String() != "ell" {
		t.Fatalf("range read %d %q", w.Code, w.Body.String())
	}
	w = send(t, h, "HEAD", acct+"/fsys/dir/file.txt?action=getStatus", nil, "")
	if w.Code != 200 || w.Header().Get("x-ms-resource-type") != "file" || w.Header().Get("Content-Length") != "5" {
		t.Fatalf("status %d %v", w.Code, w.Header())
	}
	// The flush's content properties are the blob's.
	w = send(t, h, "HEAD", acct+"/fsys/dir/file.txt", nil, "")
	if w.Code != 200 || w.Header().Get("Content-MD5") != "XUFAKrxLKna5cZ2REBfFkg==" || w.Header().Get("Content-Type") != "text/plain" {
		t.Fatalf("properties %d %v", w.Code, w.Header())
	}
	// Appending to a directory is refused.
	want(t, send(t, h, "PATCH", acct+"/fsys/dir?action=append&position=0", nil, "x"), 400, "InvalidAppendOperation")
}

func TestAccessControlWire(t *testing.T) {
	h := newPort()
	want(t, send(t, h, "PUT", acct+"/fsys?resource=filesystem", nil, ""), 201, "")
	want(t, send(t, h, "PUT", acct+"/fsys/d?resource=directory", map[string]string{"x-ms-permissions": "0777", "x-ms-umask": "0027"}, ""), 201, "")
	w := send(t, h, "HEAD", acct+"/fsys/d?action=getAccessControl", nil, "")
	if w.Header().Get("x-ms-permissions") != "rwxr-x---" || w.Header().Get("x-ms-owner") != "$superuser" ||
		w.Header().Get("x-ms-acl") != "user::rwx,group::r-x,other::---" || w.Header().Get("x-ms-resource-type") != "directory" {
		t.Fatalf("access control %v", w.Header())
	}
	acl := "user::rwx,user:oid-1:r-x,group::r-x,mask::r-x,other::---,default:user::rwx,default:group::r-x,default:other::---"
	want(t, send(t, h, "PATCH", acct+"/fsys/d?action=setAccessControl", map[string]string{"x-ms-acl": acl, "x-ms-owner": "oid-1"}, ""), 200, "")
	w = send(t, h, "HEAD", acct+"/fsys/d?action=getAccessControl", nil, "")
	if w.Header().Get("x-ms-acl") != acl || w.Header().Get("x-ms-permissions") != "rwxr-x---+" || w.Header().Get("x-ms-owner") != "oid-1" {
		t.Fatalf("after set %v", w.Header())
	}
	want(t, send(t, h, "PATCH", acct+"/fsys/d?action=setAccessControl", map[string]string{"x-ms-acl": "user::rwz"}, ""), 400, "InvalidAccessControlList")
	want(t, send(t, h, "PATCH", acct+"/fsys/d?action=setAccessControl", map[string]string{"x-ms-permissions": "rwxrwxrwz"}, ""), 400, "InvalidPermission")
}

// A path-style rename names the account in its source; the SDKs send the
// destination URL without it, which reaches the account all the same.
func TestRenameSourceCarriesAccount(t *testing.T) {
	h := newPort()
	want(t, send(t, h, "PUT", acct+"/fsys?resource=filesystem", nil, ""), 201, "")
	want(t, send(t, h, "PUT", acct+"/fsys/a/b/c.txt?resource=file", nil, ""), 201, "")
	want(t, send(t, h, "PUT", acct+"/fsys/z?mode=legacy", map[string]string{"x-ms-rename-source": "/devstoreaccount1/fsys/a"}, ""), 201, "")
	want(t, send(t, h, "HEAD", acct+"/fsys/z/b/c.txt?action=getStatus", nil, ""), 200, "")
	want(t, send(t, h, "HEAD", acct+"/fsys/a?action=getStatus", nil, ""), 404, "PathNotFound")
	// Without a dfs parameter a HEAD is the Blob API's Get Blob Properties.
	want(t, send(t, h, "HEAD", acct+"/fsys/a", nil, ""), 404, "BlobNotFound")
	// As the JavaScript SDK sends it: no account in the URL.
	want(t, send(t, h, "PUT", "/fsys/y?mode=legacy", map[string]string{"x-ms-rename-source": "/devstoreaccount1/fsys/z"}, ""), 201, "")
	want(t, send(t, h, "HEAD", acct+"/fsys/y/b/c.txt?action=getStatus", nil, ""), 200, "")
	// As the Python SDK sends it: no account in the URL nor the source;
	// the signature names it.
	want(t, send(t, h, "PUT", "/fsys/w?mode=legacy", map[string]string{"x-ms-rename-source": "/fsys/y",
		"Authorization": "SharedKey devstoreaccount1:c2lnbmF0dXJl"}, ""), 201, "")
	want(t, send(t, h, "HEAD", acct+"/fsys/w/b/c.txt?action=getStatus", nil, ""), 200, "")
	want(t, send(t, h, "PUT", acct+"/fsys/y?resource=directory", nil, ""), 201, "")
	want(t, send(t, h, "PUT", acct+"/fsys/y/b?resource=directory", nil, ""), 201, "")
	want(t, send(t, h, "PUT", acct+"/fsys/y/b/c.txt?resource=file", nil, ""), 201, "")
	// Conditions on the source and the destination.
	want(t, send(t, h, "PUT", acct+"/fsys/x?mode=legacy", map[string]string{"x-ms-rename-source": "/devstoreaccount1/fsys/y", "x-ms-source-if-match": `"0x1"`}, ""), 412, "SourceConditionNotMet")
	want(t, send(t, h, "PUT", acct+"/fsys/other?resource=directory", nil, ""), 201, "")
	want(t, send(t, h, "PUT", acct+"/fsys/other?mode=legacy", map[string]string{"x-ms-rename-source": "/devstoreaccount1/fsys/y", "If-None-Match": "*"}, ""), 409, "PathAlreadyExists")
	want(t, send(t, h, "PUT", acct+"/fsys/y/b/inside?mode=legacy", map[string]string{"x-ms-rename-source": "/devstoreaccount1/fsys/y"}, ""), 400, "InvalidRenameSourcePath")
	want(t, send(t, h, "PUT", acct+"/fsys/q?mode=legacy", map[string]string{"x-ms-rename-source": "/devstoreaccount1/fsys/"}, ""), 400, "InvalidRenameSourcePath")
}

func TestListPathsWire(t *testing.T) {
	h := newPort()
	want(t, send(t, h, "PUT", acct+"/fsys?resource=filesystem", nil, ""), 201, "")
	for _, p := range []string{"a/1", "a/2", "b"} {
		want(t, send(t, h, "PUT", acct+"/fsys/"+p+"?resource=file", map[string]string{"x-ms-owner": "o"}, ""), 201, "")
	}
	w := send(t, h, "GET", acct+"/fsys?resource=filesystem&recursive=true&maxResults=2", nil, "")
	var page struct {
		Paths []map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &page); err != nil || len(page.Paths) != 2 || w.Header().Get("x-ms-continuation") == "" {
		t.Fatalf("page 1 %d %s %v", w.Code, w.Body.String(), w.Header())
	}
	if page.Paths[0]["name"] != "a" || page.Paths[0]["isDirectory"] != "true" || page.Paths[1]["owner"] != "o" || page.Paths[1]["contentLength"] != "0" {
		t.Fatalf("page 1 items %v", page.Paths)
	}
	w = send(t, h, "GET", acct+"/fsys?resource=filesystem&recursive=true&continuation="+w.Header().Get("x-ms-continuation"), nil, "")
	if err := json.Unmarshal(w.Body.Bytes(), &page); err != nil || len(page.Paths) != 2 || page.Paths[1]["name"] != "b" {
		t.Fatalf("page 2 %s", w.Body.String())
	}
	want(t, send(t, h, "GET", acct+"/fsys?resource=filesystem&recursive=maybe", nil, ""), 400, "InvalidQueryParameterValue")
	want(t, send(t, h, "GET", acct+"/fsys?resource=filesystem&recursive=true&directory=nope", nil, ""), 404, "PathNotFound")
}

// Malformed dfs requests get Azure errors, never a 500.
func TestMalformedNever500(t *testing.T) {
	h := newPort()
	want(t, send(t, h, "PUT", acct+"/fsys?resource=filesystem", nil, ""), 201, "")
	want(t, send(t, h, "PUT", acct+"/fsys/f?resource=file", nil, ""), 201, "")
	cases := []struct {
		method, url string
		hdr         map[string]string
		body        string
	}{
		{"PATCH", "/fsys/f?action=append&position=-1", nil, "x"},
		{"PATCH", "/fsys/f?action=append&position=abc", nil, "x"},
		{"PATCH", "/fsys/f?action=append", nil, "x"},
		{"PATCH", "/fsys/f?action=append&position=0", map[string]string{"Content-MD5": "bad"}, "x"},
		{"PATCH", "/fsys/f?action=flush&position=99", nil, ""},
		{"PATCH", "/fsys/f?action=flush&position=0", map[string]string{"x-ms-content-md5": "!!"}, ""},
		{"PATCH", "/fsys/f?action=bogus", nil, ""},
		{"PATCH", "/fsys/f?action=setProperties", map[string]string{"x-ms-properties": "a=%%%"}, ""},
		{"PATCH", "/fsys/f?action=setProperties", map[string]string{"x-ms-properties": "1bad=YQ=="}, ""},
		{"PUT", "/fsys/g?resource=thing", nil, ""},
		{"PUT", "/fsys/g?resource=file&mode=odd", nil, ""},
		{"PUT", "/fsys/g?resource=file", map[string]string{"x-ms-umask": "9999"}, ""},
		{"PUT", "/fsys/g?resource=file", map[string]string{"x-ms-permissions": "07777"}, ""},
		{"PUT", "/fsys/g?mode=legacy", map[string]string{"x-ms-rename-source": "%zz"}, ""},
		{"PUT", "/fsys/g?mode=legacy", map[string]string{"x-ms-rename-source": "/devstoreaccount1/nofs/x"}, ""},
		{"DELETE", "/fsys/f?recursive=perhaps", nil, ""},
		{"DELETE", "/fsys/f?recursive=true&continuation=***", nil, ""},
		{"POST", "/fsys/f", map[string]string{"x-ms-lease-action": "grab"}, ""},
		{"POST", "/fsys/f", map[string]string{"x-ms-lease-action": "acquire", "x-ms-lease-duration": "7"}, ""},
		{"GET", "/fsys?resource=filesystem&recursive=true&maxResults=0", nil, ""},
		{"GET", "/fsys?resource=filesystem&recursive=true&continuation=***", nil, ""},
		{"HEAD", "/fsys/f", map[string]string{"If-Modified-Since": "a", "If-Match": ""}, ""},
	}
	for _, c := range cases {
		w := send(t, h, c.method, acct+c.url, c.hdr, c.body)
		if w.Code >= 500 || w.Code < 400 || w.Header().Get("x-ms-error-code") == "" {
			t.Errorf("%s %s: %d %q %s", c.method, c.url, w.Code, w.Header().Get("x-ms-error-code"), w.Body.String())
		}
	}
	// Nothing was written by the refused requests.
	w := send(t, h, "HEAD", acct+"/fsys/f?action=getStatus", nil, "")
	if w.Header().Get("Content-Length") != "0" || !bytes.Equal(w.Body.Bytes(), nil) {
		t.Fatalf("file changed: %v", w.Header())
	}
	want(t, send(t, h, "HEAD", acct+"/fsys/g?action=getStatus", nil, ""), 404, "PathNotFound")
}

// A blob written through the Blob API at x/y/z.txt makes the directories
// x and x/y, which Blob listings show with hdi_isfolder=true; an account
// without a namespace gets no directories.
func TestBlobWriteMakesDirectories(t *testing.T) {
	h := newPort()
	for _, a := range []string{acct, "/plainaccount"} {
		want(t, send(t, h, "PUT", a+"/cont?restype=container", nil, ""), 201, "")
		want(t, send(t, h, "PUT", a+"/cont/x/y/z.txt", map[string]string{"x-ms-blob-type": "BlockBlob"}, "data"), 201, "")
		w := send(t, h, "GET", a+"/cont?restype=container&comp=list&include=metadata", nil, "")
		names := strings.Count(w.Body.String(), "<Name>")
		folders := strings.Count(w.Body.String(), "<hdi_isfolder>true</hdi_isfolder>")
		if a == acct && (names != 3 || folders != 2) {
			t.Fatalf("HNS listing: %s", w.Body.String())
		}
		if a != acct && (names != 1 || folders != 0) {
			t.Fatalf("plain listing: %s", w.Body.String())
		}
	}
	// A failed write makes nothing.
	want(t, send(t, h, "PUT", acct+"/cont/p/q.txt", map[string]string{"x-ms-blob-type": "BlockBlob", "If-Match": `"0x1"`}, "data"), 412, "ConditionNotMet")
	want(t, send(t, h, "HEAD", acct+"/cont/p?action=getStatus", nil, ""), 404, "PathNotFound")
}

// With every account namespaced (--hierarchicalNamespace) a filesystem
// name in the first URL segment is still not taken for an account.
func TestRenameDestinationEveryAccount(t *testing.T) {
	h := newPortWith(func(string) bool { return true })
	want(t, send(t, h, "PUT", acct+"/fsys?resource=filesystem", nil, ""), 201, "")
	want(t, send(t, h, "PUT", acct+"/fsys/a/f?resource=file", nil, ""), 201, "")
	want(t, send(t, h, "PUT", "/fsys/b?mode=legacy", map[string]string{"x-ms-rename-source": "/devstoreaccount1/fsys/a"}, ""), 201, "")
	want(t, send(t, h, "PUT", "/fsys/c?mode=legacy", map[string]string{"x-ms-rename-source": "/fsys/b",
		"Authorization": "SharedKey devstoreaccount1:c2lnbmF0dXJl"}, ""), 201, "")
	want(t, send(t, h, "HEAD", acct+"/fsys/c/f?action=getStatus", nil, ""), 200, "")
}

// The lease actions of append and flush: an append that acquires, writes
// that then need the lease id, a flush that releases.
func TestAppendFlushLeaseActions(t *testing.T) {
	h := newPort()
	want(t, send(t, h, "PUT", acct+"/fsys?resource=filesystem", nil, ""), 201, "")
	want(t, send(t, h, "PUT", acct+"/fsys/f?resource=file", nil, ""), 201, "")
	id := "11111111-2222-3333-4444-555555555555"
	want(t, send(t, h, "PATCH", acct+"/fsys/f?action=append&position=0", map[string]string{
		"x-ms-lease-action": "acquire", "x-ms-lease-duration": "15", "x-ms-proposed-lease-id": id}, "abc"), 202, "")
	want(t, send(t, h, "PATCH", acct+"/fsys/f?action=append&position=3", nil, "def"), 412, "LeaseIdMissing")
	want(t, send(t, h, "PATCH", acct+"/fsys/f?action=append&position=3", map[string]string{"x-ms-lease-id": id}, "def"), 202, "")
	want(t, send(t, h, "PATCH", acct+"/fsys/f?action=flush&position=6", nil, ""), 412, "LeaseIdMissing")
	want(t, send(t, h, "PATCH", acct+"/fsys/f?action=flush&position=6", map[string]string{"x-ms-lease-id": id, "x-ms-lease-action": "release"}, ""), 200, "")
	// Released: writes need no lease id any more.
	want(t, send(t, h, "PATCH", acct+"/fsys/f?action=setProperties", map[string]string{"x-ms-properties": "k=dg=="}, ""), 200, "")
	// Path - Lease: acquire, change, break.
	w := send(t, h, "POST", acct+"/fsys/f", map[string]string{"x-ms-lease-action": "acquire", "x-ms-lease-duration": "-1"}, "")
	want(t, w, 201, "")
	lid := w.Header().Get("x-ms-lease-id")
	w = send(t, h, "POST", acct+"/fsys/f", map[string]string{"x-ms-lease-action": "change", "x-ms-lease-id": lid, "x-ms-proposed-lease-id": id}, "")
	if w.Code != 200 || w.Header().Get("x-ms-lease-id") != id {
		t.Fatalf("change %d %v", w.Code, w.Header())
	}
	want(t, send(t, h, "DELETE", acct+"/fsys/f", nil, ""), 412, "LeaseIdMissing")
	want(t, send(t, h, "POST", acct+"/fsys/f", map[string]string{"x-ms-lease-action": "break", "x-ms-lease-break-period": "0"}, ""), 202, "")
	want(t, send(t, h, "DELETE", acct+"/fsys/f?recursive=false", nil, ""), 200, "")
}

// Get Account Information says whether the account has a namespace.
func TestAccountInfoReportsNamespace(t *testing.T) {
	h := newPort()
	for a, v := range map[string]string{acct: "true", "/plainaccount": "false"} {
		w := send(t, h, "GET", a+"/?restype=account&comp=properties", nil, "")
		if w.Code != 200 || w.Header().Get("x-ms-is-hns-enabled") != v {
			t.Fatalf("%s: %d %v", a, w.Code, w.Header())
		}
	}
}

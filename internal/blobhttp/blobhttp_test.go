package blobhttp

import (
	"bufio"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/lazuli-storage/lazuli/internal/engine/memstore"
)

// A body shorter than its Content-Length is a 400 and writes nothing.
func TestTruncatedBodyIs400(t *testing.T) {
	h := handlerFor(memstore.New())
	if w := do(t, h, "PUT", "cc1?restype=container", nil, nil); w.Code != 201 {
		t.Fatal(w.Code)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	req := "PUT /devstoreaccount1/cc1/b HTTP/1.1\r\nHost: 127.0.0.1\r\nx-ms-blob-type: BlockBlob\r\nContent-Length: 100000\r\n\r\n" + strings.Repeat("x", 70000)
	if _, err := conn.Write([]byte(req)); err != nil {
		t.Fatal(err)
	}
	conn.(*net.TCPConn).CloseWrite()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 400 || resp.Header.Get("x-ms-error-code") != "InvalidInput" {
		t.Fatalf("status %d %s", resp.StatusCode, resp.Header.Get("x-ms-error-code"))
	}
	if w := do(t, h, "HEAD", "cc1/b", nil, nil); w.Code != 404 {
		t.Fatalf("partial write visible: %d", w.Code)
	}
}

// Every error path answers an Azure error, never a 500: a sweep of
// malformed requests.
func TestMalformedRequestsNever500(t *testing.T) {
	h := handlerFor(memstore.New())
	do(t, h, "PUT", "cc1?restype=container", nil, nil)
	do(t, h, "PUT", "cc1/b", map[string]string{"x-ms-blob-type": "BlockBlob"}, []byte("x"))
	do(t, h, "PUT", "cc1/p", map[string]string{"x-ms-blob-type": "PageBlob", "x-ms-blob-content-length": "1024"}, nil)
	cases := []struct {
		method, path string
		hdr          map[string]string
		body         string
	}{
		{"PUT", "cc1/b?comp=blocklist", nil, "<BlockList><Latest>!!</Latest></BlockList>"},
		{"PUT", "cc1/b?comp=blocklist", nil, "<Other/>"},
		{"PUT", "cc1/b?comp=blocklist", nil, "not xml"},
		{"PUT", "cc1/b?comp=tags", nil, "<Tags><TagSet><Tag><Key>"},
		{"PUT", "cc1?restype=container&comp=acl", nil, "<SignedIdentifiers><SignedIdentifier><Id>x</Id><AccessPolicy><Start>bad</Start></AccessPolicy></SignedIdentifier></SignedIdentifiers>"},
		{"PUT", "?restype=service&comp=properties", nil, "<StorageServiceProperties><Cors><CorsRule><AllowedOrigins>*</AllowedOrigins><AllowedMethods>FETCH</AllowedMethods></CorsRule></Cors></StorageServiceProperties>"},
		{"PUT", "cc1/p?comp=page", map[string]string{"x-ms-page-write": "update", "x-ms-range": "bytes=a-b"}, ""},
		{"PUT", "cc1/p?comp=page", map[string]string{"x-ms-page-write": "erase", "x-ms-range": "bytes=0-511"}, ""},
		{"PUT", "cc1/p?comp=page", map[string]string{"x-ms-page-write": "update", "x-ms-range": "bytes=0-511", "x-ms-if-sequence-number-le": "x"}, strings.Repeat("p", 512)},
		{"PUT", "cc1/p?comp=properties", map[string]string{"x-ms-sequence-number-action": "max"}, ""},
		{"PUT", "cc1/b?comp=lease", map[string]string{"x-ms-lease-action": "acquire", "x-ms-lease-duration": "abc"}, ""},
		{"PUT", "cc1/b", map[string]string{"x-ms-blob-type": "BlockBlob", "Content-MD5": "nope"}, "x"},
		{"PUT", "cc1/b", map[string]string{"x-ms-blob-type": "BlockBlob", "x-ms-tags": "a=%zz"}, "x"},
		{"PUT", "cc1/b2", map[string]string{"x-ms-copy-source": "::not a url"}, ""},
		{"PUT", "cc1/b2", map[string]string{"x-ms-copy-source": "http://127.0.0.1:10000/devstoreaccount1/nocontainer/x"}, ""},
		{"GET", "cc1?restype=container&comp=list&maxresults=abc", nil, ""},
		{"GET", "cc1?restype=container&comp=list&marker=bm90IGEgbWFya2Vy", nil, ""},
		{"GET", "cc1?restype=container&comp=list&include=everything", nil, ""},
		{"GET", "?comp=blobs&where=a%3D", nil, ""},
		{"GET", "cc1/b?comp=blocklist&blocklisttype=some", nil, ""},
		{"GET", "cc1/p?comp=pagelist&prevsnapshot=yesterday", nil, ""},
		{"GET", "cc1/b", map[string]string{"x-ms-range": "bytes=9-1"}, ""},
		{"PUT", "cc1/b?comp=copy&copyid=x", nil, ""},
		{"DELETE", "cc1/b", map[string]string{"x-ms-delete-snapshots": "some"}, ""},
		{"PATCH", "cc1/b", nil, ""},
		{"GET", "cc1/b?comp=tier", nil, ""},
		{"OPTIONS", "cc1/b", nil, ""},
		{"PUT", "cc1/b?comp=tier", map[string]string{"x-ms-access-tier": "Lukewarm"}, ""},
		{"POST", "?comp=batch", map[string]string{"Content-Type": "text/plain"}, "x"},
		{"POST", "?comp=batch", map[string]string{"Content-Type": "multipart/mixed; boundary=b"}, "garbage"},
		{"POST", "?comp=batch", map[string]string{"Content-Type": "multipart/mixed; boundary=b"}, "--b\r\nContent-Type: application/http\r\n\r\nGET /devstoreaccount1/cc1/b HTTP/1.1\r\n\r\n\r\n--b--\r\n"},
		{"POST", "?comp=batch", map[string]string{"Content-Type": "multipart/mixed; boundary=b"}, "--b--\r\n"},
	}
	for _, c := range cases {
		var body []byte
		if c.body != "" {
			body = []byte(c.body)
		}
		w := do(t, h, c.method, c.path, c.hdr, body)
		if w.Code < 400 || w.Code >= 500 || w.Header().Get("x-ms-error-code") == "" {
			t.Errorf("%s %s %v: %d %q", c.method, c.path, c.hdr, w.Code, w.Header().Get("x-ms-error-code"))
		}
	}
}

func FuzzParseBlockList(f *testing.F) {
	f.Add([]byte(`<?xml version="1.0"?><BlockList><Committed>YWJj</Committed><Latest> ZGVm </Latest></BlockList>`))
	f.Add([]byte(`<BlockList><Uncommitted>a<b/></Uncommitted></BlockList>`))
	f.Fuzz(func(t *testing.T, body []byte) {
		items, err := parseBlockList(body)
		if err != nil {
			if !strings.Contains(err.Error(), "InvalidXmlDocument") {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		for _, it := range items {
			if it.Kind != "Committed" && it.Kind != "Uncommitted" && it.Kind != "Latest" {
				t.Fatalf("kind %q", it.Kind)
			}
		}
	})
}

func FuzzBatchBoundary(f *testing.F) {
	for _, s := range []string{"multipart/mixed; boundary=batch_1", `multipart/mixed; BOUNDARY = "a=b"`, "multipart/mixed; boundary===x==", "multipart/mixed; boundary=a; boundary=b", "text/plain"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ct string) {
		b, mixed, dup := batchBoundary(ct)
		if b != "" && (!mixed || dup || len(b) > 70) {
			t.Fatalf("%q: boundary %q mixed %v", ct, b, mixed)
		}
	})
}

// Query parameter names are read case-blind, as Azure reads them: the Data
// Lake SDKs send maxResults to the Blob endpoint, and a name in any case
// means the same parameter.
func TestQueryNamesCaseBlind(t *testing.T) {
	h := handlerFor(memstore.New())
	if w := do(t, h, "PUT", "cc1?ResType=container", nil, nil); w.Code != 201 {
		t.Fatalf("create: %d %s", w.Code, w.Body)
	}
	for _, b := range []string{"a", "b", "c"} {
		if w := do(t, h, "PUT", "cc1/"+b, map[string]string{"x-ms-blob-type": "BlockBlob"}, []byte("x")); w.Code != 201 {
			t.Fatal(w.Code)
		}
	}
	for _, q := range []string{"maxresults=2", "maxResults=2", "MAXRESULTS=2"} {
		w := do(t, h, "GET", "cc1?restype=container&COMP=list&"+q, nil, nil)
		body := w.Body.String()
		if w.Code != 200 || strings.Count(body, "<Blob>") != 2 || !strings.Contains(body, "<NextMarker>") {
			t.Fatalf("%s: %d %s", q, w.Code, body)
		}
	}
	if w := do(t, h, "GET", "cc1?restype=container&comp=list&MaxResults=0", nil, nil); w.Code != 400 {
		t.Fatalf("MaxResults=0: %d", w.Code)
	}
}

package blob_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/lazuli-storage/lazuli/conformance/harness"
)

// TestWireErrors checks status codes, x-ms-error-code and bodies that the
// SDK hides.
func TestWireErrors(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		_, err := e.cc.NewBlockBlobClient("b").Upload(ctx, body([]byte("hello")), nil)
		must(t, err)
		// HEAD errors carry the code in the header only.
		resp := raw(t, tg, http.MethodHead, e.name+"/missing", nil, nil)
		expectStatus(t, resp, 404, "BlobNotFound")
		if b := readAll(t, resp.Body); len(b) != 0 {
			t.Fatalf("HEAD body %q", b)
		}
		resp = raw(t, tg, http.MethodHead, e.name+"/b", map[string]string{"If-Match": `"0x1"`}, nil)
		expectStatus(t, resp, 412, "ConditionNotMet")
		if b := readAll(t, resp.Body); len(b) != 0 {
			t.Fatalf("HEAD body %q", b)
		}
		// GET errors carry the XML body with the same code.
		resp = raw(t, tg, http.MethodGet, e.name+"/missing", nil, nil)
		expectStatus(t, resp, 404, "BlobNotFound")
		if b := string(readAll(t, resp.Body)); !strings.Contains(b, "<Code>BlobNotFound</Code>") || resp.Header.Get("x-ms-request-id") == "" {
			t.Fatalf("error body %q", b)
		}
		// HEAD success: headers, Content-Length, no body.
		resp = raw(t, tg, http.MethodHead, e.name+"/b", nil, nil)
		if resp.StatusCode != 200 || resp.Header.Get("Content-Length") != "5" || resp.Header.Get("x-ms-blob-type") != "BlockBlob" ||
			resp.Header.Get("Accept-Ranges") != "bytes" || resp.Header.Get("x-ms-creation-time") == "" {
			t.Fatalf("HEAD %d %v", resp.StatusCode, resp.Header)
		}
		if b := readAll(t, resp.Body); len(b) != 0 {
			t.Fatalf("HEAD body %q", b)
		}
		// Ranges: 206 with Content-Range; open-ended; 416 past the end.
		resp = raw(t, tg, http.MethodGet, e.name+"/b", map[string]string{"x-ms-range": "bytes=1-"}, nil)
		if resp.StatusCode != 206 || resp.Header.Get("Content-Range") != "bytes 1-4/5" || string(readAll(t, resp.Body)) != "ello" {
			t.Fatalf("open range %d %v", resp.StatusCode, resp.Header.Get("Content-Range"))
		}
		resp = raw(t, tg, http.MethodGet, e.name+"/b", map[string]string{"Range": "bytes=5-9"}, nil)
		expectStatus(t, resp, 416, "InvalidRange")
		if resp.Header.Get("Content-MD5") != "" || resp.Header.Get("x-ms-blob-type") != "" || resp.Header.Get("Content-Range") != "bytes */5" {
			t.Fatalf("416 carries blob headers: %v", resp.Header)
		}
		resp = raw(t, tg, http.MethodGet, e.name+"/b", map[string]string{"x-ms-range": "bytes=0-5000000", "x-ms-range-get-content-md5": "true"}, nil)
		if resp.StatusCode != 206 || resp.Header.Get("Content-MD5") == "" {
			t.Fatalf("range md5 %d", resp.StatusCode)
		}
		// Put Blob without a blob type.
		expectStatus(t, raw(t, tg, http.MethodPut, e.name+"/nt", nil, []byte("x")), 400, "MissingRequiredHeader")
		expectStatus(t, raw(t, tg, http.MethodPut, e.name+"/nt", map[string]string{"x-ms-blob-type": "Cube"}, []byte("x")), 400, "InvalidHeaderValue")
		// Metadata rules.
		expectStatus(t, raw(t, tg, http.MethodPut, e.name+"/b?comp=metadata", map[string]string{"x-ms-meta-1bad": "x"}, nil), 400, "InvalidMetadata")
		expectStatus(t, raw(t, tg, http.MethodPut, e.name+"/b?comp=metadata", map[string]string{"x-ms-meta-big": strings.Repeat("v", 8200)}, nil), 400, "MetadataTooLarge")
		// Names.
		expectStatus(t, raw(t, tg, http.MethodPut, "ab?restype=container", nil, nil), 400, "OutOfRangeInput")
		expectStatus(t, raw(t, tg, http.MethodPut, "a--b?restype=container", nil, nil), 400, "InvalidResourceName")
		expectStatus(t, raw(t, tg, http.MethodPut, e.name+"/"+strings.Repeat("n", 1025), map[string]string{"x-ms-blob-type": "BlockBlob"}, []byte("x")), 400, "OutOfRangeInput")
		// Status codes of successes.
		for _, c := range []struct {
			method, path string
			h            map[string]string
			body         []byte
			status       int
		}{
			{http.MethodPut, e.name + "/s", map[string]string{"x-ms-blob-type": "BlockBlob"}, []byte("x"), 201},
			{http.MethodPut, e.name + "/s?comp=metadata", nil, nil, 200},
			{http.MethodPut, e.name + "/s?comp=properties", nil, nil, 200},
			{http.MethodPut, e.name + "/s?comp=snapshot", nil, nil, 201},
			{http.MethodPut, e.name + "/s?comp=block&blockid=YWJj", nil, []byte("x"), 201},
			{http.MethodPut, e.name + "/s?comp=blocklist", nil, []byte(`<?xml version="1.0" encoding="utf-8"?><BlockList><Latest>YWJj</Latest></BlockList>`), 201},
			{http.MethodGet, e.name + "/s?comp=blocklist&blocklisttype=all", nil, nil, 200},
			{http.MethodDelete, e.name + "/s", map[string]string{"x-ms-delete-snapshots": "include"}, nil, 202},
			{http.MethodGet, e.name + "?restype=container&comp=list", nil, nil, 200},
			{http.MethodGet, "?comp=list", nil, nil, 200},
			{http.MethodGet, "?restype=account&comp=properties", nil, nil, 200},
			{http.MethodGet, "?restype=service&comp=properties", nil, nil, 200},
		} {
			resp := raw(t, tg, c.method, c.path, c.h, c.body)
			if resp.StatusCode != c.status {
				t.Fatalf("%s %s: %d %s, want %d", c.method, c.path, resp.StatusCode, resp.Header.Get("x-ms-error-code"), c.status)
			}
		}
		// Operations against a snapshot that would write are 400.
		resp = raw(t, tg, http.MethodPut, e.name+"/b?comp=snapshot", nil, nil)
		snap := resp.Header.Get("x-ms-snapshot")
		expectStatus(t, raw(t, tg, http.MethodPut, e.name+"/b?comp=metadata&snapshot="+snap, nil, nil), 400, "InvalidOperation")
		expectStatus(t, raw(t, tg, http.MethodGet, e.name+"/b?snapshot=notatime", nil, nil), 400, "InvalidQueryParameterValue")
		// Unknown comp.
		resp = raw(t, tg, http.MethodGet, e.name+"/b?comp=nonsense", nil, nil)
		if resp.StatusCode != 400 {
			t.Fatalf("unknown comp %d", resp.StatusCode)
		}
		// Page writes of more than 4 MiB.
		_, err = e.cc.NewPageBlobClient("p").Create(ctx, 8<<20, nil)
		must(t, err)
		big := make([]byte, 4<<20+512)
		resp = raw(t, tg, http.MethodPut, e.name+"/p?comp=page", map[string]string{"x-ms-page-write": "update", "x-ms-range": "bytes=0-4194815"}, big)
		expectStatus(t, resp, 413, "RequestBodyTooLarge")
	})
}

// Body limits follow the service version of the request.
func TestVersionedBodyLimits(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		big := make([]byte, 4<<20+1)
		resp := raw(t, tg, http.MethodPut, e.name+"/b?comp=block&blockid=YWJj", map[string]string{"x-ms-version": "2015-12-11"}, big)
		expectStatus(t, resp, 413, "RequestBodyTooLarge")
		resp = raw(t, tg, http.MethodPut, e.name+"/b?comp=block&blockid=YWJj", map[string]string{"x-ms-version": "2019-12-12"}, big)
		expectStatus(t, resp, 201, "")
		resp = raw(t, tg, http.MethodPut, e.name+"/a", map[string]string{"x-ms-blob-type": "AppendBlob"}, nil)
		expectStatus(t, resp, 201, "")
		resp = raw(t, tg, http.MethodPut, e.name+"/a?comp=appendblock", map[string]string{"x-ms-version": "2021-12-02"}, big)
		expectStatus(t, resp, 413, "RequestBodyTooLarge")
		resp = raw(t, tg, http.MethodPut, e.name+"/a?comp=appendblock", map[string]string{"x-ms-version": "2022-11-02"}, big)
		expectStatus(t, resp, 201, "")
	})
}

package file_test

import (
	"bytes"
	"io"
	"net/http"
	"testing"

	"github.com/lazuli-storage/lazuli/conformance/harness"
	"github.com/lazuli-storage/lazuli/internal/auth/sharedkey"
)

// TestWireErrorsAndSharedKeyLite checks what SDKs hide: Shared Key Lite
// works, errors carry the code in header and XML body (HEAD: no body), and
// bad XML, permissions and headers are 4xx that store nothing.
func TestWireErrorsAndSharedKeyLite(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		// Shared Key Lite.
		req, err := http.NewRequestWithContext(harness.Ctx(t), http.MethodPut, tg.FileURL+"/"+e.name+"/lite", nil)
		must(t, err)
		req.Header.Set("x-ms-version", "2025-11-05")
		req.Header.Set("x-ms-type", "file")
		req.Header.Set("x-ms-content-length", "3")
		must(t, sharedkey.SignForm(req, tg.Account, tg.KeyBytes(), sharedkey.Form{Lite: true}))
		resp, err := tg.HTTP.Do(req)
		must(t, err)
		resp.Body.Close()
		if resp.StatusCode != 201 {
			t.Fatalf("Shared Key Lite create: %d", resp.StatusCode)
		}
		// Error bodies.
		resp = raw(t, tg, http.MethodGet, e.name+"/missing", nil, nil)
		wantRaw(t, resp, 404, "ResourceNotFound")
		if b, _ := io.ReadAll(resp.Body); !bytes.Contains(b, []byte("<Code>ResourceNotFound</Code>")) {
			t.Fatalf("error body %s", b)
		}
		resp = raw(t, tg, http.MethodHead, e.name+"/missing", nil, nil)
		wantRaw(t, resp, 404, "ResourceNotFound")
		if b, _ := io.ReadAll(resp.Body); len(b) != 0 {
			t.Fatalf("HEAD error has a body: %s", b)
		}
		// Bad XML and policy permissions.
		wantRaw(t, raw(t, tg, http.MethodPut, e.name+"?restype=share&comp=acl", nil, []byte("<SignedIdentifiers><oops")), 400, "InvalidXmlDocument")
		wantRaw(t, raw(t, tg, http.MethodPut, e.name+"?restype=share&comp=acl", nil,
			[]byte("<SignedIdentifiers><SignedIdentifier><Id>x</Id><AccessPolicy><Permission>rz</Permission></AccessPolicy></SignedIdentifier></SignedIdentifiers>")), 400, "InvalidXmlNodeValue")
		wantRaw(t, raw(t, tg, http.MethodPut, "?restype=service&comp=properties", nil, []byte("<StorageServiceProperties><Cors><CorsRule>")), 400, "InvalidXmlDocument")
		// Bad SDDL in a header stores nothing.
		wantRaw(t, raw(t, tg, http.MethodPut, e.name+"/bad", map[string]string{"x-ms-type": "file", "x-ms-content-length": "1", "x-ms-file-permission": "(((("}, nil), 400, "FileInvalidPermission")
		wantRaw(t, raw(t, tg, http.MethodHead, e.name+"/bad", nil, nil), 404, "ResourceNotFound")
		wantRaw(t, raw(t, tg, http.MethodPut, e.name+"/bad", map[string]string{"x-ms-type": "file", "x-ms-content-length": "-1"}, nil), 400, "InvalidHeaderValue")
		wantRaw(t, raw(t, tg, http.MethodPut, e.name+"/bad", map[string]string{"x-ms-type": "blob", "x-ms-content-length": "1"}, nil), 400, "InvalidHeaderValue")
		wantRaw(t, raw(t, tg, http.MethodPut, e.name+"/bad", map[string]string{"x-ms-content-length": "1"}, nil), 400, "MissingRequiredHeader")
		wantRaw(t, raw(t, tg, http.MethodHead, e.name+"/bad", nil, nil), 404, "ResourceNotFound")
		// A directory is not a file and the other way round.
		wantRaw(t, raw(t, tg, http.MethodPut, e.name+"/dir?restype=directory", nil, nil), 201, "")
		wantRaw(t, raw(t, tg, http.MethodGet, e.name+"/dir", nil, nil), 404, "ResourceNotFound")
		wantRaw(t, raw(t, tg, http.MethodGet, e.name+"/lite?restype=directory", nil, nil), 404, "ResourceNotFound")
		// Unknown share, bad share names, bad snapshot ids.
		wantRaw(t, raw(t, tg, http.MethodGet, "nosuchshare/f", nil, nil), 404, "ShareNotFound")
		wantRaw(t, raw(t, tg, http.MethodGet, e.name+"/lite?sharesnapshot=yesterday", nil, nil), 400, "InvalidQueryParameterValue")
		wantRaw(t, raw(t, tg, http.MethodPost, e.name+"/lite", nil, nil), 405, "UnsupportedHttpVerb")
	})
}

// TestWireHugeRanges: ranges near the int64 limit are clipped or refused,
// never overflowed into a wrong length.
func TestWireHugeRanges(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		wantRaw(t, raw(t, tg, http.MethodPut, e.name+"/f", map[string]string{"x-ms-type": "file", "x-ms-content-length": "10"}, nil), 201, "")
		resp := raw(t, tg, http.MethodGet, e.name+"/f", map[string]string{"x-ms-range": "bytes=5-9223372036854775807"}, nil)
		wantRaw(t, resp, 206, "")
		if b, _ := io.ReadAll(resp.Body); len(b) != 5 || resp.Header.Get("Content-Range") != "bytes 5-9/10" {
			t.Fatalf("got %d bytes, %s", len(b), resp.Header.Get("Content-Range"))
		}
		wantRaw(t, raw(t, tg, http.MethodGet, e.name+"/f", map[string]string{"x-ms-range": "bytes=9223372036854775806-9223372036854775807"}, nil), 416, "InvalidRange")
		wantRaw(t, raw(t, tg, http.MethodPut, e.name+"/f?comp=range", map[string]string{"x-ms-range": "bytes=0-9223372036854775807", "x-ms-write": "clear"}, nil), 416, "InvalidRange")
		wantRaw(t, raw(t, tg, http.MethodPut, e.name+"/f?comp=range", map[string]string{"x-ms-range": "bytes=0-9223372036854775807", "x-ms-write": "update"}, []byte("x")), 400, "InvalidHeaderValue")
		resp = raw(t, tg, http.MethodGet, e.name+"/f?comp=rangelist", map[string]string{"x-ms-range": "bytes=3-9223372036854775807"}, nil)
		wantRaw(t, resp, 200, "")
	})
}

package blobhttp

import (
	"regexp"
	"strings"
	"testing"

	"github.com/lazuli-storage/lazuli/internal/engine/memstore"
)

// TestDataProtectionWire pins what the SDKs hide about soft delete,
// versions and container restore: error codes of bad requests, and the
// listing elements of a soft-deleted blob.
func TestDataProtectionWire(t *testing.T) {
	h := handlerFor(memstore.New())
	do(t, h, "PUT", "cc1?restype=container", nil, nil)
	do(t, h, "PUT", "cc1/b", map[string]string{"x-ms-blob-type": "BlockBlob"}, []byte("x"))
	for _, c := range []struct {
		method, path string
		hdr          map[string]string
		status       int
		code         string
	}{
		{"DELETE", "cc1/b?deletetype=soft", nil, 400, "InvalidQueryParameterValue"},
		{"DELETE", "cc1/b?deletetype=permanent&deletetype=permanent", nil, 400, "InvalidQueryParameterValue"},
		{"DELETE", "cc1/b?deletetype=permanent", nil, 400, "InvalidQueryParameterValue"},
		{"DELETE", "cc1/b?snapshot=2025-01-01T00:00:00.0000000Z&deletetype=Permanent", nil, 400, "InvalidOperation"},
		{"GET", "cc1/b?versionid=2025-01-01T00:00:00.0000000Z&snapshot=2025-01-01T00:00:00.0000000Z", nil, 400, "InvalidQueryParameterValue"},
		{"GET", "cc1/b?versionid=yesterday", nil, 400, "InvalidQueryParameterValue"},
		{"GET", "cc1/b?versionid=2025-01-01T00:00:00.0000000Z", nil, 404, "BlobNotFound"},
		{"PUT", "cc1/b?versionid=2025-01-01T00:00:00.0000000Z", map[string]string{"x-ms-blob-type": "BlockBlob"}, 400, "InvalidOperation"},
		{"PUT", "cc1/nothing?comp=undelete", nil, 404, "BlobNotFound"},
		{"PUT", "cc1?restype=container&comp=undelete", nil, 400, "MissingRequiredHeader"},
		{"PUT", "cc2?restype=container&comp=undelete", map[string]string{"x-ms-deleted-container-name": "cc2"}, 400, "MissingRequiredHeader"},
		{"PUT", "cc2?restype=container&comp=undelete", map[string]string{"x-ms-deleted-container-name": "cc3", "x-ms-deleted-container-version": "01"}, 400, "InvalidHeaderValue"},
		{"PUT", "cc2?restype=container&comp=undelete", map[string]string{"x-ms-deleted-container-name": "cc2", "x-ms-deleted-container-version": "01"}, 404, "ContainerNotFound"},
	} {
		w := do(t, h, c.method, c.path, c.hdr, nil)
		if w.Code != c.status || w.Header().Get("x-ms-error-code") != c.code {
			t.Errorf("%s %s: %d %s, want %d %s", c.method, c.path, w.Code, w.Header().Get("x-ms-error-code"), c.status, c.code)
		}
	}
	// Without a policy a delete is permanent.
	if w := do(t, h, "DELETE", "cc1/b", nil, nil); w.Code != 202 || w.Header().Get("x-ms-delete-type-permanent") != "true" {
		t.Fatalf("delete: %d, permanent %q", w.Code, w.Header().Get("x-ms-delete-type-permanent"))
	}
	policy := `<StorageServiceProperties><DeleteRetentionPolicy><Enabled>true</Enabled><Days>7</Days></DeleteRetentionPolicy></StorageServiceProperties>`
	if w := do(t, h, "PUT", "?restype=service&comp=properties", nil, []byte(policy)); w.Code != 202 {
		t.Fatalf("set properties: %d", w.Code)
	}
	do(t, h, "PUT", "cc1/b", map[string]string{"x-ms-blob-type": "BlockBlob"}, []byte("x"))
	if w := do(t, h, "DELETE", "cc1/b", nil, nil); w.Code != 202 || w.Header().Get("x-ms-delete-type-permanent") != "false" {
		t.Fatalf("soft delete: %d, permanent %q", w.Code, w.Header().Get("x-ms-delete-type-permanent"))
	}
	w := do(t, h, "GET", "cc1?restype=container&comp=list&include=deleted", nil, nil)
	body := w.Body.String()
	if !regexp.MustCompile(`<Blob><Name>b</Name><Deleted>true</Deleted><Properties>.*<DeletedTime>[^<]+ GMT</DeletedTime><RemainingRetentionDays>7</RemainingRetentionDays>`).MatchString(body) {
		t.Fatalf("listing: %s", body)
	}
	if w := do(t, h, "PUT", "cc1/b?comp=undelete", nil, nil); w.Code != 200 {
		t.Fatalf("undelete: %d", w.Code)
	}
	if w := do(t, h, "GET", "cc1?restype=container&comp=list&include=deleted", nil, nil); strings.Contains(w.Body.String(), "<Deleted>") {
		t.Fatalf("listing after undelete: %s", w.Body.String())
	}
}

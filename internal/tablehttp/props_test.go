package tablehttp

import (
	"strings"
	"testing"
)

// Service properties, ACL and CORS use the documents shared with Blob and
// Queue: Azure's rendering, strict parsing, and the CORS header errors.
func TestSharedDocuments(t *testing.T) {
	h := newHandler(t)
	xml := map[string]string{"Content-Type": "application/xml"}
	w := do(h, "GET", "?restype=service&comp=properties", nil, "")
	mustStatus(t, w, 200)
	if !strings.HasSuffix(w.Body.String(), "<Cors /></StorageServiceProperties>") {
		t.Fatalf("defaults %s", w.Body.String())
	}
	// Logging without its required children is rejected, as by Azure.
	mustStatus(t, do(h, "PUT", "?restype=service&comp=properties", xml, "<StorageServiceProperties><Logging><Read>true</Read></Logging></StorageServiceProperties>"), 400)
	mustStatus(t, do(h, "OPTIONS", "Tables", map[string]string{"Access-Control-Request-Method": "GET"}, ""), 400)
	if w := do(h, "OPTIONS", "Tables", map[string]string{"Origin": "http://a"}, ""); w.Header().Get("x-ms-error-code") != "InvalidHeaderValue" {
		t.Fatalf("preflight without method: %d %s", w.Code, w.Header().Get("x-ms-error-code"))
	}

	mustStatus(t, do(h, "POST", "Tables", map[string]string{"Content-Type": "application/json"}, `{"TableName":"acltab"}`), 201)
	w = do(h, "GET", "acltab?comp=acl", nil, "")
	mustStatus(t, w, 200)
	if !strings.HasSuffix(w.Body.String(), "<SignedIdentifiers />") {
		t.Fatalf("empty acl %s", w.Body.String())
	}
	set := `<SignedIdentifiers><SignedIdentifier><Id>p</Id><AccessPolicy><Start>2026-01-01T00:00:00Z</Start><Permission>ra</Permission></AccessPolicy></SignedIdentifier></SignedIdentifiers>`
	mustStatus(t, do(h, "PUT", "acltab?comp=acl", xml, set), 204)
	w = do(h, "GET", "acltab?comp=acl", nil, "")
	if !strings.HasSuffix(w.Body.String(), "<SignedIdentifiers><SignedIdentifier><Id>p</Id><AccessPolicy><Start>2026-01-01T00:00:00.0000000Z</Start><Permission>ra</Permission></AccessPolicy></SignedIdentifier></SignedIdentifiers>") {
		t.Fatalf("acl %s", w.Body.String())
	}
	mustStatus(t, do(h, "PUT", "acltab?comp=acl", xml, strings.Replace(set, "ra", "rw", 1)), 400)
}

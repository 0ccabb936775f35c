package blobhttp

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/auth"
	"github.com/lazuli-storage/lazuli/internal/blob"
	"github.com/lazuli-storage/lazuli/internal/engine/memstore"
	"github.com/lazuli-storage/lazuli/internal/guid"
	"github.com/lazuli-storage/lazuli/internal/httpx"
)

// TestImmutabilityWire pins what the SDKs hide about immutability
// policies, legal holds and Set Blob Expiry: the codes of bad headers,
// the headers HEAD answers and the listing elements.
func TestImmutabilityWire(t *testing.T) {
	svc := blob.New(memstore.New(), time.Now, guid.NewString)
	svc.UseVersioning(func(string) bool { return true })
	d := httpx.Deps{Auth: auth.New(auth.Config{}), Now: time.Now, BaseURL: func(a string) string { return "http://127.0.0.1:10000/" + a }}
	h := httpx.Wrap(auth.Blob, New(d, svc), httpx.Options{Silent: true})
	if w := do(t, h, "PUT", "worm?restype=container", map[string]string{"x-ms-immutable-storage-with-versioning-enabled": "true"}, nil); w.Code != 201 {
		t.Fatalf("create: %d", w.Code)
	}
	if w := do(t, h, "HEAD", "worm?restype=container", nil, nil); w.Header().Get("x-ms-immutable-storage-with-versioning-enabled") != "true" {
		t.Fatalf("container properties: %v", w.Header())
	}
	do(t, h, "PUT", "worm/b", map[string]string{"x-ms-blob-type": "BlockBlob"}, []byte("x"))
	until := time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)
	past := time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat)
	for _, c := range []struct {
		method, path string
		hdr          map[string]string
		status       int
		code         string
	}{
		{"PUT", "worm?restype=container", map[string]string{"x-ms-immutable-storage-with-versioning-enabled": "yes"}, 400, "InvalidHeaderValue"},
		{"PUT", "worm/b?comp=immutabilityPolicies", nil, 400, "MissingRequiredHeader"},
		{"PUT", "worm/b?comp=immutabilityPolicies", map[string]string{"x-ms-immutability-policy-until-date": "tomorrow"}, 400, "InvalidHeaderValue"},
		{"PUT", "worm/b?comp=immutabilityPolicies", map[string]string{"x-ms-immutability-policy-until-date": past}, 400, "InvalidHeaderValue"},
		{"PUT", "worm/b?comp=immutabilityPolicies", map[string]string{"x-ms-immutability-policy-until-date": until, "x-ms-immutability-policy-mode": "Mutable"}, 400, "InvalidHeaderValue"},
		{"PUT", "worm/b?comp=legalhold", nil, 400, "MissingRequiredHeader"},
		{"PUT", "worm/b?comp=legalhold", map[string]string{"x-ms-legal-hold": "yes"}, 400, "InvalidHeaderValue"},
		{"PUT", "worm/c", map[string]string{"x-ms-blob-type": "BlockBlob", "x-ms-immutability-policy-mode": "Locked"}, 400, "MissingRequiredHeader"},
		{"PUT", "worm/b?comp=expiry", map[string]string{"x-ms-expiry-option": "NeverExpire"}, 400, "InvalidQueryParameterValue"},
		{"PUT", "worm/none?comp=legalhold", map[string]string{"x-ms-legal-hold": "true"}, 404, "BlobNotFound"},
	} {
		w := do(t, h, c.method, c.path, c.hdr, nil)
		if w.Code != c.status || w.Header().Get("x-ms-error-code") != c.code {
			t.Errorf("%s %s %v: %d %s, want %d %s", c.method, c.path, c.hdr, w.Code, w.Header().Get("x-ms-error-code"), c.status, c.code)
		}
	}
	w := do(t, h, "PUT", "worm/b?comp=immutabilityPolicies", map[string]string{"x-ms-immutability-policy-until-date": until, "x-ms-immutability-policy-mode": "locked"}, nil)
	if w.Code != 200 || w.Header().Get("x-ms-immutability-policy-mode") != "locked" || w.Header().Get("x-ms-immutability-policy-until-date") != until {
		t.Fatalf("set policy: %d %v", w.Code, w.Header())
	}
	if w := do(t, h, "PUT", "worm/b?comp=legalhold", map[string]string{"x-ms-legal-hold": "true"}, nil); w.Code != 200 || w.Header().Get("x-ms-legal-hold") != "true" {
		t.Fatalf("set hold: %d %v", w.Code, w.Header())
	}
	w = do(t, h, "HEAD", "worm/b", nil, nil)
	if w.Header().Get("x-ms-immutability-policy-mode") != "locked" || w.Header().Get("x-ms-immutability-policy-until-date") != until || w.Header().Get("x-ms-legal-hold") != "true" {
		t.Fatalf("properties: %v", w.Header())
	}
	// Refused writes: a hold is reported before a policy.
	for _, c := range []struct {
		method, path string
		hdr          map[string]string
	}{
		{"DELETE", "worm/b", nil},
		{"PUT", "worm/b?comp=metadata", map[string]string{"x-ms-meta-a": "1"}},
	} {
		if w := do(t, h, c.method, c.path, c.hdr, nil); w.Code != 409 || w.Header().Get("x-ms-error-code") != "BlobImmutableDueToLegalHold" {
			t.Errorf("%s %s: %d %s", c.method, c.path, w.Code, w.Header().Get("x-ms-error-code"))
		}
	}
	do(t, h, "PUT", "worm/b?comp=legalhold", map[string]string{"x-ms-legal-hold": "false"}, nil)
	if w := do(t, h, "DELETE", "worm/b", nil, nil); w.Code != 409 || w.Header().Get("x-ms-error-code") != "BlobImmutableDueToPolicy" {
		t.Errorf("delete under policy: %d %s", w.Code, w.Header().Get("x-ms-error-code"))
	}
	if w := do(t, h, "DELETE", "worm/b?comp=immutabilityPolicies", nil, nil); w.Code != 409 || w.Header().Get("x-ms-error-code") != "BlobImmutableDueToPolicy" {
		t.Errorf("delete locked policy: %d %s", w.Code, w.Header().Get("x-ms-error-code"))
	}
	body := do(t, h, "GET", "worm?restype=container&comp=list&include=immutabilitypolicy,legalhold", nil, nil).Body.String()
	if !strings.Contains(body, "<ImmutabilityPolicyUntilDate>"+until+"</ImmutabilityPolicyUntilDate><ImmutabilityPolicyMode>locked</ImmutabilityPolicyMode><LegalHold>false</LegalHold></Properties>") {
		t.Fatalf("listing: %s", body)
	}
	if body := do(t, h, "GET", "worm?restype=container&comp=list", nil, nil).Body.String(); strings.Contains(body, "Immutability") || strings.Contains(body, "LegalHold") {
		t.Fatalf("listing without include: %s", body)
	}
	if w := do(t, h, "DELETE", "worm?restype=container", nil, nil); w.Code != 409 || w.Header().Get("x-ms-error-code") != "ContainerImmutableStorageWithVersioningEnabled" {
		t.Errorf("delete container: %d %s", w.Code, w.Header().Get("x-ms-error-code"))
	}
	if body := do(t, h, "GET", "?comp=list&prefix=worm", nil, nil).Body.String(); !strings.Contains(body, "<ImmutableStorageWithVersioningEnabled>true</ImmutableStorageWithVersioningEnabled>") {
		t.Fatalf("container listing: %s", body)
	}
}

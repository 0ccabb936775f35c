package blobhttp

import (
	"strings"
	"testing"

	"github.com/lazuli-storage/lazuli/internal/engine/memstore"
	"github.com/lazuli-storage/lazuli/internal/httpx"
)

// Get and Set Blob Service Properties: Azure's element order, the Blob-only
// elements kept, absent elements left as stored, and CORS answers from the
// stored rules.
func TestServicePropertiesAndCORS(t *testing.T) {
	h := handlerFor(memstore.New())
	const props = "?restype=service&comp=properties"
	w := do(t, h, "GET", props, nil, nil)
	want := httpx.XMLDeclaration + `<StorageServiceProperties><Logging><Version>1.0</Version><Delete>false</Delete><Read>false</Read><Write>false</Write><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></Logging>` +
		`<HourMetrics><Version>1.0</Version><Enabled>false</Enabled><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></HourMetrics>` +
		`<MinuteMetrics><Version>1.0</Version><Enabled>false</Enabled><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></MinuteMetrics>` +
		`<Cors /><DeleteRetentionPolicy><Enabled>false</Enabled></DeleteRetentionPolicy><StaticWebsite><Enabled>false</Enabled></StaticWebsite></StorageServiceProperties>`
	if w.Code != 200 || w.Body.String() != want {
		t.Fatalf("defaults %d\n%s\nwant\n%s", w.Code, w.Body.String(), want)
	}
	set := `<StorageServiceProperties><Cors><CorsRule><AllowedOrigins>http://example.com</AllowedOrigins><AllowedMethods>GET,PUT</AllowedMethods><MaxAgeInSeconds>60</MaxAgeInSeconds><ExposedHeaders>x-ms-meta-*</ExposedHeaders><AllowedHeaders>x-ms-meta-*</AllowedHeaders></CorsRule></Cors>` +
		`<DefaultServiceVersion>2020-10-02</DefaultServiceVersion><Bogus>1</Bogus></StorageServiceProperties>`
	if w := do(t, h, "PUT", props, nil, []byte(set)); w.Code != 202 {
		t.Fatalf("set %d %s", w.Code, w.Body.String())
	}
	got := do(t, h, "GET", props, nil, nil).Body.String()
	if !strings.Contains(got, `<Cors><CorsRule><AllowedOrigins>http://example.com</AllowedOrigins><AllowedMethods>GET,PUT</AllowedMethods><MaxAgeInSeconds>60</MaxAgeInSeconds><ExposedHeaders>x-ms-meta-*</ExposedHeaders><AllowedHeaders>x-ms-meta-*</AllowedHeaders></CorsRule></Cors><DefaultServiceVersion>2020-10-02</DefaultServiceVersion><DeleteRetentionPolicy>`) ||
		strings.Contains(got, "Bogus") {
		t.Fatalf("after set\n%s", got)
	}
	logging := `<StorageServiceProperties><Logging><Version>1.0</Version><Delete>true</Delete><Read>false</Read><Write>true</Write><RetentionPolicy><Enabled>true</Enabled><Days>7</Days></RetentionPolicy></Logging></StorageServiceProperties>`
	if w := do(t, h, "PUT", props, nil, []byte(logging)); w.Code != 202 {
		t.Fatalf("logging %d", w.Code)
	}
	got = do(t, h, "GET", props, nil, nil).Body.String()
	if !strings.Contains(got, "<Delete>true</Delete>") || !strings.Contains(got, "<CorsRule>") || !strings.Contains(got, "<DefaultServiceVersion>") {
		t.Fatalf("logging-only set lost something\n%s", got)
	}
	for _, bad := range []string{
		`<StorageServiceProperties><Logging><Version>1.0</Version></Logging></StorageServiceProperties>`,
		`<StorageServiceProperties><Cors><CorsRule><AllowedOrigins>*</AllowedOrigins><AllowedMethods>GET</AllowedMethods></CorsRule></Cors></StorageServiceProperties>`,
	} {
		if w := do(t, h, "PUT", props, nil, []byte(bad)); w.Code != 400 {
			t.Errorf("%s: %d", bad, w.Code)
		}
	}

	pre := do(t, h, "OPTIONS", "c/b", map[string]string{"Origin": "http://example.com", "Access-Control-Request-Method": "PUT", "Access-Control-Request-Headers": "x-ms-meta-a"}, nil)
	if pre.Code != 200 || pre.Header().Get("Access-Control-Allow-Origin") != "http://example.com" || pre.Header().Get("Access-Control-Allow-Headers") != "x-ms-meta-a" ||
		pre.Header().Get("Access-Control-Max-Age") != "60" || pre.Body.Len() != 0 {
		t.Fatalf("preflight %d %v", pre.Code, pre.Header())
	}
	for hdr, code := range map[[2]string]int{
		{"http://evil.com", "PUT"}: 403,
		{"", "PUT"}:                400,
		{"http://example.com", ""}: 400,
	} {
		m := map[string]string{}
		if hdr[0] != "" {
			m["Origin"] = hdr[0]
		}
		if hdr[1] != "" {
			m["Access-Control-Request-Method"] = hdr[1]
		}
		if w := do(t, h, "OPTIONS", "c/b", m, nil); w.Code != code {
			t.Errorf("preflight %v: %d, want %d", hdr, w.Code, code)
		}
	}
	w = do(t, h, "GET", "?comp=list", map[string]string{"Origin": "http://example.com"}, nil)
	if w.Header().Get("Access-Control-Allow-Origin") != "http://example.com" || w.Header().Get("Access-Control-Allow-Credentials") != "true" ||
		w.Header().Get("Access-Control-Expose-Headers") != "x-ms-meta-*" || w.Header().Get("Vary") != "Origin" {
		t.Fatalf("actual request %v", w.Header())
	}
}

// An empty container ACL renders as Azure does.
func TestEmptyContainerACL(t *testing.T) {
	h := handlerFor(memstore.New())
	do(t, h, "PUT", "acl1?restype=container", nil, nil)
	if w := do(t, h, "GET", "acl1?restype=container&comp=acl", nil, nil); w.Body.String() != httpx.XMLDeclaration+"<SignedIdentifiers />" {
		t.Fatalf("empty acl %d %s", w.Code, w.Body.String())
	}
	body := `<SignedIdentifiers><SignedIdentifier><Id>p</Id><AccessPolicy><Start>2026-01-01T00:00:00</Start><Permission>r</Permission></AccessPolicy></SignedIdentifier><SignedIdentifier><Id>p</Id></SignedIdentifier></SignedIdentifiers>`
	if w := do(t, h, "PUT", "acl1?restype=container&comp=acl", nil, []byte(body)); w.Code != 400 {
		t.Fatalf("duplicate ids %d", w.Code)
	}
	body = `<SignedIdentifiers><SignedIdentifier><Id>p</Id><AccessPolicy><Start>2026-01-01T00:00:00</Start><Permission>r</Permission></AccessPolicy></SignedIdentifier></SignedIdentifiers>`
	if w := do(t, h, "PUT", "acl1?restype=container&comp=acl", nil, []byte(body)); w.Code != 200 {
		t.Fatalf("set acl %d %s", w.Code, w.Body.String())
	}
	if w := do(t, h, "GET", "acl1?restype=container&comp=acl", nil, nil); !strings.Contains(w.Body.String(), "<Start>2026-01-01T00:00:00</Start>") {
		t.Fatalf("acl %s", w.Body.String())
	}
}

func TestContainerACLRefusesUnknownPermissionLetters(t *testing.T) {
	h := handlerFor(memstore.New())
	do(t, h, "PUT", "acl2?restype=container", nil, nil)
	body := `<SignedIdentifiers><SignedIdentifier><Id>a</Id><AccessPolicy><Start>2020-01-01T00:00:00Z</Start><Expiry>2030-01-01T00:00:00Z</Expiry><Permission>rz</Permission></AccessPolicy></SignedIdentifier></SignedIdentifiers>`
	if w := do(t, h, "PUT", "acl2?restype=container&comp=acl", nil, []byte(body)); w.Code != 400 || w.Header().Get("x-ms-error-code") != "InvalidXmlDocument" {
		t.Fatalf("permission rz: %d %s", w.Code, w.Header().Get("x-ms-error-code"))
	}
	if w := do(t, h, "GET", "acl2?restype=container&comp=acl", nil, nil); strings.Contains(w.Body.String(), "<Id>a</Id>") {
		t.Fatalf("refused ACL was stored: %s", w.Body.String())
	}
}

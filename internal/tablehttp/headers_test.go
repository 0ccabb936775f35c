package tablehttp

import (
	"net/http"
	"net/textproto"
	"strings"
	"testing"
)

// TestHeaderNamesCanonical: the names written straight into header maps
// are the ones http.Header.Set would use.
func TestHeaderNamesCanonical(t *testing.T) {
	for name, key := range map[string]string{
		"Content-Type": hdrContentType, "DataServiceVersion": hdrDataServiceVersion, "DataServiceId": hdrDataServiceID,
		"Cache-Control": hdrCacheControl, "X-Content-Type-Options": hdrContentTypeOptions, "ETag": hdrETag,
		"Location": hdrLocation, "Preference-Applied": hdrPreferenceApplied, "Content-Length": hdrContentLength,
	} {
		if c := textproto.CanonicalMIMEHeaderKey(name); c != key {
			t.Errorf("%s: canonical %q, constant %q", name, c, key)
		}
	}
}

// TestWriteResponseHeaders pins the headers of the entity writes and of
// Query Entities.
func TestWriteResponseHeaders(t *testing.T) {
	h := newHandler(t)
	mustStatus(t, do(h, "POST", "Tables", nil, `{"TableName":"hdrs"}`), 201)
	check := func(what string, got http.Header, want map[string]string, absent ...string) {
		t.Helper()
		for k, v := range want {
			if vs := got.Values(k); len(vs) != 1 || vs[0] != v {
				t.Errorf("%s: %s = %q, want %q", what, k, vs, v)
			}
		}
		for _, k := range absent {
			if _, ok := got[textproto.CanonicalMIMEHeaderKey(k)]; ok {
				t.Errorf("%s: unexpected %s: %q", what, k, got.Values(k))
			}
		}
	}
	w := do(h, "POST", "hdrs", map[string]string{"Prefer": "return-no-content"}, `{"PartitionKey":"p q","RowKey":"r'1","N":1}`)
	mustStatus(t, w, 204)
	etag := w.Header().Get("ETag")
	if !strings.HasPrefix(etag, `W/"datetime'`) {
		t.Fatalf("ETag %q", etag)
	}
	loc := base + "/hdrs(PartitionKey='p%20q',RowKey='r''1')"
	check("insert 204", w.Header(), map[string]string{"Location": loc, "DataServiceId": loc, "Preference-Applied": "return-no-content",
		"DataServiceVersion": "3.0;", "Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff"}, "Content-Type")
	w = do(h, "POST", "hdrs", nil, `{"PartitionKey":"p","RowKey":"r2"}`)
	mustStatus(t, w, 201)
	check("insert 201", w.Header(), map[string]string{"Location": base + "/hdrs(PartitionKey='p',RowKey='r2')",
		"Content-Type": "application/json;odata=minimalmetadata;streaming=true;charset=utf-8", "DataServiceVersion": "3.0;"}, "Preference-Applied")
	w = do(h, "POST", "hdrs", map[string]string{"Prefer": "return-content", "Accept": "application/json;odata=nometadata"}, `{"PartitionKey":"p","RowKey":"r3"}`)
	mustStatus(t, w, 201)
	check("insert return-content", w.Header(), map[string]string{"Preference-Applied": "return-content",
		"Content-Type": "application/json;odata=nometadata;streaming=true;charset=utf-8"})
	w = do(h, "PUT", "hdrs(PartitionKey='p%20q',RowKey='r''1')", map[string]string{"If-Match": etag}, `{"N":2}`)
	mustStatus(t, w, 204)
	if e2 := w.Header().Get("ETag"); e2 == "" || e2 == etag {
		t.Fatalf("update ETag %q after %q", e2, etag)
	}
	check("update", w.Header(), map[string]string{"DataServiceVersion": "3.0;"}, "Content-Type", "Location")
	w = do(h, "PUT", "hdrs(PartitionKey='p%20q',RowKey='r''1')", map[string]string{"If-Match": etag}, `{"N":3}`)
	mustStatus(t, w, 412)
	w = do(h, "GET", "hdrs()?$top=1", nil, "")
	mustStatus(t, w, 200)
	check("query", w.Header(), map[string]string{"Content-Type": "application/json;odata=minimalmetadata;streaming=true;charset=utf-8",
		"DataServiceVersion": "3.0;", "Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff",
		"Content-Length": itoa(w.Body.Len())})
	if w.Header().Get("x-ms-continuation-NextPartitionKey") == "" || w.Header().Get("x-ms-continuation-NextRowKey") == "" {
		t.Fatalf("no continuation: %v", w.Header())
	}
}

func itoa(n int) string {
	var b []byte
	for {
		b = append([]byte{byte('0' + n%10)}, b...)
		if n /= 10; n == 0 {
			return string(b)
		}
	}
}

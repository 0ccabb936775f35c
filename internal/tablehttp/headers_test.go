package tablehttp

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
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

// errAfter yields data, then err.
type errAfter struct {
	data []byte
	err  error
}

func (e *errAfter) Read(p []byte) (int, error) {
	if len(e.data) == 0 {
		return 0, e.err
	}
	n := copy(p, e.data)
	e.data = e.data[n:]
	return n, nil
}

// TestWithJSONBodyMatchesReadBody: the pooled reader returns what
// readJSONBody returns, errors included, whatever Content-Length says.
func TestWithJSONBodyMatchesReadBody(t *testing.T) {
	body := []byte(`{"PartitionKey":"p","RowKey":"r"}`)
	for _, c := range []struct {
		cl    int64
		data  []byte
		err   error
		limit int64
	}{
		{int64(len(body)), body, io.EOF, 1 << 20},
		{-1, body, io.EOF, 1 << 20},
		{0, body, io.EOF, 1 << 20},
		{5, body, io.EOF, 1 << 20},
		{100, body, io.EOF, 1 << 20},
		{100, body, io.ErrUnexpectedEOF, 1 << 20},
		{int64(len(body)), body, io.EOF, 10},
		{-1, body, io.EOF, 10},
		{-1, body, io.EOF, int64(len(body))},
		{-1, body, io.EOF, int64(len(body)) - 1},
		{5000, bytes.Repeat([]byte("x"), 5000), io.EOF, 1 << 20},
	} {
		mk := func() *http.Request {
			r := httptest.NewRequest("POST", "/", nil)
			r.ContentLength = c.cl
			r.Body = io.NopCloser(&errAfter{data: append([]byte(nil), c.data...), err: c.err})
			return r
		}
		want, werr := readJSONBody(mk(), c.limit)
		var got []byte
		gerr := withJSONBody(mk(), c.limit, func(b []byte) error { got = append([]byte(nil), b...); return nil })
		if fmt.Sprint(gerr) != fmt.Sprint(werr) || (werr == nil && !bytes.Equal(got, want)) {
			t.Errorf("%+v: got %q %v, want %q %v", c, got, gerr, want, werr)
		}
	}
}

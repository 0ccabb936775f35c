package blobhttp

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// benchReq is a Put Blob request with the headers an SDK sends and no
// optional ones (no key, no x-ms-blob-content-*).
func benchReq() *req {
	r := httptest.NewRequest("PUT", "http://127.0.0.1:10000/devstoreaccount1/c/b", nil)
	for _, h := range []string{"X-Ms-Version", "X-Ms-Date", "X-Ms-Blob-Type", "Authorization", "Content-Length", "Content-Type", "X-Ms-Client-Request-Id"} {
		r.Header.Set(h, "v")
	}
	return &req{r: r}
}

// BenchmarkCPKAbsent is the customer-provided key check of a request that
// sends no key, as nearly every read and write of a blob does.
func BenchmarkCPKAbsent(b *testing.B) {
	rq := benchReq()
	b.ReportAllocs()
	for b.Loop() {
		if sum, err := rq.cpk(ownKeyHeaders); sum != "" || err != nil {
			b.Fatal(sum, err)
		}
	}
}

// BenchmarkProps reads the properties of a Put Blob.
func BenchmarkProps(b *testing.B) {
	rq := benchReq()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := rq.props(true); err != nil {
			b.Fatal(err)
		}
	}
}

// TestKeyHeaderNamesCanonical pins the spelling the key headers are
// looked up by: a name the servers never produce would never match.
func TestKeyHeaderNamesCanonical(t *testing.T) {
	for _, n := range []cpkHeaders{ownKeyHeaders, sourceKeyHeaders} {
		for _, name := range []string{n.key, n.sum, n.alg} {
			if c := http.CanonicalHeaderKey(name); c != name {
				t.Errorf("%s is looked up, the servers give %s", name, c)
			}
		}
	}
}

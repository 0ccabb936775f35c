package blobhttp

import (
	"net/http/httptest"
	"testing"
)

// BenchmarkCPKAbsent is the customer-provided key check of a request that
// sends no key, as nearly every read and write of a blob does.
func BenchmarkCPKAbsent(b *testing.B) {
	r := httptest.NewRequest("PUT", "http://127.0.0.1:10000/devstoreaccount1/c/b", nil)
	for _, h := range []string{"X-Ms-Version", "X-Ms-Date", "X-Ms-Blob-Type", "Authorization", "Content-Length", "Content-Type", "X-Ms-Client-Request-Id"} {
		r.Header.Set(h, "v")
	}
	rq := &req{r: r}
	b.ReportAllocs()
	for b.Loop() {
		if sum, err := rq.cpk(ownKeyHeaders); sum != "" || err != nil {
			b.Fatal(sum, err)
		}
	}
}

package auth

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/lazuli-storage/lazuli/internal/auth/sas"
	"github.com/lazuli-storage/lazuli/internal/auth/sharedkey"
)

func BenchmarkAuthenticateSharedKey(b *testing.B) {
	a := MustAuthenticator(b, nil, false)
	r := httptest.NewRequest("PUT", "http://127.0.0.1:10000/devstoreaccount1/c/dir/blob.txt?comp=block&blockid=AAAA", nil)
	r.Header.Set("x-ms-version", "2026-12-06")
	r.Header.Set("x-ms-date", testNow.Format(http.TimeFormat))
	r.Header.Set("Content-Length", "4096")
	r.Header.Set("x-ms-meta-owner", "bench")
	sharedkey.Sign(r, DevAccount, devKey(), false)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := a.Authenticate(r, Blob, DevAccount); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAuthorizeServiceSAS(b *testing.B) {
	a := MustAuthenticator(b, nil, false)
	q := mintServiceSAS(b, devKey(), sas.Blob, "c", "", "", sv+"&sr=c&sp=rl&"+future)
	r := httptest.NewRequest("GET", "http://127.0.0.1:10000/devstoreaccount1/c/b?"+q, nil)
	need := Access{Service: Blob, Resource: ResObject, Perms: "r", Container: "c", Object: "b"}
	b.ReportAllocs()
	for b.Loop() {
		id, err := a.Authenticate(r, Blob, DevAccount)
		if err != nil {
			b.Fatal(err)
		}
		if err := a.Authorize(id, r, need); err != nil {
			b.Fatal(err)
		}
	}
}

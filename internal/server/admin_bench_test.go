package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/lazuli-storage/lazuli/internal/auth"
	"github.com/lazuli-storage/lazuli/internal/auth/sharedkey"
)

// BenchmarkAdminOverhead serves Get Blob Service Properties in process
// with the admin listener off and on (metrics, fault check and test
// clock on the request path), to show what they cost a request.
func BenchmarkAdminOverhead(b *testing.B) {
	for _, bc := range []struct{ name, admin string }{{"off", ""}, {"on", "127.0.0.1:0"}} {
		b.Run(bc.name, func(b *testing.B) {
			s, err := New(context.Background(), Config{InMemory: true, Silent: true, BlobAddr: "127.0.0.1:0", SMBAddr: "", AdminAddr: bc.admin})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			h := s.Handler(auth.Blob)
			req := httptest.NewRequest("GET", "http://127.0.0.1:10000/devstoreaccount1/?restype=service&comp=properties", nil)
			req.Header.Set("x-ms-version", "2025-11-05")
			if err := sharedkey.Sign(req, auth.DevAccount, auth.DevelopmentAccount().Keys[0], false); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code != http.StatusOK {
					b.Fatalf("status %d", w.Code)
				}
			}
		})
	}
}

package blobhttp

import (
	"bytes"
	"fmt"
	"github.com/lazuli-storage/lazuli/internal/blob"
	"github.com/lazuli-storage/lazuli/internal/guid"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/auth"
	"github.com/lazuli-storage/lazuli/internal/engine/memstore"
	"github.com/lazuli-storage/lazuli/internal/engine/sqlitestore"
	"github.com/lazuli-storage/lazuli/internal/httpx"
	"github.com/lazuli-storage/lazuli/storage"
)

// handlerFor builds the wrapped Blob handler over eng with authentication
// off (every request is the account owner).
func handlerFor(eng storage.Engine) http.Handler {
	d := httpx.Deps{Auth: auth.New(auth.Config{}), Now: time.Now,
		BaseURL: func(a string) string { return "http://127.0.0.1:10000/" + a }}
	return httpx.Wrap(auth.Blob, New(d, blob.New(eng, time.Now, guid.NewString)), httpx.Options{Silent: true})
}

func do(tb testing.TB, h http.Handler, method, path string, hdr map[string]string, body []byte) *httptest.ResponseRecorder {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	r := httptest.NewRequest(method, "http://127.0.0.1:10000/devstoreaccount1/"+path, rd)
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func engines(b *testing.B) map[string]storage.Engine {
	sq, err := sqlitestore.Open(sqlitestore.Options{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { sq.Close() })
	return map[string]storage.Engine{"mem": memstore.New(), "sqlite": sq}
}

func BenchmarkPutBlob1KiB(b *testing.B) {
	for name, eng := range engines(b) {
		b.Run(name, func(b *testing.B) {
			h := handlerFor(eng)
			if w := do(b, h, "PUT", "bench?restype=container", nil, nil); w.Code != 201 && w.Code != 409 {
				b.Fatal(w.Code)
			}
			data := bytes.Repeat([]byte("x"), 1024)
			b.SetBytes(1024)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				i := 0
				for pb.Next() {
					i++
					w := do(b, h, "PUT", fmt.Sprintf("bench/b%d", i%100), map[string]string{"x-ms-blob-type": "BlockBlob"}, data)
					if w.Code != 201 {
						b.Errorf("status %d %s", w.Code, w.Header().Get("x-ms-error-code"))
						return
					}
				}
			})
		})
	}
}

func BenchmarkGetBlob1KiB(b *testing.B) {
	for name, eng := range engines(b) {
		b.Run(name, func(b *testing.B) {
			h := handlerFor(eng)
			do(b, h, "PUT", "bench?restype=container", nil, nil)
			data := bytes.Repeat([]byte("x"), 1024)
			do(b, h, "PUT", "bench/b", map[string]string{"x-ms-blob-type": "BlockBlob"}, data)
			b.SetBytes(1024)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if w := do(b, h, "GET", "bench/b", nil, nil); w.Code != 200 || w.Body.Len() != 1024 {
						b.Errorf("status %d", w.Code)
						return
					}
				}
			})
		})
	}
}

func BenchmarkPutBlock4MiB(b *testing.B) {
	for name, eng := range engines(b) {
		b.Run(name, func(b *testing.B) {
			h := handlerFor(eng)
			do(b, h, "PUT", "bench?restype=container", nil, nil)
			data := bytes.Repeat([]byte("x"), 4<<20)
			b.SetBytes(4 << 20)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if w := do(b, h, "PUT", "bench/big?comp=block&blockid=YWJj", nil, data); w.Code != 201 {
					b.Fatalf("status %d", w.Code)
				}
			}
		})
	}
}

package server

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/lazuli-storage/lazuli/internal/auth"
	"github.com/lazuli-storage/lazuli/internal/auth/sharedkey"
)

// BenchmarkTwoDependentWrites serves lazuli-bench's file-put-1k (Create
// File + 1 KiB Put Range) and its Blob anchor blob-put-setmeta-1k (Put
// Blob of 1 KiB + Set Blob Metadata) in process, on the log engine
// without fsync, so that ns/op and allocs/op compare the server's own
// work for the two (request signing is outside the timer).
func BenchmarkTwoDependentWrites(b *testing.B) {
	s, err := New(context.Background(), Config{Location: b.TempDir(), Silent: true, BlobAddr: "127.0.0.1:0",
		FileAddr: "127.0.0.1:0", SMBAddr: ""})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	body := bytes.Repeat([]byte("lazuli!!"), 128)
	do := func(b *testing.B, h http.Handler, method, url string, hdr []string, body []byte, want int) {
		b.StopTimer()
		var req *http.Request
		if body != nil {
			req = httptest.NewRequest(method, url, bytes.NewReader(body))
			req.Header.Set("Content-Length", strconv.Itoa(len(body)))
		} else {
			req = httptest.NewRequest(method, url, nil)
		}
		req.Header.Set("x-ms-version", "2025-11-05")
		for i := 0; i < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		if err := sharedkey.Sign(req, auth.DevAccount, auth.DevelopmentAccount().Keys[0], false); err != nil {
			b.Fatal(err)
		}
		w := httptest.NewRecorder()
		b.StartTimer()
		h.ServeHTTP(w, req)
		if w.Code != want {
			b.Fatalf("%s %s: status %d, want %d: %s", method, url, w.Code, want, w.Body)
		}
	}
	round := 0
	b.Run("blob-put-setmeta-1k", func(b *testing.B) {
		h := s.Handler(auth.Blob)
		round++
		base := "http://127.0.0.1:10000/devstoreaccount1/bench" + strconv.Itoa(round)
		do(b, h, "PUT", base+"?restype=container", nil, nil, 201)
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			u := base + "/b" + strconv.Itoa(i)
			do(b, h, "PUT", u, []string{"X-Ms-Blob-Type", "BlockBlob", "Content-Type", "application/octet-stream"}, body, 201)
			do(b, h, "PUT", u+"?comp=metadata", []string{"X-Ms-Meta-Bench", "lazuli"}, nil, 200)
		}
	})
	b.Run("file-put-1k", func(b *testing.B) {
		h := s.Handler(auth.File)
		round++
		base := "http://127.0.0.1:10003/devstoreaccount1/bench" + strconv.Itoa(round)
		do(b, h, "PUT", base+"?restype=share", nil, nil, 201)
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			u := base + "/f" + strconv.Itoa(i)
			do(b, h, "PUT", u, []string{"X-Ms-Type", "file", "X-Ms-Content-Length", "1024"}, nil, 201)
			do(b, h, "PUT", u+"?comp=range", []string{"X-Ms-Range", "bytes=0-1023", "X-Ms-Write", "update"}, body, 201)
		}
	})
}

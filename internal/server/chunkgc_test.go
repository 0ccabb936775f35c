package server

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/auth"
	"github.com/lazuli-storage/lazuli/internal/auth/sharedkey"
	"github.com/lazuli-storage/lazuli/internal/engine/logstore"
)

const devKey = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="

// cutBody yields n bytes and then fails, as a client dying mid-upload.
type cutBody struct{ n int }

func (c *cutBody) Read(p []byte) (int, error) {
	if c.n == 0 {
		return 0, errors.New("client gone")
	}
	k := min(c.n, len(p))
	clear(p[:k])
	c.n -= k
	return k, nil
}

// TestChunksOfOverwritesAndAbortsAreReclaimed: five overwrites of a large
// blob and an upload abandoned half way leave chunks nobody references;
// the server removes them soon after the last request, and keeps the
// chunks of the blob that stays.
func TestChunksOfOverwritesAndAbortsAreReclaimed(t *testing.T) {
	dir := t.TempDir()
	s, err := New(context.Background(), Config{Location: dir, Sync: true, BlobAddr: "127.0.0.1:0", Silent: true,
		ChunkGCInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	key, _ := base64.StdEncoding.DecodeString(devKey)
	base := "http://" + s.Addr(auth.Blob) + "/devstoreaccount1/reclaim"
	do := func(method, url string, body io.Reader, n int64, hdr map[string]string) (*http.Response, error) {
		req, err := http.NewRequestWithContext(context.Background(), method, url, body)
		if err != nil {
			t.Fatal(err)
		}
		req.ContentLength = n
		req.Header.Set("x-ms-version", "2021-12-02")
		req.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		if err := sharedkey.Sign(req, "devstoreaccount1", key, false); err != nil {
			t.Fatal(err)
		}
		return http.DefaultClient.Do(req)
	}
	mustDo := func(method, url string, body []byte, hdr map[string]string, want int) {
		t.Helper()
		resp, err := do(method, url, bytes.NewReader(body), int64(len(body)), hdr)
		if err != nil {
			t.Fatal(err)
		}
		msg, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("%s %s: %d, want %d: %s", method, url, resp.StatusCode, want, msg)
		}
	}
	mustDo(http.MethodPut, base+"?restype=container", nil, nil, http.StatusCreated)
	const size = 9 << 20 // three chunk pieces
	var last []byte
	for i := range 5 {
		last = bytes.Repeat([]byte{byte('a' + i)}, size)
		mustDo(http.MethodPut, base+"/big", last, map[string]string{"x-ms-blob-type": "BlockBlob"}, http.StatusCreated)
	}
	if resp, err := do(http.MethodPut, base+"/aborted", &cutBody{n: 6 << 20}, size,
		map[string]string{"x-ms-blob-type": "BlockBlob"}); err == nil {
		resp.Body.Close()
	}
	chunks := func() int {
		n := 0
		filepath.WalkDir(filepath.Join(dir, logstore.ChunkDir), func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				n++
			}
			return nil
		})
		return n
	}
	// The promise is reclaim within a minute of the last request.
	deadline := time.Now().Add(time.Minute)
	for chunks() != 3 {
		if time.Now().After(deadline) {
			t.Fatalf("%d chunk files left, want the 3 of the blob that stays", chunks())
		}
		time.Sleep(10 * time.Millisecond)
	}
	resp, err := do(http.MethodGet, base+"/big", nil, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || !bytes.Equal(got, last) {
		t.Fatalf("the blob that stays reads back %d bytes (%v), want its %d bytes", len(got), err, len(last))
	}
}

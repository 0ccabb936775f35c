package blob

import (
	"bytes"
	"context"
	"crypto/sha256"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/engine/sqlitestore"
)

// rss reads the resident set size of this process (Linux).
func rss(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		t.Fatalf("read statm: %v", err)
	}
	f := strings.Fields(string(b))
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

// TestLargeBlobMemoryFlat uploads and downloads 1 GiB through the byte
// paths (Ingest, PutBlob, Open) on the SQLite engine and checks that the
// resident set grows by at most 64 MiB.
func TestLargeBlobMemoryFlat(t *testing.T) {
	const size = 1 << 30
	eng, err := sqlitestore.Open(sqlitestore.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	s := New(eng, time.Now, func() string { return "00000000-0000-0000-0000-000000000000" })
	ctx := context.Background()
	if _, err := s.CreateContainer(ctx, "acct", "big", nil, ""); err != nil {
		t.Fatal(err)
	}
	base := rss(t)
	var peak atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			if r := rss(t); r > peak.Load() {
				peak.Store(r)
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	want := sha256.New()
	io.Copy(want, &genReader{n: size})
	in, err := s.Ingest(ctx, &genReader{n: size}, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	ref := Ref{Account: "acct", Container: "big", Name: "blob", Snapshot: ""}
	b, err := s.PutBlob(ctx, PutBlobRequest{Ref: ref, Type: BlockBlob, Data: in})
	if err != nil {
		t.Fatal(err)
	}
	got := sha256.New()
	rc := s.Open(ctx, b, 0, b.Size)
	n, err := io.Copy(got, rc)
	rc.Close()
	close(stop)
	wg.Wait()
	if err != nil || n != size || !bytes.Equal(got.Sum(nil), want.Sum(nil)) {
		t.Fatalf("read %d bytes, err %v, digest match %v", n, err, bytes.Equal(got.Sum(nil), want.Sum(nil)))
	}
	if grow := peak.Load() - base; grow > 64<<20 {
		t.Fatalf("RSS grew by %d MiB", grow>>20)
	}
}

package blob

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/conditional"
	"github.com/lazuli-storage/lazuli/storage"
	"github.com/lazuli-storage/lazuli/storage/memstore"
	"github.com/lazuli-storage/lazuli/storage/sqlitestore"
)

// onEngines runs fn against a fresh service with container "cont" on the
// memory and the SQLite engine. The clock stands still unless the test
// moves it.
func onEngines(t *testing.T, fn func(t *testing.T, s *Service, clk *clock)) {
	open := map[string]func(t *testing.T) storage.Engine{
		"memory": func(t *testing.T) storage.Engine { return memstore.New() },
		"sqlite": func(t *testing.T) storage.Engine {
			e, err := sqlitestore.Open(sqlitestore.Options{Dir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			return e
		},
	}
	for _, name := range []string{"memory", "sqlite"} {
		t.Run(name, func(t *testing.T) {
			e := open[name](t)
			t.Cleanup(func() { e.Close() })
			clk := &clock{t: time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)}
			var mu sync.Mutex
			n := 0
			s := New(e, clk.now, func() string {
				mu.Lock()
				defer mu.Unlock()
				n++
				return fmt.Sprintf("%08d-0000-0000-0000-000000000000", n)
			})
			if _, err := s.CreateContainer(context.Background(), "acct", "cont", nil, ""); err != nil {
				t.Fatal(err)
			}
			fn(t, s, clk)
		})
	}
}

// gate releases n goroutines at once so that they really overlap.
type gate struct {
	ready sync.WaitGroup
	start chan struct{}
}

func newGate(n int) *gate {
	g := &gate{start: make(chan struct{})}
	g.ready.Add(n)
	return g
}

// wait blocks the calling goroutine until all n have arrived.
func (g *gate) wait() { g.ready.Done(); <-g.start }

// open lets everybody go once all have arrived.
func (g *gate) open() { g.ready.Wait(); close(g.start) }

func codeOf(err error) string {
	if e, ok := azerr.As(err); ok {
		return e.Code
	}
	if err != nil {
		return err.Error()
	}
	return ""
}

func ingest(t *testing.T, s *Service, data []byte) Ingested {
	t.Helper()
	in, err := s.Ingest(context.Background(), bytes.NewReader(data), true, nil)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// chunked writes data to the chunk store (no inlining), as large bodies are.
func chunked(t *testing.T, s *Service, data []byte) Ingested {
	t.Helper()
	in, err := s.Ingest(context.Background(), bytes.NewReader(data), false, nil)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

func readBlob(t *testing.T, s *Service, ref Ref) (*Blob, []byte) {
	t.Helper()
	b, err := s.GetBlob(context.Background(), ref, Cond{}, "")
	if err != nil {
		t.Fatal(err)
	}
	rc := s.Open(context.Background(), b, 0, b.Size)
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return b, data
}

func ifMatch(etag uint64) Cond {
	return Cond{Conditions: conditional.Conditions{IfMatch: []string{etagRaw(etag)}}}
}

func bid(i int) string {
	return base64.StdEncoding.EncodeToString([]byte(fmt.Sprintf("block-%04d", i)))
}

// TestETagNotReusedAfterRecreate: a blob or container deleted and created
// again within one clock reading must not get the ETag of the old one, or
// an If-Match holding the old ETag would pass against the new object.
func TestETagNotReusedAfterRecreate(t *testing.T) {
	onEngines(t, func(t *testing.T, s *Service, clk *clock) {
		ctx := context.Background()
		ref := Ref{"acct", "cont", "b", ""}
		old := put(t, s, "b", "old", Cond{})
		if err := s.DeleteBlob(ctx, ref, "", Cond{}); err != nil {
			t.Fatal(err)
		}
		nb := put(t, s, "b", "new", Cond{})
		if nb.ETag <= old.ETag {
			t.Fatalf("re-created blob ETag %x, old %x", nb.ETag, old.ETag)
		}
		_, err := s.SetBlobMetadata(ctx, ref, []KV{{"k", "v"}}, ifMatch(old.ETag))
		if codeOf(err) != "ConditionNotMet" {
			t.Fatalf("If-Match with the deleted blob's ETag: %v", err)
		}
		c1, err := s.CreateContainer(ctx, "acct", "again", nil, "")
		if err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteContainer(ctx, "acct", "again", Cond{}); err != nil {
			t.Fatal(err)
		}
		c2, err := s.CreateContainer(ctx, "acct", "again", nil, "")
		if err != nil {
			t.Fatal(err)
		}
		if c2.ETag <= c1.ETag {
			t.Fatalf("re-created container ETag %x, old %x", c2.ETag, c1.ETag)
		}
	})
}

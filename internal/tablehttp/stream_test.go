package tablehttp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/engine/logstore"
	"github.com/lazuli-storage/lazuli/internal/engine/memstore"
	"github.com/lazuli-storage/lazuli/internal/engine/sqlitestore"
	"github.com/lazuli-storage/lazuli/internal/table"
	"github.com/lazuli-storage/lazuli/internal/table/odata"
	"github.com/lazuli-storage/lazuli/storage"
)

// discard is a ResponseWriter that keeps nothing but a byte count.
type discard struct {
	h http.Header
	n atomic.Int64
}

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) WriteHeader(int)             {}
func (d *discard) Write(p []byte) (int, error) { d.n.Add(int64(len(p))); return len(p), nil }

// heapBytes is the memory held by live and not yet swept heap objects.
func heapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// Query Entities streams a large page instead of rendering it whole in
// memory, on every engine. On the memory and log engines, 8 clients
// reading a 30 MB page at once (250 entities of 120 KB) add less than 64 MB
// to the heap, where rendering each page into one buffer took twice the
// page per client (about 500 MB). SQLite copies records out of storage,
// and holding a page's copies took a page per client (208 MB in the same
// test): 4 clients reading a 12 MB page add less than 24 MB. (SQLite runs
// the smaller test because it is slow under the race detector.)
func TestLargeQueryPagesStream(t *testing.T) {
	for _, tc := range []struct {
		engine                   string
		entities, clients, bound int
	}{
		{"memory", 250, 8, 64 << 20},
		{"log", 250, 8, 64 << 20},
		{"sqlite", 100, 4, 24 << 20},
	} {
		t.Run(tc.engine, func(t *testing.T) {
			var eng storage.Engine
			var err error
			switch tc.engine {
			case "memory":
				eng = memstore.New()
			case "log":
				eng, err = logstore.Open(logstore.Options{Dir: t.TempDir()})
			case "sqlite":
				eng, err = sqlitestore.Open(sqlitestore.Options{Dir: t.TempDir()})
			}
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { eng.Close() })
			h := handlerOn(eng)
			mustStatus(t, do(h, "POST", "Tables", map[string]string{"Content-Type": "application/json"}, `{"TableName":"big"}`), 201)
			// Entities of four 30,000-character properties, loaded through
			// the domain (parsing their JSON is slow under the race
			// detector).
			svc := table.New(eng, table.Options{})
			val := odata.Value{Type: odata.String, Str: strings.Repeat("v", 30000)}
			for i := range tc.entities {
				rk := string(rune('a'+i/26%26)) + string(rune('a'+i%26))
				props := []table.Property{{Name: "A", Value: val}, {Name: "B", Value: val}, {Name: "C", Value: val}, {Name: "D", Value: val}}
				if _, err := svc.Apply(context.Background(), "devstoreaccount1", "big", table.Op{Kind: table.OpInsert, PartitionKey: "p", RowKey: rk, Props: props}); err != nil {
					t.Fatal(err)
				}
			}
			largeQueryPages(t, h, tc.clients, int64(tc.entities)*120_000, tc.bound, tc.engine == "sqlite")
		})
	}
}

// largeQueryPages has clients read the table "big", of pageBytes, at once
// and fails if the heap grows by more than bound meanwhile; copies says
// the engine copies records out of storage.
func largeQueryPages(t *testing.T, h http.Handler, clients int, pageBytes int64, bound int, copies bool) {
	if copies {
		// The collector runs often, so that what the heap holds is what
		// the requests keep, not the page of garbage per request that
		// copying records out of storage makes, which the default pacing
		// (slowed down by the race detector) has yet to collect.
		defer debug.SetGCPercent(debug.SetGCPercent(20))
	}
	runtime.GC()
	before := heapBytes()
	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			if v := heapBytes(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	var wg sync.WaitGroup
	sizes := make([]int64, clients)
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := httptest.NewRequest("GET", base+"/big()", nil)
			req.Header.Set("Accept", "application/json;odata=nometadata")
			d := &discard{h: http.Header{}}
			h.ServeHTTP(d, req)
			sizes[c] = d.n.Load()
		}()
	}
	wg.Wait()
	close(stop)
	<-sampled
	for _, n := range sizes {
		if n < pageBytes {
			t.Fatalf("page of %d bytes, want the whole %d", n, pageBytes)
		}
	}
	grew := int64(peak.Load()) - int64(before)
	t.Logf("heap grew by %d MB while %d clients read a %d MB page", grew>>20, clients, sizes[0]>>20)
	if grew > int64(bound) {
		t.Fatalf("heap grew by %d MB while %d clients read a %d MB page, want < %d MB", grew>>20, clients, sizes[0]>>20, bound>>20)
	}
}

package tablehttp

import (
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
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
// memory: 8 clients reading a 30 MB page at once (250 entities of 120 KB)
// add less than 64 MB to the heap, where rendering each page into one
// buffer took twice the page per client (about 500 MB).
func TestLargeQueryPagesStream(t *testing.T) {
	h := newHandler(t)
	mustStatus(t, do(h, "POST", "Tables", map[string]string{"Content-Type": "application/json"}, `{"TableName":"big"}`), 201)
	val := strings.Repeat("v", 30000)
	for i := range 250 {
		body := `{"PartitionKey":"p","RowKey":"` + string(rune('a'+i/26%26)) + string(rune('a'+i%26)) + `","A":"` + val + `","B":"` + val + `","C":"` + val + `","D":"` + val + `"}`
		w := do(h, "POST", "big", map[string]string{"Content-Type": "application/json", "Prefer": "return-no-content"}, body)
		mustStatus(t, w, 204)
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
	sizes := make([]int64, 8)
	for c := range 8 {
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
		if n < 30_000_000 {
			t.Fatalf("page of %d bytes, want the whole 30 MB", n)
		}
	}
	grew := int64(peak.Load()) - int64(before)
	t.Logf("heap grew by %d MB while 8 clients read a %d MB page", grew>>20, sizes[0]>>20)
	if grew > 64<<20 {
		t.Fatalf("heap grew by %d MB while 8 clients read a 30 MB page, want < 64 MB", grew>>20)
	}
}

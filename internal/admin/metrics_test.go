package admin

import (
	"testing"
	"time"
)

// BenchmarkObserveRequest is what counting one request costs the request
// path once its operation's children are resolved: no allocation.
func BenchmarkObserveRequest(b *testing.B) {
	m := NewMetrics()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.ObserveRequest("blob", "PutBlob", 201, "", 1024, 0, 300*time.Microsecond)
		}
	})
}

func TestObserveRequestDoesNotAllocate(t *testing.T) {
	m := NewMetrics()
	m.ObserveRequest("blob", "GetBlob", 404, "BlobNotFound", 0, 215, time.Millisecond)
	if n := testing.AllocsPerRun(100, func() {
		m.ObserveRequest("blob", "GetBlob", 404, "BlobNotFound", 0, 215, time.Millisecond)
	}); n != 0 {
		t.Errorf("%v allocations per request", n)
	}
}

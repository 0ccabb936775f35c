package blobhttp

import (
	"bytes"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/engine/memstore"
	"github.com/lazuli-storage/lazuli/internal/engine/sqlitestore"
	"github.com/lazuli-storage/lazuli/storage"
)

// The hot-path benchmarks drive the operations lazuli-bench measures with
// many concurrent clients (as its 16 clients do) and report the process
// CPU time per operation besides wall time, since on a busy machine CPU
// per request is what decides throughput.

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func hotEngines(b *testing.B) []struct {
	name string
	eng  storage.Engine
} {
	sq, err := sqlitestore.Open(sqlitestore.Options{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { sq.Close() })
	return []struct {
		name string
		eng  storage.Engine
	}{{"sqlite", sq}, {"mem", memstore.New()}}
}

// runHot runs op from 16 concurrent clients on 2 threads' worth of
// parallelism and reports CPU per operation.
func runHot(b *testing.B, op func(client int, i int) error) {
	var clients atomic.Int64
	b.ReportAllocs()
	b.SetParallelism(8)
	b.ResetTimer()
	c0 := cpuTime()
	b.RunParallel(func(pb *testing.PB) {
		c := int(clients.Add(1)) - 1
		i := 0
		for pb.Next() {
			if err := op(c, i); err != nil {
				b.Error(err)
				return
			}
			i++
		}
	})
	b.ReportMetric(float64(cpuTime()-c0)/float64(b.N), "cpu-ns/op")
}

type statusErr struct {
	want int
	w    *httptest.ResponseRecorder
}

func (e statusErr) Error() string {
	return "status " + strconv.Itoa(e.w.Code) + " want " + strconv.Itoa(e.want) + " " + e.w.Header().Get("x-ms-error-code")
}

func expect(w *httptest.ResponseRecorder, code int) error {
	if w.Code != code {
		return statusErr{code, w}
	}
	return nil
}

func BenchmarkHotBlob(b *testing.B) {
	data := bytes.Repeat([]byte("x"), 1024)
	for _, e := range hotEngines(b) {
		h := handlerFor(e.eng)
		if w := do(b, h, "PUT", "hot?restype=container", nil, nil); w.Code != 201 {
			b.Fatal(w.Code)
		}
		for c := range 64 {
			do(b, h, "PUT", "hot/own"+strconv.Itoa(c), map[string]string{"x-ms-blob-type": "BlockBlob"}, data)
		}
		b.Run(e.name+"/get-1k", func(b *testing.B) {
			runHot(b, func(c, i int) error {
				w := do(b, h, "GET", "hot/own"+strconv.Itoa(c), nil, nil)
				if w.Body.Len() != 1024 {
					return statusErr{200, w}
				}
				return expect(w, 200)
			})
		})
		b.Run(e.name+"/lease", func(b *testing.B) {
			runHot(b, func(c, i int) error {
				name := "hot/own" + strconv.Itoa(c) + "?comp=lease"
				w := do(b, h, "PUT", name, map[string]string{"x-ms-lease-action": "acquire", "x-ms-lease-duration": "15"}, nil)
				if err := expect(w, 201); err != nil {
					return err
				}
				id := w.Header().Get("x-ms-lease-id")
				return expect(do(b, h, "PUT", name, map[string]string{"x-ms-lease-action": "release", "x-ms-lease-id": id}, nil), 200)
			})
		})
		var seq atomic.Int64
		b.Run(e.name+"/put-1k", func(b *testing.B) {
			runHot(b, func(c, i int) error {
				n := seq.Add(1)
				return expect(do(b, h, "PUT", "hot/new"+strconv.FormatInt(n, 10), map[string]string{"x-ms-blob-type": "BlockBlob"}, data), 201)
			})
		})
		etags := make([]string, 64)
		for c := range etags {
			etags[c] = do(b, h, "GET", "hot/own"+strconv.Itoa(c), nil, nil).Header().Get("Etag")
		}
		b.Run(e.name+"/put-ifmatch", func(b *testing.B) {
			runHot(b, func(c, i int) error {
				w := do(b, h, "PUT", "hot/own"+strconv.Itoa(c), map[string]string{"x-ms-blob-type": "BlockBlob", "If-Match": etags[c]}, data)
				if err := expect(w, 201); err != nil {
					return err
				}
				etags[c] = w.Header().Get("Etag")
				return nil
			})
		})
	}
}

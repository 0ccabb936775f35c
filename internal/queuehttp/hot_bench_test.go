package queuehttp

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/auth"
	"github.com/lazuli-storage/lazuli/internal/engine/memstore"
	"github.com/lazuli-storage/lazuli/internal/engine/sqlitestore"
	"github.com/lazuli-storage/lazuli/internal/httpx"
	"github.com/lazuli-storage/lazuli/storage"
)

// The hot-path benchmarks drive the operations lazuli-bench measures with
// 16 concurrent clients and report the process CPU time per operation
// besides wall time, since on a busy machine CPU per request is what
// decides throughput.

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func runHot(b *testing.B, op func(client int) error) {
	var clients atomic.Int64
	b.ReportAllocs()
	b.SetParallelism(8)
	b.ResetTimer()
	c0 := cpuTime()
	b.RunParallel(func(pb *testing.PB) {
		c := int(clients.Add(1)) - 1
		for pb.Next() {
			if err := op(c); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(cpuTime()-c0)/float64(b.N), "cpu-ns/op")
}

func hotDo(h http.Handler, method, path, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, "http://127.0.0.1:10001/devstoreaccount1/"+path, strings.NewReader(body))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

type codeErr struct{ rec *httptest.ResponseRecorder }

func (e codeErr) Error() string {
	return "status " + strconv.Itoa(e.rec.Code) + " " + e.rec.Header().Get("x-ms-error-code") + " " + e.rec.Body.String()
}

func BenchmarkHotQueue(b *testing.B) {
	sq, err := sqlitestore.Open(sqlitestore.Options{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { sq.Close() })
	body := msgBody("aGVsbG8gd29ybGQsIHRoaXMgaXMgYSBiZW5jaG1hcmsgbWVzc2FnZQ==")
	for _, e := range []struct {
		name string
		eng  storage.Engine
	}{{"sqlite", sq}, {"mem", memstore.New()}} {
		d := httpx.Deps{Now: time.Now, BaseURL: func(a string) string { return "http://127.0.0.1:10001/" + a }}
		h := httpx.Wrap(auth.Queue, New(d, runningQueues(b, e.eng)), httpx.Options{Silent: true})
		if rec := hotDo(h, "PUT", "hotq", ""); rec.Code != 201 {
			b.Fatal(codeErr{rec})
		}
		b.Run(e.name+"/put", func(b *testing.B) {
			runHot(b, func(int) error {
				if rec := hotDo(h, "POST", "hotq/messages", body); rec.Code != 201 {
					return codeErr{rec}
				}
				return nil
			})
		})
		b.Run(e.name+"/receive-delete", func(b *testing.B) {
			for range b.N {
				hotDo(h, "POST", "hotq/messages", body)
			}
			runHot(b, func(int) error {
				rec := hotDo(h, "GET", "hotq/messages?numofmessages=1", "")
				if rec.Code != 200 {
					return codeErr{rec}
				}
				id := idRE.FindStringSubmatch(rec.Body.String())
				pr := receiptRE.FindStringSubmatch(rec.Body.String())
				if id == nil || pr == nil {
					return codeErr{rec}
				}
				del := hotDo(h, "DELETE", "hotq/messages/"+id[1]+"?popreceipt="+strings.ReplaceAll(pr[1], "+", "%2B"), "")
				if del.Code != 204 {
					return codeErr{del}
				}
				return nil
			})
		})
	}
}

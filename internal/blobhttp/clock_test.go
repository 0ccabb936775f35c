package blobhttp

import (
	"github.com/lazuli-storage/lazuli/internal/blob"
	"github.com/lazuli-storage/lazuli/internal/guid"
	"sync"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/auth"
	"github.com/lazuli-storage/lazuli/internal/engine/memstore"
	"github.com/lazuli-storage/lazuli/internal/httpx"
)

// jumpClock stands still until jump is set; from then on every reading is
// jump after the one before.
type jumpClock struct {
	mu   sync.Mutex
	t    time.Time
	jump time.Duration
}

func (c *jumpClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.t
	c.t = c.t.Add(c.jump)
	return t
}

// TestLeaseHeadersUseTheCheckedInstant: the lease state a response reports
// is the one the request was checked against. A Get Blob Properties that
// passed because its lease id matched an active lease must not report the
// lease as expired, and one refused must not report it as leased.
func TestLeaseHeadersUseTheCheckedInstant(t *testing.T) {
	clk := &jumpClock{t: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)}
	d := httpx.Deps{Auth: auth.New(auth.Config{}), Now: clk.now,
		BaseURL: func(a string) string { return "http://127.0.0.1:10000/" + a }}
	h := httpx.Wrap(auth.Blob, New(d, blob.New(memstore.New(), clk.now, guid.NewString)), httpx.Options{Silent: true})
	if w := do(t, h, "PUT", "lcc?restype=container", nil, nil); w.Code != 201 {
		t.Fatal(w.Code, w.Body)
	}
	if w := do(t, h, "PUT", "lcc/b", map[string]string{"x-ms-blob-type": "BlockBlob"}, []byte("x")); w.Code != 201 {
		t.Fatal(w.Code)
	}
	const id = "11111111-2222-3333-4444-555555555555"
	w := do(t, h, "PUT", "lcc/b?comp=lease", map[string]string{"x-ms-lease-action": "acquire", "x-ms-lease-duration": "15", "x-ms-proposed-lease-id": id}, nil)
	if w.Code != 201 {
		t.Fatalf("acquire: %d %s", w.Code, w.Body)
	}
	// Each further reading of the clock is 20 s after the previous one,
	// longer than the whole lease.
	clk.mu.Lock()
	clk.jump = 20 * time.Second
	clk.mu.Unlock()
	w = do(t, h, "HEAD", "lcc/b", map[string]string{"x-ms-lease-id": id}, nil)
	state := w.Header().Get("x-ms-lease-state")
	switch w.Code {
	case 200:
		if state != "leased" || w.Header().Get("x-ms-lease-status") != "locked" || w.Header().Get("x-ms-lease-duration") != "fixed" {
			t.Fatalf("passed the lease check but reports %s/%s", state, w.Header().Get("x-ms-lease-status"))
		}
	case 412:
	default:
		t.Fatalf("HEAD: %d", w.Code)
	}
}

package logstore_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/lazuli-storage/lazuli/internal/engine/logstore"
	"github.com/lazuli-storage/lazuli/storage"
)

func set(k, v string) func(storage.Tx) error {
	return func(tx storage.Tx) error { return tx.Set([]byte(k), []byte(v)) }
}

func read(t *testing.T, e storage.Engine, k string) string {
	t.Helper()
	var out string
	err := e.View(context.Background(), func(tx storage.Tx) error {
		v, err := tx.Get([]byte(k))
		if errors.Is(err, storage.ErrNotFound) {
			return nil
		}
		out = string(v)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A transient Update with nothing durable pending is visible at once and
// costs no fsync; the next durable Update (or Close) puts it on disk.
func TestUpdateTransientSkipsFsync(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s := openDurable(t, logstore.Options{Dir: dir, Sync: true})
	if err := s.Update(ctx, set("a", "1")); err != nil {
		t.Fatal(err)
	}
	before := s.SyncStats().Fsyncs
	for i := range 10 {
		if err := s.UpdateTransient(ctx, set("h", strconv.Itoa(i))); err != nil {
			t.Fatal(err)
		}
		if got := read(t, s, "h"); got != strconv.Itoa(i) {
			t.Fatalf("after transient Update %d: View reads %q", i, got)
		}
	}
	if n := s.SyncStats().Fsyncs - before; n != 0 {
		t.Fatalf("10 transient Updates made %d fsyncs, want 0", n)
	}
	if err := s.Update(ctx, set("b", "1")); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openDurable(t, logstore.Options{Dir: dir, Sync: true})
	defer s.Close()
	if a, h, b := read(t, s, "a"), read(t, s, "h"), read(t, s, "b"); a != "1" || h != "9" || b != "1" {
		t.Fatalf("after reopen a=%q h=%q b=%q, want 1 9 1", a, h, b)
	}
}

// Writers mix durable and transient Updates of their own counters while
// readers watch: a writer always reads back what it wrote, and no reader
// ever sees a counter go back (a publication of an older tree after a
// transient one would).
func TestUpdateTransientRace(t *testing.T) {
	ctx := context.Background()
	s := openDurable(t, logstore.Options{Dir: t.TempDir(), Sync: true})
	defer s.Close()
	const writers, rounds = 8, 150
	inc := func(k string) func(storage.Tx) error {
		return func(tx storage.Tx) error {
			v, err := tx.Get([]byte(k))
			if err != nil && !errors.Is(err, storage.ErrNotFound) {
				return err
			}
			n, _ := strconv.Atoi(string(v))
			return tx.Set([]byte(k), []byte(strconv.Itoa(n+1)))
		}
	}
	stop := make(chan struct{})
	errc := make(chan error, writers+4)
	var readers sync.WaitGroup
	for range 4 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			last := make([]int, writers)
			for {
				select {
				case <-stop:
					return
				default:
				}
				for w := range writers {
					n, _ := strconv.Atoi(read(t, s, fmt.Sprint("k", w)))
					if n < last[w] {
						errc <- fmt.Errorf("k%d went back from %d to %d", w, last[w], n)
						return
					}
					last[w] = n
				}
			}
		}()
	}
	var ws sync.WaitGroup
	for w := range writers {
		ws.Add(1)
		go func() {
			defer ws.Done()
			k := fmt.Sprint("k", w)
			for i := 1; i <= rounds; i++ {
				var err error
				if (i+w)%3 == 0 {
					err = s.Update(ctx, inc(k))
				} else {
					err = s.UpdateTransient(ctx, inc(k))
				}
				if err != nil {
					errc <- err
					return
				}
				if got := read(t, s, k); got != strconv.Itoa(i) {
					errc <- fmt.Errorf("%s: wrote %d, read back %q", k, i, got)
					return
				}
			}
		}()
	}
	ws.Wait()
	close(stop)
	readers.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
}

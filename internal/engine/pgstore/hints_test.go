package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/lazuli-storage/lazuli/internal/engine/pgstore"
	"github.com/lazuli-storage/lazuli/internal/engine/pgstore/pgtest"
	"github.com/lazuli-storage/lazuli/storage"
	"github.com/lazuli-storage/lazuli/storage/storagetest"
)

// TestHintsOneRoundTrip: an Update that reads keys this instance wrote or
// read before, or keys it never met (taken as absent), and writes costs
// one round trip: its reads come from the instance's hints and are
// checked with its writes and COMMIT.
func TestHintsOneRoundTrip(t *testing.T) {
	s := openURL(t, pgtest.NewDatabase(t))
	defer s.Close()
	ctx := context.Background()
	storagetest.MustSet(t, s, "a", "1")
	before := s.UpdateStats()
	for i := range 20 {
		err := s.Update(ctx, func(tx storage.Tx) error {
			vs, err := storage.GetMany(tx, [][]byte{[]byte("a"), []byte(fmt.Sprint("new-", i))})
			if err != nil {
				return err
			}
			if vs[1] != nil {
				return fmt.Errorf("new-%d found", i)
			}
			if err := tx.Set([]byte(fmt.Sprint("new-", i)), vs[0]); err != nil {
				return err
			}
			return tx.Set([]byte("a"), []byte(fmt.Sprint(i)))
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	st := s.UpdateStats()
	if trips := st.RoundTrips - before.RoundTrips; trips != 20 {
		t.Errorf("%d round trips for 20 Updates, want one each", trips)
	}
	if st.StaleHints != before.StaleHints {
		t.Errorf("%d stale hints", st.StaleHints-before.StaleHints)
	}
	v, err := storage.GetValue(ctx, s, []byte("new-19"))
	if err != nil || string(v) != "18" {
		t.Fatalf("new-19 = %q, %v; want 18", v, err)
	}
}

// TestHintsStaleAcrossInstances: what another instance wrote since this
// one last met a key is what this one's Update works on, whether the key
// changed, appeared or went away, and whether the function then writes,
// writes nothing, or fails on what it read: a stale hint only costs a
// round trip.
func TestHintsStaleAcrossInstances(t *testing.T) {
	url := pgtest.NewDatabase(t)
	b := openURL(t, url)
	defer b.Close()
	var a *pgstore.Store
	ctx := context.Background()
	errWrong := errors.New("read a stale value")

	// expect runs on a an Update that reads key, expecting want (nil:
	// absent), and checks what its last run read and the stale hints
	// it met.
	expect := func(key string, want []byte, mode string) {
		t.Helper()
		before := a.UpdateStats().StaleHints
		var got []byte
		err := a.Update(ctx, func(tx storage.Tx) error {
			v, err := tx.Get([]byte(key))
			switch {
			case errors.Is(err, storage.ErrNotFound):
				v = nil
			case err != nil:
				return err
			}
			got = v
			switch {
			case mode == "fail" && ((v == nil) != (want == nil) || string(v) != string(want)):
				return fmt.Errorf("%w: %s = %q, want %q", errWrong, key, v, want)
			case mode == "write":
				return tx.Set([]byte(key+"-seen"), v)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if (got == nil) != (want == nil) || string(got) != string(want) {
			t.Errorf("%s (%s): read %q, want %q", key, mode, got, want)
		}
		if n := a.UpdateStats().StaleHints - before; n != 1 {
			t.Errorf("%s (%s): %d stale hints, want 1", key, mode, n)
		}
	}
	for _, mode := range []string{"write", "read", "fail"} {
		// A new instance each time: once stale hints abound, an
		// instance mostly stops reading them (see hints.allow).
		a = openURL(t, url)
		defer a.Close()
		k := "changed-" + mode
		storagetest.MustSet(t, a, k, "1")
		storagetest.MustSet(t, b, k, "2")
		expect(k, []byte("2"), mode)

		k = "appeared-" + mode // a knows nothing of it: taken as absent
		storagetest.MustSet(t, b, k, "3")
		expect(k, []byte("3"), mode)

		k = "gone-" + mode
		storagetest.MustSet(t, a, k, "4")
		storagetest.MustUpdate(t, b, func(tx storage.Tx) error { return tx.Delete([]byte(k)) })
		expect(k, nil, mode)
	}
}

// TestHintsRaceAcrossInstances: instances incrementing one counter, each
// mostly on its own stale hint of it, lose no increment.
func TestHintsRaceAcrossInstances(t *testing.T) {
	url := pgtest.NewDatabase(t)
	stores := []*pgstore.Store{openURL(t, url), openURL(t, url), openURL(t, url)}
	for _, s := range stores {
		defer s.Close()
	}
	ctx := context.Background()
	storagetest.MustSet(t, stores[0], "n", "0")
	const each = 20
	var wg sync.WaitGroup
	for i := range 12 {
		s := stores[i%len(stores)]
		wg.Go(func() {
			for range each {
				err := s.Update(ctx, func(tx storage.Tx) error {
					v, err := tx.Get([]byte("n"))
					if err != nil {
						return err
					}
					var n int
					fmt.Sscan(string(v), &n)
					return tx.Set([]byte("n"), []byte(fmt.Sprint(n+1)))
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	v, err := storage.GetValue(ctx, stores[0], []byte("n"))
	if err != nil || string(v) != fmt.Sprint(12*each) {
		t.Fatalf("n = %q, %v; want %d", v, err, 12*each)
	}
}

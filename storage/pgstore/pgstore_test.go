package pgstore_test

import (
	"context"
	"os"
	"sync"
	"testing"

	"github.com/lazuli-storage/lazuli/storage"
	"github.com/lazuli-storage/lazuli/storage/pgstore"
	"github.com/lazuli-storage/lazuli/storage/pgstore/pgtest"
	"github.com/lazuli-storage/lazuli/storage/storagetest"
)

func TestMain(m *testing.M) {
	storagetest.CrashMain(openForCrash)
	code := m.Run()
	pgtest.StopShared()
	os.Exit(code)
}

// openURL opens a store on url, failing the test on error.
func openURL(tb testing.TB, url string) *pgstore.Store {
	tb.Helper()
	s, err := pgstore.Open(context.Background(), pgstore.Options{URL: url, MaxConns: 16})
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	return s
}

// openDir opens the store of a test directory: each directory names its
// own database, so closing and opening the same directory finds the same
// data.
func openDir(t *testing.T, dir string) storage.Engine {
	url, err := pgtest.DatabaseFor(dir)
	if err != nil {
		t.Fatal(err)
	}
	return openURL(t, url)
}

// openForCrash is the crash test's opener: the writer process it starts
// reaches the same server through the environment. The sync flag has no
// meaning here: every commit waits for the database.
func openForCrash(dir string, _ bool) (storage.Engine, error) {
	url, err := pgtest.DatabaseFor(dir)
	if err != nil {
		return nil, err
	}
	return pgstore.Open(context.Background(), pgstore.Options{URL: url, MaxConns: 16})
}

func TestConformance(t *testing.T) {
	storagetest.RunDurable(t, openDir)
}

func TestCrashKill9(t *testing.T) {
	pgtest.Shared(t)
	storagetest.RunCrash(t, openForCrash)
}

// TestSchemaConcurrentOpen: instances starting at once on an empty
// database all come up, and agree on the schema.
func TestSchemaConcurrentOpen(t *testing.T) {
	url := pgtest.NewDatabase(t)
	var wg sync.WaitGroup
	stores := make([]*pgstore.Store, 6)
	errs := make([]error, len(stores))
	for i := range stores {
		wg.Go(func() {
			stores[i], errs[i] = pgstore.Open(context.Background(), pgstore.Options{URL: url, MaxConns: 2})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("instance %d: %v", i, err)
		}
	}
	storagetest.MustSet(t, stores[0], "k", "v")
	for i, s := range stores {
		v, err := storage.GetValue(context.Background(), s, []byte("k"))
		if err != nil || string(v) != "v" {
			t.Fatalf("instance %d reads %q, %v", i, v, err)
		}
		s.Close()
	}
}

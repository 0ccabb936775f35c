package memstore_test

import (
	"os"
	"testing"

	"github.com/lazuli-storage/lazuli/storage"
	"github.com/lazuli-storage/lazuli/storage/memstore"
	"github.com/lazuli-storage/lazuli/storage/storagetest"
)

func TestConformance(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Engine { return memstore.New() })
}

// openDurable opens the durable store in dir, failing the test on error.
func openDurable(t *testing.T, opts memstore.Options) *memstore.Store {
	t.Helper()
	s, err := memstore.Open(opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s
}

func TestDurableConformance(t *testing.T) {
	storagetest.RunDurable(t, func(t *testing.T, dir string) storage.Engine {
		return openDurable(t, memstore.Options{Dir: dir})
	})
}

func TestDurableSync(t *testing.T) {
	storagetest.RunDurable(t, func(t *testing.T, dir string) storage.Engine {
		return openDurable(t, memstore.Options{Dir: dir, Sync: true})
	})
}

// TestDurableCompacting runs the suite with a log so small that it is
// compacted again and again while the tests run.
func TestDurableCompacting(t *testing.T) {
	for _, sync := range []bool{false, true} {
		name := "nosync"
		if sync {
			name = "sync"
		}
		t.Run(name, func(t *testing.T) {
			storagetest.RunDurable(t, func(t *testing.T, dir string) storage.Engine {
				return openDurable(t, memstore.Options{Dir: dir, Sync: sync, CompactBytes: 4 << 10})
			})
		})
	}
}

// openForCrash opens the durable store with a small log, so that the kills
// also land during compactions.
func openForCrash(dir string, sync bool) (storage.Engine, error) {
	return memstore.Open(memstore.Options{Dir: dir, Sync: sync, CompactBytes: 256 << 10})
}

func TestMain(m *testing.M) {
	storagetest.CrashMain(openForCrash)
	os.Exit(m.Run())
}

func TestCrashKill9(t *testing.T) { storagetest.RunCrash(t, openForCrash) }

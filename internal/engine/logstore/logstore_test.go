package logstore_test

import (
	"os"
	"testing"

	"github.com/lazuli-storage/lazuli/internal/engine/filestore"
	"github.com/lazuli-storage/lazuli/internal/engine/logstore"
	"github.com/lazuli-storage/lazuli/storage"
	"github.com/lazuli-storage/lazuli/storage/storagetest"
)

// openDurable opens the store in dir, failing the test on error.
func openDurable(t *testing.T, opts logstore.Options) *logstore.Store {
	t.Helper()
	s, err := logstore.Open(opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s
}

func TestConformance(t *testing.T) {
	storagetest.RunDurable(t, func(t *testing.T, dir string) storage.Engine {
		return openDurable(t, logstore.Options{Dir: dir})
	})
}

func TestConformanceSync(t *testing.T) {
	storagetest.RunDurable(t, func(t *testing.T, dir string) storage.Engine {
		return openDurable(t, logstore.Options{Dir: dir, Sync: true})
	})
}

// TestConformanceCompacting runs the suite with a log so small that it is
// compacted again and again while the tests run.
func TestConformanceCompacting(t *testing.T) {
	for _, sync := range []bool{false, true} {
		name := "nosync"
		if sync {
			name = "sync"
		}
		t.Run(name, func(t *testing.T) {
			storagetest.RunDurable(t, func(t *testing.T, dir string) storage.Engine {
				return openDurable(t, logstore.Options{Dir: dir, Sync: sync, CompactBytes: 4 << 10})
			})
		})
	}
}

// openForCrash opens the store with a small log, so that the kills also
// land during compactions.
func openForCrash(dir string, sync bool) (storage.Engine, error) {
	return logstore.Open(logstore.Options{Dir: dir, Sync: sync, CompactBytes: 256 << 10})
}

func TestMain(m *testing.M) {
	storagetest.CrashMain(openForCrash)
	os.Exit(m.Run())
}

func TestCrashKill9(t *testing.T) { storagetest.RunCrash(t, openForCrash) }

// TestPowerLoss: with Sync, power cuts under load lose no acknowledged
// Update and leave no committed record pointing at a torn chunk. The log
// is small so that the cuts also land during compactions.
func TestPowerLoss(t *testing.T) {
	storagetest.RunPowerLoss(t, func(fsys filestore.FS, dir string) (storage.Engine, error) {
		return logstore.Open(logstore.Options{Dir: dir, Sync: true, FS: fsys, CompactBytes: 64 << 10})
	})
}

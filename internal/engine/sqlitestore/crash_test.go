package sqlitestore_test

import (
	"os"
	"testing"

	"github.com/lazuli-storage/lazuli/internal/engine/sqlitestore"
	"github.com/lazuli-storage/lazuli/storage"
	"github.com/lazuli-storage/lazuli/storage/storagetest"
)

func openForCrash(dir string, sync bool) (storage.Engine, error) {
	return sqlitestore.Open(sqlitestore.Options{Dir: dir, Sync: sync})
}

func TestMain(m *testing.M) {
	storagetest.CrashMain(openForCrash)
	os.Exit(m.Run())
}

func TestCrashKill9(t *testing.T) { storagetest.RunCrash(t, openForCrash) }

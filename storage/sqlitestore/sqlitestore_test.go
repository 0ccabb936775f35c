package sqlitestore_test

import (
	"testing"

	"github.com/lazuli-storage/lazuli/storage"
	"github.com/lazuli-storage/lazuli/storage/sqlitestore"
	"github.com/lazuli-storage/lazuli/storage/storagetest"
)

func openStore(tb testing.TB, dir string, sync bool) *sqlitestore.Store {
	tb.Helper()
	s, err := sqlitestore.Open(sqlitestore.Options{Dir: dir, Sync: sync})
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	return s
}

func TestConformance(t *testing.T) {
	storagetest.RunDurable(t, func(t *testing.T, dir string) storage.Engine { return openStore(t, dir, false) })
}

// TestReopenSync runs the close-and-reopen tests with Sync set; the crash
// test covers Sync under load.
func TestReopenSync(t *testing.T) {
	storagetest.RunReopen(t, func(t *testing.T, dir string) storage.Engine { return openStore(t, dir, true) })
}

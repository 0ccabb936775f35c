package sqlitestore_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/lazuli-storage/lazuli/internal/engine/sqlitestore"
	"github.com/lazuli-storage/lazuli/storage"
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

// TestDirectoryNames: relative directories and names with characters that
// mean something in a URI (space, %, ?, #) hold their data where expected
// and reopen.
func TestDirectoryNames(t *testing.T) {
	base := t.TempDir()
	t.Chdir(base)
	for _, dir := range []string{"relative dir", "per%25cent?query#frag", filepath.Join(base, "abs %20 ?x#y"), "./dot/sub"} {
		s := openStore(t, dir, false)
		storagetest.MustSet(t, s, "k", dir)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(dir, sqlitestore.DBFile)); err != nil {
			t.Fatalf("%q: database not inside the directory: %v", dir, err)
		}
		s = openStore(t, dir, false)
		v, err := storage.GetValue(context.Background(), s, []byte("k"))
		if err != nil || string(v) != dir {
			t.Fatalf("%q: reopened value %q, %v", dir, v, err)
		}
		s.Close()
	}
	entries, _ := os.ReadDir(base)
	if len(entries) != 4 {
		t.Fatalf("expected 4 directories in the base, found %d", len(entries))
	}
}

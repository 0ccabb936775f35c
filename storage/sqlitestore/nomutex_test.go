package sqlitestore

import (
	"database/sql"
	"reflect"
	"testing"
	"unsafe"

	sqlite3 "modernc.org/sqlite/lib"
)

// TestDetachMutex: the driver's connections have the shape detachMutex
// expects (if a driver upgrade changes it, connections keep their mutex
// and this test says so), and the mutex is put back for closing.
func TestDetachMutex(t *testing.T) {
	db, err := sql.Open("sqlite", "")
	if err != nil {
		t.Fatal(err)
	}
	drv := db.Driver()
	db.Close()
	dc, err := drv.Open("file:" + t.TempDir() + "/x.db")
	if err != nil {
		t.Fatal(err)
	}
	handle := func() *sqlite3.Tsqlite3 {
		f := reflect.ValueOf(dc).Elem().FieldByName("db")
		return (*sqlite3.Tsqlite3)(unsafe.Add(unsafe.Pointer(nil), uintptr(f.Uint())))
	}
	before := handle().Fmutex
	if before == 0 {
		t.Fatal("the driver opened a connection without a mutex; detachMutex has nothing to do")
	}
	restore := detachMutex(dc)
	if got := handle().Fmutex; got != 0 {
		t.Fatalf("mutex still attached (%#x): the driver's connection changed shape", got)
	}
	restore()
	if got := handle().Fmutex; got != before {
		t.Fatalf("mutex not restored: %#x, want %#x", got, before)
	}
	if err := dc.Close(); err != nil {
		t.Fatal(err)
	}
}

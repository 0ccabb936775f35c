package sqlitestore

import (
	"database/sql/driver"
	"reflect"
	"unsafe"

	sqlite3 "modernc.org/sqlite/lib"
)

// The driver opens every connection in SQLite's serialized mode, where each
// API call (every step, bind and column read) takes the connection's
// mutex. This engine never shares a connection between goroutines at the
// same time: the writer owns one, and a View or a single read borrows a
// reader from the pool and hands it back through a channel. It also never
// gives the driver a context that can be cancelled, so the driver starts no
// goroutine of its own on a connection. The mutex therefore guards
// nothing here, and taking it costs a fifth of the CPU of a long scan.
//
// detachMutex takes the mutex off the connection (SQLite skips a NULL
// connection mutex) and returns a function that puts it back, which must
// run before the connection is closed so SQLite frees it. If the driver's
// connection is not the shape this expects, it leaves the connection as
// it is.
func detachMutex(dc driver.Conn) (restore func()) {
	v := reflect.ValueOf(dc)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return func() {}
	}
	f := v.Elem().FieldByName("db")
	if !f.IsValid() || f.Kind() != reflect.Uintptr || f.Uint() == 0 {
		return func() {}
	}
	db := (*sqlite3.Tsqlite3)(unsafe.Add(unsafe.Pointer(nil), uintptr(f.Uint())))
	mu := db.Fmutex
	db.Fmutex = 0
	return func() { db.Fmutex = mu }
}

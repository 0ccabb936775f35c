// Package storagetest is the conformance suite every storage engine runs:
//
//	func TestConformance(t *testing.T) {
//		storagetest.Run(t, func(t *testing.T) storage.Engine { return newEngine(t) })
//	}
//
// Durable engines also run RunDurable, which reopens the engine on the same
// directory. Each test gets a fresh engine; the suite closes it.
package storagetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/storage"
)

// Opener returns a fresh, empty engine for one test.
type Opener func(t *testing.T) storage.Engine

// DirOpener opens the engine stored in dir, creating it if dir is empty.
// Opening the same dir again after Close must find the same data.
type DirOpener func(t *testing.T, dir string) storage.Engine

// Run runs the conformance suite against engines returned by open.
func Run(t *testing.T, open Opener) {
	fresh := func(t *testing.T) storage.Engine {
		t.Helper()
		e := open(t)
		t.Cleanup(func() { e.Close() })
		return e
	}
	tests := []struct {
		name string
		fn   func(t *testing.T, e storage.Engine)
	}{
		{"GetSetDelete", testGetSetDelete},
		{"EmptyKeyAndValue", testEmptyKeyAndValue},
		{"ReadOnlyView", testReadOnlyView},
		{"ReadYourWrites", testReadYourWrites},
		{"UpdateErrorRollsBack", testUpdateErrorRollsBack},
		{"UpdatePanicRollsBack", testUpdatePanicRollsBack},
		{"FailedUpdateLeavesNoTrace", testFailedUpdateLeavesNoTrace},
		{"CanceledContext", testCanceledContext},
		{"ScanOrder", testScanOrder},
		{"ScanInsideUpdate", testScanInsideUpdate},
		{"ScanInterleavedWithGets", testScanInterleavedWithGets},
		{"DeleteRange", testDeleteRange},
		{"GetMany", testGetMany},
		{"Insert", testInsert},
		{"WritesAfterReads", testWritesAfterReads},
		{"LargeValues", testLargeValues},
		{"ManyKeys", testManyKeys},
		{"RandomAgainstModel", testRandomAgainstModel},
		{"LostUpdate", testLostUpdate},
		{"ConcurrentScansSeeEarlierUpdates", testConcurrentScansSeeEarlierUpdates},
		{"WriteSkew", testWriteSkew},
		{"SnapshotPairs", testSnapshotPairs},
		{"SnapshotRepeatableRead", testSnapshotRepeatableRead},
		{"ViewSeesCommitted", testViewSeesCommitted},
		{"NestedViews", testNestedViews},
		{"Chunks", testChunks},
		{"ChunkWalk", testChunkWalk},
		{"LargeChunk", testLargeChunk},
		{"FailedChunkPut", testFailedChunkPut},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, fresh(t)) })
	}
	t.Run("Closed", func(t *testing.T) { testClosed(t, open(t)) })
	t.Run("CloseDuringUpdates", func(t *testing.T) {
		e := open(t)
		closeDuringUpdates(t, e)
	})
}

// RunDurable runs Run on engines in fresh directories, then the tests that
// close and reopen an engine on the same directory.
func RunDurable(t *testing.T, open DirOpener) {
	Run(t, func(t *testing.T) storage.Engine { return open(t, t.TempDir()) })
	RunReopen(t, open)
}

// RunReopen runs only the tests that close and reopen an engine, for
// variants of an engine already covered by RunDurable.
func RunReopen(t *testing.T, open DirOpener) {
	t.Run("Reopen", func(t *testing.T) { testReopen(t, open) })
	t.Run("ReopenAfterRollback", func(t *testing.T) { testReopenAfterRollback(t, open) })
	t.Run("CloseDuringUpdatesDurable", func(t *testing.T) {
		dir := t.TempDir()
		committed := closeDuringUpdates(t, open(t, dir))
		e := open(t, dir)
		defer e.Close()
		for _, k := range committed {
			if _, ok := get(t, e, k); !ok {
				t.Fatalf("Update of %q returned nil before Close but is lost after reopening", k)
			}
		}
	})
}

// closeDuringUpdates closes e while goroutines keep calling Update. Every
// Update must return nil or ErrClosed, and Close must not hang; it returns
// the keys of the Updates that returned nil.
func closeDuringUpdates(t *testing.T, e storage.Engine) []string {
	var mu sync.Mutex
	var committed []string
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := 0; ; i++ {
				k := fmt.Sprintf("c/%d/%d", g, i)
				err := e.Update(context.Background(), func(tx storage.Tx) error {
					return tx.Set([]byte(k), []byte("v"))
				})
				if errors.Is(err, storage.ErrClosed) {
					return
				}
				if err != nil {
					t.Errorf("Update during Close: %v", err)
					return
				}
				mu.Lock()
				committed = append(committed, k)
				mu.Unlock()
			}
		})
	}
	time.Sleep(50 * time.Millisecond)
	if err := e.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	wg.Wait()
	if len(committed) == 0 {
		t.Errorf("no Update committed before Close")
	}
	return committed
}

// MustUpdate runs fn in an Update and fails the test on error.
func MustUpdate(tb testing.TB, e storage.Engine, fn func(storage.Tx) error) {
	tb.Helper()
	if err := e.Update(context.Background(), fn); err != nil {
		tb.Fatalf("Update: %v", err)
	}
}

// MustView runs fn in a View and fails the test on error.
func MustView(tb testing.TB, e storage.Engine, fn func(storage.Tx) error) {
	tb.Helper()
	if err := e.View(context.Background(), fn); err != nil {
		tb.Fatalf("View: %v", err)
	}
}

// MustSet stores one key in its own Update.
func MustSet(tb testing.TB, e storage.Engine, k, v string) {
	tb.Helper()
	MustUpdate(tb, e, func(tx storage.Tx) error { return tx.Set([]byte(k), []byte(v)) })
}

// get reads one key in its own View; ok is false when absent.
func get(tb testing.TB, e storage.Engine, k string) (string, bool) {
	tb.Helper()
	v, err := storage.GetValue(context.Background(), e, []byte(k))
	if errors.Is(err, storage.ErrNotFound) {
		return "", false
	}
	if err != nil {
		tb.Fatalf("Get %q: %v", k, err)
	}
	return string(v), true
}

func wantValue(tb testing.TB, e storage.Engine, k, want string) {
	tb.Helper()
	got, ok := get(tb, e, k)
	if !ok {
		tb.Fatalf("Get %q: not found, want %q", k, want)
	}
	if got != want {
		tb.Fatalf("Get %q = %q, want %q", k, got, want)
	}
}

func wantAbsent(tb testing.TB, e storage.Engine, k string) {
	tb.Helper()
	if got, ok := get(tb, e, k); ok {
		tb.Fatalf("Get %q = %q, want not found", k, got)
	}
}

// collect drains an iterator.
func collect(tb testing.TB, it storage.Iterator) (keys, vals []string) {
	tb.Helper()
	defer it.Close()
	for it.Next() {
		keys = append(keys, string(it.Key()))
		vals = append(vals, string(it.Value()))
	}
	if err := it.Err(); err != nil {
		tb.Fatalf("iterator: %v", err)
	}
	return keys, vals
}

func scanKeys(tb testing.TB, e storage.Engine, lo, hi []byte, reverse bool) []string {
	tb.Helper()
	var keys []string
	MustView(tb, e, func(tx storage.Tx) error {
		keys, _ = collect(tb, tx.Scan(lo, hi, reverse))
		return nil
	})
	return keys
}

// testGetMany: storage.GetMany reads what Get of each key would, in a
// View and inside an Update after its own writes and deletes, absent keys
// as nil and empty values as empty.
func testGetMany(t *testing.T, e storage.Engine) {
	MustSet(t, e, "a", "1")
	MustSet(t, e, "b", "")
	MustSet(t, e, "c", "3")
	check := func(tx storage.Tx, keys []string, want []*string) {
		t.Helper()
		bk := make([][]byte, len(keys))
		for i, k := range keys {
			bk[i] = []byte(k)
		}
		got, err := storage.GetMany(tx, bk)
		if err != nil {
			t.Fatalf("GetMany: %v", err)
		}
		if len(got) != len(keys) {
			t.Fatalf("GetMany: %d values for %d keys", len(got), len(keys))
		}
		for i := range keys {
			switch {
			case want[i] == nil && got[i] != nil:
				t.Errorf("GetMany %q = %q, want absent", keys[i], got[i])
			case want[i] != nil && (got[i] == nil || string(got[i]) != *want[i]):
				t.Errorf("GetMany %q = %q (nil %v), want %q", keys[i], got[i], got[i] == nil, *want[i])
			}
		}
	}
	s := func(v string) *string { return &v }
	MustView(t, e, func(tx storage.Tx) error {
		check(tx, []string{"a", "missing", "b", "c", "a"}, []*string{s("1"), nil, s(""), s("3"), s("1")})
		check(tx, nil, nil)
		return nil
	})
	MustUpdate(t, e, func(tx storage.Tx) error {
		if err := tx.Set([]byte("a"), []byte("new")); err != nil {
			return err
		}
		if err := tx.Delete([]byte("c")); err != nil {
			return err
		}
		if err := tx.Set([]byte("d"), []byte("4")); err != nil {
			return err
		}
		check(tx, []string{"c", "a", "d", "b", "e"}, []*string{nil, s("new"), s("4"), s(""), nil})
		return nil
	})
	wantValue(t, e, "a", "new")
	wantAbsent(t, e, "c")
}

// testInsert: storage.Insert of absent keys behaves as Set, inside the
// Update (read back, scanned, deleted again) and after it.
func testInsert(t *testing.T, e storage.Engine) {
	MustUpdate(t, e, func(tx storage.Tx) error {
		for _, k := range []string{"i1", "i2", "i3"} {
			if err := storage.Insert(tx, []byte(k), []byte("v"+k)); err != nil {
				return err
			}
		}
		if v, err := tx.Get([]byte("i2")); err != nil || string(v) != "vi2" {
			t.Errorf("Get after Insert = %q, %v", v, err)
		}
		it := tx.Scan([]byte("i"), []byte("j"), false)
		n := 0
		for it.Next() {
			n++
		}
		if err := it.Err(); err != nil || n != 3 {
			t.Errorf("Scan after Insert: %d keys, %v", n, err)
		}
		it.Close()
		return tx.Delete([]byte("i3"))
	})
	wantValue(t, e, "i1", "vi1")
	wantValue(t, e, "i2", "vi2")
	wantAbsent(t, e, "i3")
	// Insert after a Delete in the same Update.
	MustUpdate(t, e, func(tx storage.Tx) error {
		if err := tx.Delete([]byte("i1")); err != nil {
			return err
		}
		if err := tx.Set([]byte("flush"), nil); err != nil {
			return err
		}
		return storage.Insert(tx, []byte("i1"), []byte("again"))
	})
	wantValue(t, e, "i1", "again")
	// The same with the Delete sent on by a Scan first.
	MustUpdate(t, e, func(tx storage.Tx) error {
		if err := tx.Delete([]byte("i1")); err != nil {
			return err
		}
		it := tx.Scan([]byte("i"), []byte("j"), false)
		for it.Next() {
		}
		it.Close()
		return storage.Insert(tx, []byte("i1"), []byte("third"))
	})
	wantValue(t, e, "i1", "third")
}

// testWritesAfterReads: every mix of a key's state as read (present,
// absent, unread) and what the Update then does to it (set, delete, set
// after delete, delete after set) ends as a plain key/value map would,
// also when a Scan in between sends earlier writes on.
func testWritesAfterReads(t *testing.T, e storage.Engine) {
	for _, scan := range []bool{false, true} {
		MustSet(t, e, "wp1", "old")
		MustSet(t, e, "wp2", "old")
		MustSet(t, e, "wp3", "old")
		MustUpdate(t, e, func(tx storage.Tx) error { return tx.Delete([]byte("wa1")) })
		MustUpdate(t, e, func(tx storage.Tx) error { return tx.Delete([]byte("wa2")) })
		MustUpdate(t, e, func(tx storage.Tx) error { return tx.Delete([]byte("wu2")) })
		MustSet(t, e, "wu1", "old")
		MustUpdate(t, e, func(tx storage.Tx) error {
			for _, k := range []string{"wp1", "wp2", "wp3", "wa1", "wa2"} {
				if _, err := tx.Get([]byte(k)); err != nil && !errors.Is(err, storage.ErrNotFound) {
					return err
				}
			}
			step := func(k, v string, del bool) error {
				if del {
					return tx.Delete([]byte(k))
				}
				return tx.Set([]byte(k), []byte(v))
			}
			for _, w := range []struct {
				k, v string
				del  bool
			}{
				{"wp1", "new", false}, {"wp2", "", true}, {"wp3", "", true}, {"wa1", "new", false},
				{"wa2", "new", false}, {"wu1", "new", false}, {"wu2", "new", false},
			} {
				if err := step(w.k, w.v, w.del); err != nil {
					return err
				}
			}
			if scan {
				it := tx.Scan([]byte("w"), []byte("x"), false)
				for it.Next() {
				}
				it.Close()
			}
			// Second writes over the first ones (sent on by the Scan).
			if err := tx.Set([]byte("wp3"), []byte("back")); err != nil {
				return err
			}
			if err := tx.Delete([]byte("wa2")); err != nil {
				return err
			}
			return tx.Set([]byte("wp1"), []byte("newer"))
		})
		wantValue(t, e, "wp1", "newer")
		wantAbsent(t, e, "wp2")
		wantValue(t, e, "wp3", "back")
		wantValue(t, e, "wa1", "new")
		wantAbsent(t, e, "wa2")
		wantValue(t, e, "wu1", "new")
		wantValue(t, e, "wu2", "new")
	}
}

func testGetSetDelete(t *testing.T, e storage.Engine) {
	wantAbsent(t, e, "a")
	MustSet(t, e, "a", "1")
	wantValue(t, e, "a", "1")
	MustSet(t, e, "a", "2")
	wantValue(t, e, "a", "2")
	MustView(t, e, func(tx storage.Tx) error {
		if _, err := tx.Get([]byte("b")); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("Get absent: err = %v, want ErrNotFound", err)
		}
		return nil
	})
	MustUpdate(t, e, func(tx storage.Tx) error { return tx.Delete([]byte("a")) })
	wantAbsent(t, e, "a")
	// Deleting an absent key is not an error.
	MustUpdate(t, e, func(tx storage.Tx) error { return tx.Delete([]byte("never")) })
	// Keys differing only in a trailing byte are distinct.
	MustSet(t, e, "k", "short")
	MustSet(t, e, "k\x00", "zero")
	wantValue(t, e, "k", "short")
	wantValue(t, e, "k\x00", "zero")
	// The caller's buffers are not retained by Get: a value read is stable
	// after further writes.
	MustSet(t, e, "x", "old")
	var held []byte
	MustView(t, e, func(tx storage.Tx) error {
		v, err := tx.Get([]byte("x"))
		held = v
		return err
	})
	MustSet(t, e, "x", "new")
	if string(held) != "old" {
		t.Fatalf("value read earlier changed to %q after a later write", held)
	}
}

func testEmptyKeyAndValue(t *testing.T, e storage.Engine) {
	MustUpdate(t, e, func(tx storage.Tx) error {
		if err := tx.Set([]byte{}, []byte("empty key")); err != nil {
			return err
		}
		return tx.Set([]byte("empty value"), []byte{})
	})
	wantValue(t, e, "", "empty key")
	wantValue(t, e, "empty value", "")
	if got := scanKeys(t, e, nil, nil, false); !slices.Equal(got, []string{"", "empty value"}) {
		t.Fatalf("Scan = %q", got)
	}
	if got := scanKeys(t, e, nil, nil, true); !slices.Equal(got, []string{"empty value", ""}) {
		t.Fatalf("reverse Scan = %q", got)
	}
	MustUpdate(t, e, func(tx storage.Tx) error { return tx.Delete([]byte{}) })
	wantAbsent(t, e, "")
}

func testReadOnlyView(t *testing.T, e storage.Engine) {
	MustSet(t, e, "a", "1")
	MustView(t, e, func(tx storage.Tx) error {
		if err := tx.Set([]byte("a"), []byte("2")); !errors.Is(err, storage.ErrReadOnly) {
			t.Errorf("Set in View: err = %v, want ErrReadOnly", err)
		}
		if err := tx.Delete([]byte("a")); !errors.Is(err, storage.ErrReadOnly) {
			t.Errorf("Delete in View: err = %v, want ErrReadOnly", err)
		}
		return nil
	})
	wantValue(t, e, "a", "1")
}

func testReadYourWrites(t *testing.T, e storage.Engine) {
	MustSet(t, e, "b", "old")
	MustSet(t, e, "c", "gone")
	MustUpdate(t, e, func(tx storage.Tx) error {
		for _, w := range []struct{ k, v string }{{"a", "1"}, {"b", "new"}} {
			if err := tx.Set([]byte(w.k), []byte(w.v)); err != nil {
				return err
			}
		}
		if err := tx.Delete([]byte("c")); err != nil {
			return err
		}
		for k, want := range map[string]string{"a": "1", "b": "new"} {
			v, err := tx.Get([]byte(k))
			if err != nil || string(v) != want {
				t.Errorf("Get %q inside Update = %q, %v; want %q", k, v, err, want)
			}
		}
		if _, err := tx.Get([]byte("c")); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("Get deleted key inside Update: err = %v, want ErrNotFound", err)
		}
		keys, _ := collect(t, tx.Scan(nil, nil, false))
		if !slices.Equal(keys, []string{"a", "b"}) {
			t.Errorf("Scan inside Update = %q, want [a b]", keys)
		}
		return nil
	})
}

var errBoom = errors.New("storagetest: fn failed on purpose")

func testUpdateErrorRollsBack(t *testing.T, e storage.Engine) {
	MustSet(t, e, "keep", "v1")
	MustSet(t, e, "del", "v1")
	err := e.Update(context.Background(), func(tx storage.Tx) error {
		tx.Set([]byte("keep"), []byte("v2"))
		tx.Set([]byte("new"), []byte("x"))
		tx.Delete([]byte("del"))
		for i := range 300 {
			tx.Set([]byte(fmt.Sprintf("bulk%04d", i)), []byte("x"))
		}
		return errBoom
	})
	if err != errBoom {
		t.Fatalf("Update returned %v, want fn's error unchanged", err)
	}
	wantValue(t, e, "keep", "v1")
	wantValue(t, e, "del", "v1")
	wantAbsent(t, e, "new")
	if got := scanKeys(t, e, nil, nil, false); !slices.Equal(got, []string{"del", "keep"}) {
		t.Fatalf("keys after rolled-back Update = %q", got)
	}
	// The engine keeps working, and an Update that succeeds right after a
	// failed one commits only its own writes.
	MustSet(t, e, "after", "ok")
	wantValue(t, e, "after", "ok")
	wantAbsent(t, e, "new")
}

// testFailedUpdateLeavesNoTrace: the writes of an Update that fails are
// invisible to the next Updates' reads too, whichever way they were made
// (before or after a Scan inside the Update) and although the keys were
// read before.
func testFailedUpdateLeavesNoTrace(t *testing.T, e storage.Engine) {
	MustSet(t, e, "a", "1")
	MustSet(t, e, "b", "1")
	for _, scanFirst := range []bool{false, true} {
		err := e.Update(context.Background(), func(tx storage.Tx) error {
			// Read first, so an engine that remembers reads has them.
			for _, k := range []string{"a", "b", "c"} {
				tx.Get([]byte(k))
			}
			tx.Set([]byte("a"), []byte("2"))
			if scanFirst {
				// A Scan after a write: an engine may hand the write
				// to its store here and write through from then on.
				it := tx.Scan(nil, nil, false)
				for it.Next() {
				}
				it.Close()
			}
			tx.Delete([]byte("b"))
			tx.Set([]byte("c"), []byte("2"))
			if v, err := tx.Get([]byte("a")); err != nil || string(v) != "2" {
				t.Errorf("Get inside the Update = %q, %v; want its own write", v, err)
			}
			return errBoom
		})
		if err != errBoom {
			t.Fatalf("Update returned %v, want fn's error", err)
		}
		MustUpdate(t, e, func(tx storage.Tx) error {
			for k, want := range map[string]string{"a": "1", "b": "1"} {
				if v, err := tx.Get([]byte(k)); err != nil || string(v) != want {
					t.Errorf("scanFirst=%v: next Update reads %s = %q, %v; want %q", scanFirst, k, v, err, want)
				}
			}
			if _, err := tx.Get([]byte("c")); !errors.Is(err, storage.ErrNotFound) {
				t.Errorf("scanFirst=%v: next Update reads c: %v, want not found", scanFirst, err)
			}
			return nil
		})
		wantValue(t, e, "a", "1")
		wantAbsent(t, e, "c")
	}
}

func testUpdatePanicRollsBack(t *testing.T, e storage.Engine) {
	MustSet(t, e, "k", "before")
	func() {
		defer func() {
			if p := recover(); p != "storagetest panic" {
				t.Errorf("recovered %v, want the panic raised by fn", p)
			}
		}()
		e.Update(context.Background(), func(tx storage.Tx) error {
			tx.Set([]byte("k"), []byte("during"))
			panic("storagetest panic")
		})
	}()
	wantValue(t, e, "k", "before")
	MustSet(t, e, "k", "after")
	wantValue(t, e, "k", "after")
}

func testCanceledContext(t *testing.T, e storage.Engine) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ran := false
	err := e.Update(ctx, func(tx storage.Tx) error {
		ran = true
		return tx.Set([]byte("k"), []byte("v"))
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Update with canceled context: err = %v, want context.Canceled", err)
	}
	if ran {
		t.Fatalf("Update ran fn with a canceled context")
	}
	wantAbsent(t, e, "k")
	if err := e.View(ctx, func(storage.Tx) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("View with canceled context: err = %v, want context.Canceled", err)
	}
}

// edgeKeys exercises bytewise ordering: 0x00 and 0xFF bytes, prefixes,
// bytes above 0x7F (which must not sort as signed or as UTF-8 text).
func edgeKeys() []string {
	return []string{
		"\x00", "\x00\x00", "\x00\xff", "\x01", "a", "a\x00", "a\x00\x00", "a\x01",
		"a\x7f", "a\x80", "a\xff", "a\xff\xff", "ab", "b", "\x7f", "\x80", "\xc3\xa9",
		"\xfe", "\xff", "\xff\x00", "\xff\xff", "\xff\xff\xff",
	}
}

func testScanOrder(t *testing.T, e storage.Engine) {
	shuffled := edgeKeys()
	rand.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	// Insert in a random order, across several Updates.
	for i := 0; i < len(shuffled); i += 5 {
		part := shuffled[i:min(i+5, len(shuffled))]
		MustUpdate(t, e, func(tx storage.Tx) error {
			for _, k := range part {
				if err := tx.Set([]byte(k), []byte("v"+k)); err != nil {
					return err
				}
			}
			return nil
		})
	}
	sorted := edgeKeys()
	slices.Sort(sorted) // Go string order is bytewise
	bounds := []string{"", "\x00", "\x00\x00", "a", "a\x00", "a\xff", "ab", "b", "\x80", "\xff", "\xff\xff", "\xff\xff\xff\xff", "zz"}
	expect := func(lo, hi []byte, reverse bool) []string {
		var out []string
		for _, k := range sorted {
			if k >= string(lo) && (hi == nil || k < string(hi)) {
				out = append(out, k)
			}
		}
		if reverse {
			slices.Reverse(out)
		}
		return out
	}
	check := func(lo, hi []byte) {
		t.Helper()
		for _, reverse := range []bool{false, true} {
			got := scanKeys(t, e, lo, hi, reverse)
			want := expect(lo, hi, reverse)
			if !slices.Equal(got, want) {
				t.Errorf("Scan(%q, %q, reverse=%v) = %q, want %q", lo, hi, reverse, got, want)
			}
		}
	}
	check(nil, nil)
	for _, lo := range bounds {
		check([]byte(lo), nil)
		for _, hi := range bounds {
			check([]byte(lo), []byte(hi))
		}
	}
	// Values come with their keys.
	MustView(t, e, func(tx storage.Tx) error {
		keys, vals := collect(t, tx.Scan(nil, nil, false))
		for i := range keys {
			if vals[i] != "v"+keys[i] {
				t.Errorf("Scan value of %q = %q", keys[i], vals[i])
			}
		}
		return nil
	})
	// An iterator closed early is fine, and Next after the end stays false.
	MustView(t, e, func(tx storage.Tx) error {
		it := tx.Scan(nil, nil, false)
		if !it.Next() {
			t.Errorf("Next on a non-empty range = false")
		}
		it.Close()
		it = tx.Scan([]byte("\xff\xff\xff\xff"), nil, false)
		// Next stays false once it has returned false.
		if first, second := it.Next(), it.Next(); first || second {
			t.Errorf("Next on an empty range = %v, then %v", first, second)
		}
		return it.Close()
	})
}

func testScanInsideUpdate(t *testing.T, e storage.Engine) {
	for _, k := range []string{"a", "b", "c", "d"} {
		MustSet(t, e, k, "committed")
	}
	MustUpdate(t, e, func(tx storage.Tx) error {
		tx.Delete([]byte("b"))
		tx.Set([]byte("bb"), []byte("mine"))
		tx.Set([]byte("c"), []byte("mine"))
		keys, vals := collect(t, tx.Scan([]byte("a"), []byte("d"), false))
		if want := []string{"a", "bb", "c"}; !slices.Equal(keys, want) {
			t.Errorf("Scan inside Update = %q, want %q", keys, want)
		}
		if want := []string{"committed", "mine", "mine"}; !slices.Equal(vals, want) {
			t.Errorf("Scan values inside Update = %q, want %q", vals, want)
		}
		keys, _ = collect(t, tx.Scan(nil, nil, true))
		if want := []string{"d", "c", "bb", "a"}; !slices.Equal(keys, want) {
			t.Errorf("reverse Scan inside Update = %q, want %q", keys, want)
		}
		return nil
	})
}

// testScanInterleavedWithGets reads other keys and writes while an
// iterator is open across many batches, as domain code listing and
// updating entries does.
func testScanInterleavedWithGets(t *testing.T, e storage.Engine) {
	const n = 1500
	MustUpdate(t, e, func(tx storage.Tx) error {
		for i := range n {
			k := fmt.Sprintf("item/%05d", i)
			if err := tx.Set([]byte(k), []byte(strconv.Itoa(i))); err != nil {
				return err
			}
		}
		return tx.Set([]byte("meta"), []byte("m"))
	})
	MustView(t, e, func(tx storage.Tx) error {
		it := tx.Scan([]byte("item/"), []byte("item0"), false)
		defer it.Close()
		i := 0
		for it.Next() {
			if want := fmt.Sprintf("item/%05d", i); string(it.Key()) != want {
				t.Fatalf("key %d = %q, want %q", i, it.Key(), want)
			}
			if v, err := tx.Get([]byte("meta")); err != nil || string(v) != "m" {
				t.Fatalf("Get during Scan = %q, %v", v, err)
			}
			i++
		}
		if it.Err() != nil || i != n {
			t.Fatalf("Scan returned %d keys, err %v; want %d", i, it.Err(), n)
		}
		return nil
	})
	// Inside Update: write to keys outside the scanned range while iterating.
	MustUpdate(t, e, func(tx storage.Tx) error {
		it := tx.Scan([]byte("item/"), []byte("item0"), true)
		defer it.Close()
		i := n - 1
		for it.Next() {
			if want := fmt.Sprintf("item/%05d", i); string(it.Key()) != want {
				t.Fatalf("reverse key = %q, want %q", it.Key(), want)
			}
			if err := tx.Set([]byte("seen/"+string(it.Value())), nil); err != nil {
				return err
			}
			i--
		}
		if it.Err() != nil || i != -1 {
			t.Fatalf("reverse Scan stopped at %d, err %v", i, it.Err())
		}
		return nil
	})
	if got := len(scanKeys(t, e, []byte("seen/"), []byte("seen0"), false)); got != n {
		t.Fatalf("%d keys written during Scan, want %d", got, n)
	}
}

func bigValue(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, seed))
	b := make([]byte, n)
	for i := 0; i < n; i += 8 {
		v := r.Uint64()
		for j := 0; j < 8 && i+j < n; j++ {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	return b
}

func testLargeValues(t *testing.T, e storage.Engine) {
	sizes := []int{3 << 20, 5<<20 + 7, 2 << 20}
	vals := make([][]byte, len(sizes))
	for i, n := range sizes {
		vals[i] = bigValue(uint64(i+1), n)
		MustUpdate(t, e, func(tx storage.Tx) error {
			return tx.Set([]byte(fmt.Sprintf("big%d", i)), vals[i])
		})
	}
	MustView(t, e, func(tx storage.Tx) error {
		for i := range vals {
			v, err := tx.Get([]byte(fmt.Sprintf("big%d", i)))
			if err != nil || !bytes.Equal(v, vals[i]) {
				t.Errorf("big%d: got %d bytes, err %v; want %d bytes intact", i, len(v), err, len(vals[i]))
			}
		}
		it := tx.Scan(nil, nil, false)
		defer it.Close()
		i := 0
		for ; it.Next(); i++ {
			if !bytes.Equal(it.Value(), vals[i]) {
				t.Errorf("Scan value %d differs", i)
			}
		}
		if i != len(vals) || it.Err() != nil {
			t.Errorf("Scan saw %d large values, err %v", i, it.Err())
		}
		return nil
	})
}

func testManyKeys(t *testing.T, e storage.Engine) {
	const n = 5000
	perm := rand.Perm(n)
	for start := 0; start < n; start += 1000 {
		MustUpdate(t, e, func(tx storage.Tx) error {
			for _, i := range perm[start : start+1000] {
				if err := tx.Set([]byte(fmt.Sprintf("k%06d", i)), []byte(strconv.Itoa(i))); err != nil {
					return err
				}
			}
			return nil
		})
	}
	check := func(lo, hi int, reverse bool) {
		t.Helper()
		var lob, hib []byte
		if lo >= 0 {
			lob = []byte(fmt.Sprintf("k%06d", lo))
		} else {
			lo = 0
		}
		if hi >= 0 {
			hib = []byte(fmt.Sprintf("k%06d", hi))
		} else {
			hi = n
		}
		var keys, vals []string
		MustView(t, e, func(tx storage.Tx) error {
			keys, vals = collect(t, tx.Scan(lob, hib, reverse))
			return nil
		})
		if len(keys) != hi-lo {
			t.Fatalf("Scan [%d,%d) reverse=%v returned %d keys", lo, hi, reverse, len(keys))
		}
		for j := range keys {
			i := lo + j
			if reverse {
				i = hi - 1 - j
			}
			if keys[j] != fmt.Sprintf("k%06d", i) || vals[j] != strconv.Itoa(i) {
				t.Fatalf("Scan [%d,%d) reverse=%v item %d = %q=%q", lo, hi, reverse, j, keys[j], vals[j])
			}
		}
	}
	for _, reverse := range []bool{false, true} {
		check(-1, -1, reverse)
		check(1234, -1, reverse)
		check(-1, 3333, reverse)
		check(777, 4321, reverse)
		check(100, 101, reverse)
		check(100, 100, reverse)
	}
}

// testRandomAgainstModel applies random Updates (some failing halfway)
// and checks Gets and bounded Scans, inside and outside Updates, against a
// map. Keys come from a small alphabet with 0x00 and 0xFF so that prefixes,
// neighbours and bounds between keys are all exercised.
func testRandomAgainstModel(t *testing.T, e storage.Engine) {
	r := rand.New(rand.NewPCG(42, 7))
	alphabet := []byte{0x00, 0x01, 'a', 'b', 0x7f, 0x80, 0xfe, 0xff}
	randKey := func() []byte {
		k := make([]byte, r.IntN(4))
		for i := range k {
			k[i] = alphabet[r.IntN(len(alphabet))]
		}
		return k
	}
	model := map[string]string{}
	expect := func(m map[string]string, lo, hi []byte, reverse bool) []string {
		var out []string
		for k := range m {
			if k >= string(lo) && (hi == nil || k < string(hi)) {
				out = append(out, k)
			}
		}
		slices.Sort(out)
		if reverse {
			slices.Reverse(out)
		}
		return out
	}
	checkScan := func(tx storage.Tx, m map[string]string, where string) {
		lo := randKey()
		var hi []byte
		if r.IntN(3) > 0 {
			hi = randKey()
		}
		if r.IntN(4) == 0 {
			lo = nil
		}
		reverse := r.IntN(2) == 0
		keys, vals := collect(t, tx.Scan(lo, hi, reverse))
		if want := expect(m, lo, hi, reverse); !slices.Equal(keys, want) {
			t.Fatalf("%s: Scan(%q, %q, %v) = %q, want %q", where, lo, hi, reverse, keys, want)
		}
		for i, k := range keys {
			if vals[i] != m[k] {
				t.Fatalf("%s: Scan value of %q = %q, want %q", where, k, vals[i], m[k])
			}
		}
	}
	for round := range 150 {
		fail := r.IntN(5) == 0
		err := e.Update(context.Background(), func(tx storage.Tx) error {
			// The Update's own view: the model plus its writes so far.
			local := maps.Clone(model)
			for range 1 + r.IntN(20) {
				k := randKey()
				if r.IntN(3) == 0 {
					if err := tx.Delete(k); err != nil {
						return err
					}
					delete(local, string(k))
				} else {
					v := fmt.Sprintf("%d-%d", round, r.IntN(1000))
					if err := tx.Set(k, []byte(v)); err != nil {
						return err
					}
					local[string(k)] = v
				}
				if r.IntN(4) == 0 {
					checkScan(tx, local, fmt.Sprintf("round %d inside Update", round))
				}
				k = randKey()
				v, err := tx.Get(k)
				want, ok := local[string(k)]
				if ok != (err == nil) || (ok && string(v) != want) || (!ok && !errors.Is(err, storage.ErrNotFound)) {
					t.Fatalf("round %d: Get %q inside Update = %q, %v; want %q, %v", round, k, v, err, want, ok)
				}
			}
			if fail {
				return errBoom
			}
			model = local
			return nil
		})
		if fail != (err == errBoom) || (!fail && err != nil) {
			t.Fatalf("round %d: Update = %v (fail=%v)", round, err, fail)
		}
		MustView(t, e, func(tx storage.Tx) error {
			for range 3 {
				checkScan(tx, model, fmt.Sprintf("round %d in View", round))
			}
			return nil
		})
	}
}

// testLostUpdate: concurrent read-modify-write Updates of one counter lose
// no increment.
func testLostUpdate(t *testing.T, e storage.Engine) {
	const workers, each = 16, 40
	MustSet(t, e, "counter", "0")
	var wg sync.WaitGroup
	var mu sync.Mutex
	committed := 0
	for range workers {
		wg.Go(func() {
			for range each {
				err := e.Update(context.Background(), func(tx storage.Tx) error {
					v, err := tx.Get([]byte("counter"))
					if err != nil {
						return err
					}
					n, err := strconv.Atoi(string(v))
					if err != nil {
						return err
					}
					return tx.Set([]byte("counter"), []byte(strconv.Itoa(n+1)))
				})
				if err != nil && !errors.Is(err, storage.ErrConflict) {
					t.Errorf("Update: %v", err)
					return
				}
				if err == nil {
					mu.Lock()
					committed++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if committed == 0 {
		t.Fatalf("no increment committed")
	}
	wantValue(t, e, "counter", strconv.Itoa(committed))
}

// testConcurrentScansSeeEarlierUpdates: Updates racing from many
// goroutines (so that engines batch them) each check, by a Scan, that the
// items sum to the total another key holds, then bump one item and the
// total; some fail after writing, some delete and recreate their item.
// Every Update must see exactly the writes of the Updates that committed
// before it, through Get and Scan alike.
func testConcurrentScansSeeEarlierUpdates(t *testing.T, e storage.Engine) {
	const workers, each = 8, 40
	MustSet(t, e, "total", "0")
	lo, hi := []byte("item/"), []byte("item0")
	var wg sync.WaitGroup
	var mu sync.Mutex
	committed := 0
	for w := range workers {
		wg.Go(func() {
			key := []byte(fmt.Sprintf("item/%02d", w))
			for i := range each {
				fail := i%7 == 3
				scanLate := i%2 == 1
				err := e.Update(context.Background(), func(tx storage.Tx) error {
					v, err := tx.Get([]byte("total"))
					if err != nil {
						return err
					}
					total, _ := strconv.Atoi(string(v))
					sum := func() (int, error) {
						it := tx.Scan(lo, hi, false)
						defer it.Close()
						n := 0
						for it.Next() {
							x, err := strconv.Atoi(string(it.Value()))
							if err != nil {
								return 0, err
							}
							n += x
						}
						return n, it.Err()
					}
					if !scanLate {
						got, err := sum()
						if err != nil {
							return err
						}
						if got != total {
							t.Errorf("items sum to %d, total says %d", got, total)
						}
					}
					mine := 0
					if v, err := tx.Get(key); err == nil {
						mine, _ = strconv.Atoi(string(v))
					} else if !errors.Is(err, storage.ErrNotFound) {
						return err
					}
					if i%5 == 4 {
						// Delete and recreate: the Scan must not count
						// it twice or miss it.
						if err := tx.Delete(key); err != nil {
							return err
						}
					}
					if err := tx.Set(key, []byte(strconv.Itoa(mine+1))); err != nil {
						return err
					}
					if err := tx.Set([]byte("total"), []byte(strconv.Itoa(total+1))); err != nil {
						return err
					}
					if scanLate {
						got, err := sum()
						if err != nil {
							return err
						}
						if got != total+1 {
							t.Errorf("after its writes: items sum to %d, want %d", got, total+1)
						}
					}
					if fail {
						return errBoom
					}
					return nil
				})
				switch {
				case fail && err != errBoom:
					t.Errorf("failing Update returned %v", err)
				case !fail && err != nil:
					t.Errorf("Update: %v", err)
				case err == nil:
					mu.Lock()
					committed++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	wantValue(t, e, "total", strconv.Itoa(committed))
	sum := 0
	MustView(t, e, func(tx storage.Tx) error {
		it := tx.Scan(lo, hi, false)
		defer it.Close()
		for it.Next() {
			x, _ := strconv.Atoi(string(it.Value()))
			sum += x
		}
		return it.Err()
	})
	if sum != committed {
		t.Fatalf("items sum to %d after the race, want %d", sum, committed)
	}
}

// testWriteSkew: with x+y >= 1 as invariant and x = y = 1, two concurrent
// Updates that each read both and decrement a different one must not both
// commit.
func testWriteSkew(t *testing.T, e storage.Engine) {
	const rounds = 150
	for round := range rounds {
		MustUpdate(t, e, func(tx storage.Tx) error {
			return errors.Join(tx.Set([]byte("x"), []byte("1")), tx.Set([]byte("y"), []byte("1")))
		})
		var wg sync.WaitGroup
		start := make(chan struct{})
		for _, mine := range []string{"x", "y"} {
			wg.Go(func() {
				<-start
				err := e.Update(context.Background(), func(tx storage.Tx) error {
					sum := 0
					for _, k := range []string{"x", "y"} {
						v, err := tx.Get([]byte(k))
						if err != nil {
							return err
						}
						n, _ := strconv.Atoi(string(v))
						sum += n
					}
					// Give the other transaction every chance to
					// interleave between the reads and the write.
					time.Sleep(time.Duration(round%3) * 100 * time.Microsecond)
					if sum < 2 {
						return nil
					}
					return tx.Set([]byte(mine), []byte("0"))
				})
				if err != nil && !errors.Is(err, storage.ErrConflict) {
					t.Errorf("Update: %v", err)
				}
			})
		}
		close(start)
		wg.Wait()
		x, _ := get(t, e, "x")
		y, _ := get(t, e, "y")
		xn, _ := strconv.Atoi(x)
		yn, _ := strconv.Atoi(y)
		if xn+yn < 1 {
			t.Fatalf("round %d: write skew: x=%s y=%s violates x+y >= 1", round, x, y)
		}
	}
}

// testSnapshotPairs: writers always set a and b to the same value in one
// Update; readers reading both in one View must never see them differ.
func testSnapshotPairs(t *testing.T, e storage.Engine) {
	MustUpdate(t, e, func(tx storage.Tx) error {
		return errors.Join(tx.Set([]byte("a"), []byte("0")), tx.Set([]byte("b"), []byte("0")))
	})
	ctx, cancel := context.WithTimeout(context.Background(), 700*time.Millisecond)
	defer cancel()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := 1; ctx.Err() == nil; i++ {
				v := []byte(fmt.Sprintf("%d-%d", w, i))
				err := e.Update(ctx, func(tx storage.Tx) error {
					if err := tx.Set([]byte("a"), v); err != nil {
						return err
					}
					// Spread the pair over the keyspace's two ends and a scan.
					if _, err := tx.Get([]byte("b")); err != nil {
						return err
					}
					return tx.Set([]byte("b"), v)
				})
				if err != nil && ctx.Err() == nil && !errors.Is(err, storage.ErrConflict) {
					t.Errorf("Update: %v", err)
					return
				}
			}
		})
	}
	reads := 0
	var rmu sync.Mutex
	for range 4 {
		wg.Go(func() {
			for ctx.Err() == nil {
				var a, b, sa, sb []byte
				err := e.View(ctx, func(tx storage.Tx) error {
					var err error
					if a, err = tx.Get([]byte("a")); err != nil {
						return err
					}
					if b, err = tx.Get([]byte("b")); err != nil {
						return err
					}
					_, vals := collect(t, tx.Scan(nil, nil, false))
					if len(vals) != 2 {
						return fmt.Errorf("scan saw %d keys", len(vals))
					}
					sa, sb = []byte(vals[0]), []byte(vals[1])
					return nil
				})
				if err != nil {
					if ctx.Err() == nil {
						t.Errorf("View: %v", err)
					}
					return
				}
				if !bytes.Equal(a, b) || !bytes.Equal(sa, sb) || !bytes.Equal(a, sa) {
					t.Errorf("View saw a torn pair: Get a=%q b=%q, Scan a=%q b=%q", a, b, sa, sb)
					return
				}
				rmu.Lock()
				reads++
				rmu.Unlock()
			}
		})
	}
	wg.Wait()
	if reads == 0 {
		t.Fatalf("no View completed")
	}
}

// testSnapshotRepeatableRead: a View reads a key, an Update commits a new
// value while the View is still open, and the View reads the old value
// again.
func testSnapshotRepeatableRead(t *testing.T, e storage.Engine) {
	MustSet(t, e, "k", "v1")
	MustSet(t, e, "other", "o1")
	for round := range 5 {
		old := fmt.Sprintf("v%d", round+1)
		next := fmt.Sprintf("v%d", round+2)
		MustView(t, e, func(tx storage.Tx) error {
			v, err := tx.Get([]byte("k"))
			if err != nil || string(v) != old {
				t.Fatalf("first read = %q, %v; want %q", v, err, old)
			}
			// Commit from another goroutine while this View is open.
			done := make(chan error)
			go func() {
				done <- e.Update(context.Background(), func(tx storage.Tx) error {
					return errors.Join(tx.Set([]byte("k"), []byte(next)), tx.Set([]byte("new"+next), []byte("x")))
				})
			}()
			if err := <-done; err != nil {
				t.Fatalf("concurrent Update: %v", err)
			}
			v, err = tx.Get([]byte("k"))
			if err != nil || string(v) != old {
				t.Fatalf("second read inside the same View = %q, %v; want %q", v, err, old)
			}
			if _, err := tx.Get([]byte("new" + next)); !errors.Is(err, storage.ErrNotFound) {
				t.Fatalf("View sees a key created after it started: err = %v", err)
			}
			keys, _ := collect(t, tx.Scan(nil, nil, false))
			if slices.Contains(keys, "new"+next) {
				t.Fatalf("Scan in View sees a key created after it started")
			}
			return nil
		})
		wantValue(t, e, "k", next)
	}
}

// testNestedViews: many goroutines each run a View inside a View, and an
// Update runs a View inside fn; none may deadlock, however many run at
// once.
func testNestedViews(t *testing.T, e storage.Engine) {
	MustSet(t, e, "k", "v")
	ctx := context.Background()
	var wg sync.WaitGroup
	release := make(chan struct{})
	for range 40 {
		wg.Go(func() {
			err := e.View(ctx, func(storage.Tx) error {
				<-release // all outer Views are open at once
				_, err := storage.GetValue(ctx, e, []byte("k"))
				return err
			})
			if err != nil {
				t.Errorf("nested View: %v", err)
			}
		})
	}
	time.Sleep(20 * time.Millisecond)
	close(release)
	wg.Wait()
	MustUpdate(t, e, func(tx storage.Tx) error {
		v, err := storage.GetValue(ctx, e, []byte("k"))
		if err != nil || string(v) != "v" {
			t.Errorf("View inside Update = %q, %v", v, err)
		}
		return tx.Set([]byte("k"), []byte("w"))
	})
	wantValue(t, e, "k", "w")
}

func testViewSeesCommitted(t *testing.T, e storage.Engine) {
	for i := range 200 {
		v := strconv.Itoa(i)
		MustSet(t, e, "k", v)
		wantValue(t, e, "k", v)
	}
}

// testDeleteRange: storage.DeleteRange removes the keys of its range in
// order, no more than its limit, and nothing outside the range.
func testDeleteRange(t *testing.T, e storage.Engine) {
	for _, k := range []string{"a", "b1", "b2", "b3", "b4", "c"} {
		MustSet(t, e, k, "v")
	}
	var n int
	MustUpdate(t, e, func(tx storage.Tx) (err error) {
		n, err = storage.DeleteRange(tx, []byte("b"), []byte("c"), 3)
		return err
	})
	if n != 3 {
		t.Fatalf("limited DeleteRange deleted %d keys, want 3", n)
	}
	for _, k := range []string{"b1", "b2", "b3"} {
		wantAbsent(t, e, k)
	}
	wantValue(t, e, "b4", "v")
	MustUpdate(t, e, func(tx storage.Tx) (err error) {
		n, err = storage.DeleteRange(tx, []byte("b"), nil, 0)
		return err
	})
	if n != 2 {
		t.Fatalf("unbounded DeleteRange deleted %d keys, want 2", n)
	}
	wantValue(t, e, "a", "v")
	wantAbsent(t, e, "b4")
	wantAbsent(t, e, "c")
}

func putChunk(tb testing.TB, cs storage.ChunkStore, b []byte) storage.ChunkRef {
	tb.Helper()
	ref, n, err := cs.Put(context.Background(), bytes.NewReader(b))
	if err != nil {
		tb.Fatalf("Put: %v", err)
	}
	if n != int64(len(b)) {
		tb.Fatalf("Put size = %d, want %d", n, len(b))
	}
	return ref
}

func readChunk(tb testing.TB, cs storage.ChunkStore, ref storage.ChunkRef, off, n int64) []byte {
	tb.Helper()
	rc, err := cs.Open(context.Background(), ref, off, n)
	if err != nil {
		tb.Fatalf("Open(%q, %d, %d): %v", ref, off, n, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		tb.Fatalf("read chunk: %v", err)
	}
	return b
}

func testChunks(t *testing.T, e storage.Engine) {
	cs := e.Chunks()
	ctx := context.Background()
	data := bigValue(7, 100_000)
	ref := putChunk(t, cs, data)
	empty := putChunk(t, cs, nil)
	other := putChunk(t, cs, []byte("other"))
	if ref == empty || ref == other || empty == other {
		t.Fatalf("Put returned duplicate refs %q %q %q", ref, empty, other)
	}
	for _, c := range []struct{ off, n int64 }{
		{0, -1}, {0, 100_000}, {0, 1}, {1, 10}, {99_999, 1}, {99_999, 10}, {50_000, -1},
		{12_345, 54_321}, {100_000, -1}, {100_000, 5}, {200_000, 5}, {5, 0},
	} {
		got := readChunk(t, cs, ref, c.off, c.n)
		lo := min(c.off, int64(len(data)))
		hi := int64(len(data))
		if c.n >= 0 {
			hi = min(lo+c.n, hi)
		}
		if !bytes.Equal(got, data[lo:hi]) {
			t.Errorf("Open(off=%d, n=%d) returned %d bytes, want data[%d:%d]", c.off, c.n, len(got), lo, hi)
		}
	}
	if got := readChunk(t, cs, empty, 0, -1); len(got) != 0 {
		t.Errorf("empty chunk read %d bytes", len(got))
	}
	if _, err := cs.Open(ctx, "no-such-chunk", 0, -1); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Open unknown ref: err = %v, want ErrNotFound", err)
	}
	if _, err := cs.Open(ctx, "../../etc/passwd", 0, -1); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Open path-like ref: err = %v, want ErrNotFound", err)
	}
	if err := cs.Delete(ctx, []storage.ChunkRef{ref, "no-such-chunk"}); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if _, err := cs.Open(ctx, ref, 0, -1); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Open deleted chunk: err = %v, want ErrNotFound", err)
	}
	if err := cs.Delete(ctx, []storage.ChunkRef{ref}); err != nil {
		t.Fatalf("Delete twice: %v", err)
	}
	if got := readChunk(t, cs, other, 0, -1); string(got) != "other" {
		t.Errorf("other chunk = %q after deleting a different one", got)
	}
	// A reader opened before Delete keeps reading what it opened, or the
	// engine reports an error; it never returns different bytes.
	rc, err := cs.Open(ctx, other, 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	cs.Delete(ctx, []storage.ChunkRef{other})
	if b, err := io.ReadAll(rc); err == nil && string(b) != "other" {
		t.Errorf("reader opened before Delete returned %q", b)
	}
	rc.Close()
}

func testChunkWalk(t *testing.T, e storage.Engine) {
	cs := e.Chunks()
	ctx := context.Background()
	before := time.Now().Add(-2 * time.Second)
	want := map[storage.ChunkRef]bool{}
	for i := range 20 {
		want[putChunk(t, cs, []byte(strconv.Itoa(i)))] = true
	}
	after := time.Now().Add(2 * time.Second)
	seen := map[storage.ChunkRef]bool{}
	err := cs.Walk(ctx, func(ref storage.ChunkRef, written time.Time) error {
		if seen[ref] {
			t.Errorf("Walk reported %q twice", ref)
		}
		seen[ref] = true
		if written.Before(before) || written.After(after) {
			t.Errorf("Walk: %q written at %v, want between %v and %v", ref, written, before, after)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Walk: %v", err)
	}
	if len(seen) != len(want) {
		t.Fatalf("Walk reported %d chunks, want %d", len(seen), len(want))
	}
	for ref := range want {
		if !seen[ref] {
			t.Fatalf("Walk missed %q", ref)
		}
	}
	// Walk stops at the first error fn returns.
	calls := 0
	stop := errors.New("stop")
	if err := cs.Walk(ctx, func(storage.ChunkRef, time.Time) error { calls++; return stop }); !errors.Is(err, stop) || calls != 1 {
		t.Fatalf("Walk with failing fn: err = %v after %d calls", err, calls)
	}
	var del []storage.ChunkRef
	for ref := range want {
		del = append(del, ref)
	}
	if err := cs.Delete(ctx, del[:10]); err != nil {
		t.Fatal(err)
	}
	n := 0
	cs.Walk(ctx, func(storage.ChunkRef, time.Time) error { n++; return nil })
	if n != 10 {
		t.Fatalf("Walk after deleting 10 of 20 reported %d chunks", n)
	}
}

// patternReader yields n deterministic bytes without holding them.
type patternReader struct{ n, pos int64 }

func (r *patternReader) Read(p []byte) (int, error) {
	if r.pos >= r.n {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), r.n-r.pos)]
	for i := range p {
		p[i] = byte((r.pos + int64(i)) % 251)
	}
	r.pos += int64(len(p))
	return len(p), nil
}

func testLargeChunk(t *testing.T, e storage.Engine) {
	const size = 24 << 20
	cs := e.Chunks()
	ref, n, err := cs.Put(context.Background(), &patternReader{n: size})
	if err != nil || n != size {
		t.Fatalf("Put: %d bytes, %v", n, err)
	}
	check := func(off, n int64) {
		got := readChunk(t, cs, ref, off, n)
		if int64(len(got)) != n {
			t.Fatalf("Open(%d, %d) read %d bytes", off, n, len(got))
		}
		for i, b := range got {
			if b != byte((off+int64(i))%251) {
				t.Fatalf("Open(%d, %d): byte %d wrong", off, n, i)
			}
		}
	}
	check(0, 1<<20)
	check(size-1000, 1000)
	check(13<<20+17, 3<<20)
}

type failingReader struct{ left int }

func (r *failingReader) Read(p []byte) (int, error) {
	if r.left <= 0 {
		return 0, errBoom
	}
	n := min(len(p), r.left)
	clear(p[:n])
	r.left -= n
	return n, nil
}

// testFailedChunkPut: a Put whose body fails midway returns the error and
// leaves no chunk.
func testFailedChunkPut(t *testing.T, e storage.Engine) {
	if _, _, err := e.Chunks().Put(context.Background(), &failingReader{left: 100_000}); !errors.Is(err, errBoom) {
		t.Fatalf("Put with a failing body: err = %v, want the body's error", err)
	}
	n := 0
	if err := e.Chunks().Walk(context.Background(), func(storage.ChunkRef, time.Time) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("failed Put left %d chunks", n)
	}
}

func testClosed(t *testing.T, e storage.Engine) {
	ctx := context.Background()
	MustSet(t, e, "k", "v")
	ref := putChunk(t, e.Chunks(), []byte("x"))
	if err := e.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := e.Update(ctx, func(tx storage.Tx) error { return tx.Set([]byte("k"), []byte("w")) }); !errors.Is(err, storage.ErrClosed) {
		t.Errorf("Update after Close: err = %v, want ErrClosed", err)
	}
	if err := e.View(ctx, func(storage.Tx) error { return nil }); !errors.Is(err, storage.ErrClosed) {
		t.Errorf("View after Close: err = %v, want ErrClosed", err)
	}
	if _, err := storage.GetValue(ctx, e, []byte("k")); !errors.Is(err, storage.ErrClosed) {
		t.Errorf("GetValue after Close: err = %v, want ErrClosed", err)
	}
	if _, _, err := e.Chunks().Put(ctx, bytes.NewReader([]byte("y"))); !errors.Is(err, storage.ErrClosed) {
		t.Errorf("Chunks().Put after Close: err = %v, want ErrClosed", err)
	}
	if _, err := e.Chunks().Open(ctx, ref, 0, -1); !errors.Is(err, storage.ErrClosed) {
		t.Errorf("Chunks().Open after Close: err = %v, want ErrClosed", err)
	}
	if err := e.Chunks().Walk(ctx, func(storage.ChunkRef, time.Time) error { return nil }); !errors.Is(err, storage.ErrClosed) {
		t.Errorf("Chunks().Walk after Close: err = %v, want ErrClosed", err)
	}
	// Closing twice is harmless.
	e.Close()
}

func testReopen(t *testing.T, open DirOpener) {
	dir := t.TempDir()
	e := open(t, dir)
	MustUpdate(t, e, func(tx storage.Tx) error {
		for i := range 500 {
			if err := tx.Set([]byte(fmt.Sprintf("k%04d", i)), []byte(strconv.Itoa(i))); err != nil {
				return err
			}
		}
		return nil
	})
	MustUpdate(t, e, func(tx storage.Tx) error { return tx.Delete([]byte("k0007")) })
	big := bigValue(3, 2<<20)
	MustUpdate(t, e, func(tx storage.Tx) error { return tx.Set([]byte("big"), big) })
	data := bigValue(4, 300_000)
	ref := putChunk(t, e.Chunks(), data)
	gone := putChunk(t, e.Chunks(), []byte("gone"))
	if err := e.Chunks().Delete(context.Background(), []storage.ChunkRef{gone}); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	for reopen := range 2 {
		e = open(t, dir)
		keys := scanKeys(t, e, []byte("k"), []byte("l"), false)
		if len(keys) != 499 || slices.Contains(keys, "k0007") {
			t.Fatalf("reopen %d: %d keys, k0007 present = %v", reopen, len(keys), slices.Contains(keys, "k0007"))
		}
		wantValue(t, e, "k0499", "499")
		if v, err := storage.GetValue(context.Background(), e, []byte("big")); err != nil || !bytes.Equal(v, big) {
			t.Fatalf("reopen %d: big value lost (%d bytes, %v)", reopen, len(v), err)
		}
		if got := readChunk(t, e.Chunks(), ref, 0, -1); !bytes.Equal(got, data) {
			t.Fatalf("reopen %d: chunk differs", reopen)
		}
		if _, err := e.Chunks().Open(context.Background(), gone, 0, -1); !errors.Is(err, storage.ErrNotFound) {
			t.Fatalf("reopen %d: deleted chunk is back: %v", reopen, err)
		}
		n := 0
		e.Chunks().Walk(context.Background(), func(storage.ChunkRef, time.Time) error { n++; return nil })
		if n != 1 {
			t.Fatalf("reopen %d: Walk reports %d chunks, want 1", reopen, n)
		}
		MustSet(t, e, fmt.Sprintf("after%d", reopen), "x")
		if err := e.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
	}
	e = open(t, dir)
	defer e.Close()
	wantValue(t, e, "after0", "x")
	wantValue(t, e, "after1", "x")
}

func testReopenAfterRollback(t *testing.T, open DirOpener) {
	dir := t.TempDir()
	e := open(t, dir)
	MustSet(t, e, "k", "committed")
	e.Update(context.Background(), func(tx storage.Tx) error {
		tx.Set([]byte("k"), []byte("rolled back"))
		tx.Set([]byte("extra"), []byte("rolled back"))
		return errBoom
	})
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = open(t, dir)
	defer e.Close()
	wantValue(t, e, "k", "committed")
	wantAbsent(t, e, "extra")
}

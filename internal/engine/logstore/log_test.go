package logstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lazuli-storage/lazuli/internal/engine/logstore"
	"github.com/lazuli-storage/lazuli/storage"
)

func setKey(t *testing.T, s storage.Engine, k string, v []byte) {
	t.Helper()
	err := s.Update(context.Background(), func(tx storage.Tx) error { return tx.Set([]byte(k), v) })
	if err != nil {
		t.Fatal(err)
	}
}

func wantKey(t *testing.T, s storage.Engine, k string, want []byte) {
	t.Helper()
	got, err := storage.GetValue(context.Background(), s, []byte(k))
	if want == nil {
		if err != storage.ErrNotFound {
			t.Fatalf("%s: got %q, %v; want ErrNotFound", k, got, err)
		}
		return
	}
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("%s: got %q, %v; want %q", k, got, err, want)
	}
}

// logFiles lists the files of the log directory.
func logFiles(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(dir, logstore.LogDir))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// TestLogCompacts overwrites a few keys until the log has been compacted
// many times, then checks that the old files are gone and that a reopened
// store holds the last values.
func TestLogCompacts(t *testing.T) {
	dir := t.TempDir()
	s := openDurable(t, logstore.Options{Dir: dir, CompactBytes: 8 << 10})
	val := func(i int) []byte { return []byte(fmt.Sprintf("%06d%s", i, strings.Repeat("x", 200))) }
	for i := range 3000 {
		setKey(t, s, fmt.Sprintf("k%d", i%10), val(i))
		if i%7 == 0 {
			if err := s.Update(context.Background(), func(tx storage.Tx) error {
				return tx.Delete([]byte(fmt.Sprintf("k%d", i%10)))
			}); err != nil {
				t.Fatal(err)
			}
			setKey(t, s, fmt.Sprintf("k%d", i%10), val(i))
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	files := logFiles(t, dir)
	snaps := 0
	for _, f := range files {
		if strings.HasSuffix(f, ".snap") {
			snaps++
		}
	}
	if snaps == 0 || len(files) > 3 {
		t.Fatalf("log directory after compactions: %v", files)
	}
	s = openDurable(t, logstore.Options{Dir: dir, CompactBytes: 8 << 10})
	defer s.Close()
	for k := range 10 {
		wantKey(t, s, fmt.Sprintf("k%d", k), val(2990+k))
	}
}

// TestLogTornTail cuts the newest log in the middle of its last record,
// as a crash during the write would: the store opens with every earlier
// record, and keeps appending after the last whole one.
func TestLogTornTail(t *testing.T) {
	dir := t.TempDir()
	s := openDurable(t, logstore.Options{Dir: dir})
	for i := range 100 {
		setKey(t, s, fmt.Sprintf("k%03d", i), []byte(fmt.Sprintf("v%d", i)))
	}
	setKey(t, s, "last", bytes.Repeat([]byte("z"), 1000))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	files := logFiles(t, dir)
	path := filepath.Join(dir, logstore.LogDir, files[len(files)-1])
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, st.Size()-500); err != nil {
		t.Fatal(err)
	}
	for round := range 2 {
		s = openDurable(t, logstore.Options{Dir: dir})
		for i := range 100 {
			wantKey(t, s, fmt.Sprintf("k%03d", i), []byte(fmt.Sprintf("v%d", i)))
		}
		wantKey(t, s, "last", nil)
		if round == 0 {
			setKey(t, s, "after", []byte("tear"))
		}
		wantKey(t, s, "after", []byte("tear"))
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLogDamagedSnapshot: damage inside a snapshot is not a crash's
// doing, so Open refuses the directory instead of dropping data.
func TestLogDamagedSnapshot(t *testing.T) {
	dir := t.TempDir()
	s := openDurable(t, logstore.Options{Dir: dir, CompactBytes: 4 << 10})
	for i := range 500 {
		setKey(t, s, fmt.Sprintf("k%d", i%5), bytes.Repeat([]byte{byte(i)}, 100))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	var snap string
	for _, f := range logFiles(t, dir) {
		if strings.HasSuffix(f, ".snap") {
			snap = filepath.Join(dir, logstore.LogDir, f)
		}
	}
	if snap == "" {
		t.Fatal("no snapshot written")
	}
	b, err := os.ReadFile(snap)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-3] ^= 0xff
	if err := os.WriteFile(snap, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if s, err := logstore.Open(logstore.Options{Dir: dir}); err == nil {
		s.Close()
		t.Fatal("Open accepted a damaged snapshot")
	}
}

// FuzzOpenLog opens a directory whose only log holds arbitrary bytes after
// a valid record: Open either fails or yields a store that holds the valid
// record and accepts writes; it never panics.
func FuzzOpenLog(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0x05, 0, 0, 0, 0xde, 0xad, 0xbe, 0xef, 1, 1, 'k', 1, 'v'})
	f.Add([]byte{0xff, 0xff, 0xff, 0x7f, 0, 0, 0, 0})
	f.Add([]byte{0x03, 0, 0, 0, 0, 0, 0, 0, 9, 9, 9})
	f.Fuzz(func(t *testing.T, tail []byte) {
		dir := t.TempDir()
		s := openDurable(t, logstore.Options{Dir: dir})
		setKey(t, s, "first", []byte("record"))
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		files := logFiles(t, dir)
		path := filepath.Join(dir, logstore.LogDir, files[len(files)-1])
		lf, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := lf.Write(tail); err != nil {
			t.Fatal(err)
		}
		lf.Close()
		s2, err := logstore.Open(logstore.Options{Dir: dir})
		if err != nil {
			return
		}
		defer s2.Close()
		wantKey(t, s2, "first", []byte("record"))
		setKey(t, s2, "second", []byte("write"))
		wantKey(t, s2, "second", []byte("write"))
	})
}

// TestLogDamageStopsOpen damages a record in the middle of the newest
// log, in both modes: Open refuses the directory with an error naming the
// file and offset and leaves the file as it was; Open with Salvage moves
// the file aside whole and keeps the records before the damage.
func TestLogDamageStopsOpen(t *testing.T) {
	for _, sync := range []bool{false, true} {
		t.Run(fmt.Sprintf("sync=%v", sync), func(t *testing.T) {
			dir := t.TempDir()
			s := openDurable(t, logstore.Options{Dir: dir, Sync: sync})
			for i := range 10 {
				setKey(t, s, fmt.Sprintf("k%d", i), bytes.Repeat([]byte{'a' + byte(i)}, 100))
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			files := logFiles(t, dir)
			path := filepath.Join(dir, logstore.LogDir, files[len(files)-1])
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			// Flip a byte of the fifth record's value.
			at := bytes.Index(b, bytes.Repeat([]byte{'e'}, 100))
			if at < 0 {
				t.Fatal("fifth record not found")
			}
			b[at+50] ^= 0xff
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err = logstore.Open(logstore.Options{Dir: dir, Sync: sync})
			var derr *logstore.DamageError
			if !errors.As(err, &derr) {
				t.Fatalf("Open of a damaged log: %v, want a DamageError", err)
			}
			recStart := int64(bytes.LastIndex(b[:at], []byte{'k', '4'}))
			if derr.Path != path || derr.Offset <= 0 || derr.Offset > recStart {
				t.Fatalf("DamageError names %s at %d; want %s before %d", derr.Path, derr.Offset, path, recStart)
			}
			if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), fmt.Sprint(derr.Offset)) {
				t.Fatalf("message does not name the file and offset: %v", err)
			}
			if after, _ := os.ReadFile(path); !bytes.Equal(after, b) {
				t.Fatal("a refused Open changed the damaged file")
			}

			s = openDurable(t, logstore.Options{Dir: dir, Sync: sync, Salvage: true})
			for i := range 10 {
				var want []byte
				if i < 4 {
					want = bytes.Repeat([]byte{'a' + byte(i)}, 100)
				}
				wantKey(t, s, fmt.Sprintf("k%d", i), want)
			}
			setKey(t, s, "k9", []byte("new"))
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			moved, err := filepath.Glob(filepath.Join(dir, logstore.SalvageDir, "*", files[len(files)-1]))
			if err != nil || len(moved) != 1 {
				t.Fatalf("salvaged file: %v, %v", moved, err)
			}
			if kept, _ := os.ReadFile(moved[0]); !bytes.Equal(kept, b) {
				t.Fatal("the salvaged file is not the damaged file, whole")
			}
			s = openDurable(t, logstore.Options{Dir: dir, Sync: sync})
			defer s.Close()
			wantKey(t, s, "k9", []byte("new"))
			wantKey(t, s, "k5", nil)
			wantKey(t, s, "k3", bytes.Repeat([]byte{'d'}, 100))
		})
	}
}

package memstore_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lazuli-storage/lazuli/storage"
	"github.com/lazuli-storage/lazuli/storage/memstore"
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
	ents, err := os.ReadDir(filepath.Join(dir, memstore.LogDir))
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
	s := openDurable(t, memstore.Options{Dir: dir, CompactBytes: 8 << 10})
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
	s = openDurable(t, memstore.Options{Dir: dir, CompactBytes: 8 << 10})
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
	s := openDurable(t, memstore.Options{Dir: dir})
	for i := range 100 {
		setKey(t, s, fmt.Sprintf("k%03d", i), []byte(fmt.Sprintf("v%d", i)))
	}
	setKey(t, s, "last", bytes.Repeat([]byte("z"), 1000))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	files := logFiles(t, dir)
	path := filepath.Join(dir, memstore.LogDir, files[len(files)-1])
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, st.Size()-500); err != nil {
		t.Fatal(err)
	}
	for round := range 2 {
		s = openDurable(t, memstore.Options{Dir: dir})
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
	s := openDurable(t, memstore.Options{Dir: dir, CompactBytes: 4 << 10})
	for i := range 500 {
		setKey(t, s, fmt.Sprintf("k%d", i%5), bytes.Repeat([]byte{byte(i)}, 100))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	var snap string
	for _, f := range logFiles(t, dir) {
		if strings.HasSuffix(f, ".snap") {
			snap = filepath.Join(dir, memstore.LogDir, f)
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
	if s, err := memstore.Open(memstore.Options{Dir: dir}); err == nil {
		s.Close()
		t.Fatal("Open accepted a damaged snapshot")
	}
}

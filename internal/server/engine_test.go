package server

import (
	"context"
	"fmt"
	"testing"

	"github.com/lazuli-storage/lazuli/internal/engine/logstore"
	"github.com/lazuli-storage/lazuli/internal/engine/sqlitestore"
	"github.com/lazuli-storage/lazuli/storage"
)

// TestEngineOfDirectory: a new directory gets the log engine, a directory
// keeps the engine it was created with when none is named, and naming the
// other engine for it is refused rather than starting empty.
func TestEngineOfDirectory(t *testing.T) {
	open := func(dir, kind string) (*Server, error) {
		return New(context.Background(), Config{Location: dir, EngineKind: kind})
	}
	write := func(s *Server, v string) {
		t.Helper()
		err := s.Engine().Update(context.Background(), func(tx storage.Tx) error { return tx.Set([]byte("k"), []byte(v)) })
		if err != nil {
			t.Fatal(err)
		}
	}
	read := func(s *Server) string {
		t.Helper()
		v, err := storage.GetValue(context.Background(), s.Engine(), []byte("k"))
		if err != nil {
			t.Fatal(err)
		}
		return string(v)
	}
	for _, tc := range []struct{ created, other string }{{"", EngineSQLite}, {EngineSQLite, EngineLog}} {
		t.Run(fmt.Sprintf("created=%q", tc.created), func(t *testing.T) {
			dir := t.TempDir()
			s, err := open(dir, tc.created)
			if err != nil {
				t.Fatal(err)
			}
			wantLog := tc.created == ""
			if _, isLog := s.Engine().(*logstore.Store); isLog != wantLog {
				t.Fatalf("engine %T for EngineKind %q", s.Engine(), tc.created)
			}
			write(s, "first")
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s, err = open(dir, "")
			if err != nil {
				t.Fatal(err)
			}
			_, isSQLite := s.Engine().(*sqlitestore.Store)
			if isSQLite == wantLog || read(s) != "first" {
				t.Fatalf("reopened with engine %T", s.Engine())
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if s, err := open(dir, tc.other); err == nil {
				s.Close()
				t.Fatalf("opened a %q directory with the %s engine", tc.created, tc.other)
			}
		})
	}
	if _, err := open(t.TempDir(), "pebble"); err == nil {
		t.Fatal("accepted an unknown engine")
	}
}

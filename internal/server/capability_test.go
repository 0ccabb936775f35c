package server

import (
	"bytes"
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/lazuli-storage/lazuli/storage"
)

// TestNoEngineTypeAssertions: the server finds what an engine can do
// through the optional interfaces of package storage (Pinger, Shared,
// StatsReporter, Summarizer), never by asserting an engine's concrete
// type, so that a new engine needs no edit here. Naming an engine's
// constructor to open it is fine; asserting its type is not.
func TestNoEngineTypeAssertions(t *testing.T) {
	const engines = "github.com/lazuli-storage/lazuli/internal/engine/"
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		engine := map[string]bool{} // local names of engine packages
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if !strings.HasPrefix(p, engines) {
				continue
			}
			name := p[strings.LastIndex(p, "/")+1:]
			if imp.Name != nil {
				name = imp.Name.Name
			}
			engine[name] = true
		}
		ast.Inspect(f, func(n ast.Node) bool {
			var typ ast.Expr
			switch n := n.(type) {
			case *ast.TypeAssertExpr:
				typ = n.Type
			case *ast.CaseClause:
				for _, e := range n.List {
					ast.Inspect(e, func(m ast.Node) bool {
						if sel, ok := m.(*ast.SelectorExpr); ok {
							if id, ok := sel.X.(*ast.Ident); ok && engine[id.Name] {
								t.Errorf("%s: type switch on %s.%s; use an optional interface of package storage", path, id.Name, sel.Sel.Name)
							}
						}
						return true
					})
				}
				return true
			default:
				return true
			}
			if typ == nil {
				return true
			}
			ast.Inspect(typ, func(m ast.Node) bool {
				if sel, ok := m.(*ast.SelectorExpr); ok {
					if id, ok := sel.X.(*ast.Ident); ok && engine[id.Name] {
						t.Errorf("%s: asserts the engine is a %s.%s; use an optional interface of package storage", path, id.Name, sel.Sel.Name)
					}
				}
				return true
			})
			return true
		})
	}
}

// syncBuffer is a log destination safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestEngineSummaryLoggedAtClose: the log engine's group-commit figures
// reach the log when the server stops, found through storage.Summarizer.
func TestEngineSummaryLoggedAtClose(t *testing.T) {
	var out syncBuffer
	s, err := New(context.Background(), Config{Location: t.TempDir(), Sync: true, Log: slog.New(slog.NewTextHandler(&out, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Engine().(storage.Summarizer); !ok {
		t.Fatalf("the log engine %T is no storage.Summarizer", s.Engine())
	}
	for i := range 3 {
		err := s.Engine().Update(context.Background(), func(tx storage.Tx) error { return tx.Set([]byte{'k', byte(i)}, []byte("v")) })
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	log := out.String()
	for _, want := range []string{`msg="log group commit"`, "fsyncs=", "updates=", "updates_per_fsync=", "mean_fsync=", "max_fsync="} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %s:\n%s", want, log)
		}
	}
}

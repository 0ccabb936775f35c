package server

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/auth"
	"github.com/lazuli-storage/lazuli/internal/smb/smbtest"
)

// TestOneServiceOfEachKind: the domain services are built in one place,
// the composition root, once each. A protocol layer (HTTP, SMB, console,
// import) that built its own would keep rules held in memory, such as the
// ETag clock's, apart from the others'.
func TestOneServiceOfEachKind(t *testing.T) {
	const mod = "github.com/lazuli-storage/lazuli/internal/"
	domains := map[string]bool{mod + "blob": true, mod + "file": true, mod + "queue": true, mod + "table": true}
	calls := map[string][]string{} // domain package -> where its New is called
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "conformance" || d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		names := map[string]string{} // local name -> domain import path
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if !domains[p] {
				continue
			}
			name := p[strings.LastIndex(p, "/")+1:]
			if imp.Name != nil {
				name = imp.Name.Name
			}
			names[name] = p
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "New" {
				return true
			}
			if id, ok := sel.X.(*ast.Ident); ok && names[id.Name] != "" {
				calls[names[id.Name]] = append(calls[names[id.Name]], filepath.ToSlash(path))
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for p := range domains {
		if got := calls[p]; len(got) != 1 || !strings.HasSuffix(got[0], "internal/server/services.go") {
			t.Errorf("%s.New is called from %v; want once, from internal/server/services.go", p, got)
		}
	}

	s, err := New(context.Background(), Config{InMemory: true, BlobAddr: "127.0.0.1:0", FileAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if sv := s.Services(); sv.Blob == nil || sv.Queue == nil || sv.Table == nil || sv.File == nil {
		t.Fatalf("Services() = %+v; want all four", sv)
	}
}

// TestETagNeverReusedAcrossRESTAndSMB: a file deleted and created again,
// alternately through the File REST port and SMB, never gets an ETag it
// had before, even with a clock that stands still: both protocols write
// through one File service and so one ETag clock. With a service per
// protocol, each clock counted up from the same instant on its own.
func TestETagNeverReusedAcrossRESTAndSMB(t *testing.T) {
	frozen := time.Now().UTC().Truncate(time.Second)
	s, err := New(context.Background(), Config{InMemory: true, FileAddr: "127.0.0.1:0", SMBAddr: "127.0.0.1:0",
		Now: func() time.Time { return frozen }})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if r := signedDo(t, s, auth.File, "PUT", "etags?restype=share", nil, nil); r.StatusCode != 201 {
		t.Fatalf("Create Share: %d", r.StatusCode)
	}
	c, err := smbtest.Dial(s.SMBAddr(), auth.DevAccount, auth.DevKey)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.TreeConnect("etags"); err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	note := func(etag, how string) {
		t.Helper()
		if etag == "" {
			t.Fatalf("%s: no ETag", how)
		}
		if prev, ok := seen[etag]; ok {
			t.Fatalf("%s got ETag %s, which %s had", how, etag, prev)
		}
		seen[etag] = how
	}
	const rw, shareAll, create, nonDir = 0x1 | 0x2, 0x7, 2, 0x40
	for i := range 5 {
		r := signedDo(t, s, auth.File, "PUT", "etags/f", nil, map[string]string{"x-ms-type": "file", "x-ms-content-length": "0"})
		if r.StatusCode != 201 {
			t.Fatalf("Create File: %d", r.StatusCode)
		}
		note(r.Header.Get("ETag"), "REST create "+strconv.Itoa(i))
		if r := signedDo(t, s, auth.File, "DELETE", "etags/f", nil, nil); r.StatusCode != 202 {
			t.Fatalf("Delete File: %d", r.StatusCode)
		}
		fid, st := c.Create("f", rw, shareAll, create, nonDir)
		if st != 0 {
			t.Fatalf("SMB create: %#x", st)
		}
		if st := c.CloseFile(fid); st != 0 {
			t.Fatalf("SMB close: %#x", st)
		}
		r = signedDo(t, s, auth.File, "HEAD", "etags/f", nil, nil)
		if r.StatusCode != 200 {
			t.Fatalf("Get File Properties: %d", r.StatusCode)
		}
		note(r.Header.Get("ETag"), "SMB create "+strconv.Itoa(i))
		if r := signedDo(t, s, auth.File, "DELETE", "etags/f", nil, nil); r.StatusCode != 202 {
			t.Fatalf("Delete File: %d", r.StatusCode)
		}
	}
}

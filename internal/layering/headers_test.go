package layering

import (
	"go/scanner"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// headerLiterals returns, for each non-test Go file of dir, the string
// literals that name a REST header of Azure ("x-ms-..."). Comments may
// name the header that carries a field, for the reader; what a domain
// emits (error details, messages) names the domain's concept, and the
// REST layer names the header (azerr.Input).
func headerLiterals(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var bad []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		fset := token.NewFileSet()
		var s scanner.Scanner
		s.Init(fset.AddFile(f, -1, len(src)), src, nil, 0)
		for {
			pos, tok, lit := s.Scan()
			if tok == token.EOF {
				break
			}
			if (tok == token.STRING || tok == token.CHAR) && strings.Contains(strings.ToLower(lit), "x-ms-") {
				bad = append(bad, fset.Position(pos).String()+": "+lit)
			}
		}
	}
	return bad
}

// Domain packages name no REST header in what they emit.
func TestDomainsNameNoHeaders(t *testing.T) {
	root := filepath.Join("..", "..")
	n := 0
	for _, d := range append([]string{"internal/content"}, domains...) {
		dir := filepath.Join(root, filepath.FromSlash(d))
		if _, err := os.Stat(dir); err != nil {
			continue // a domain not written yet
		}
		n++
		for _, b := range headerLiterals(t, dir) {
			t.Errorf("%s names a REST header; refuse the value with azerr.InvalidValue and name the header in the HTTP layer", b)
		}
	}
	if n < 4 {
		t.Fatalf("found %d domain packages; is the module root two levels up?", n)
	}
}

// The scan finds a header name in a string literal, in any case, and not
// in a comment or a test file.
func TestHeaderScanCatchesLiterals(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.go", "package a\n\n// Quota is x-ms-share-quota.\nvar q = `X-Ms-Share-Quota`\n")
	write("b.go", "package a\n\n// Size is x-ms-content-length.\nvar s = \"size\"\n")
	write("a_test.go", "package a\n\nvar h = \"x-ms-version\"\n")
	bad := headerLiterals(t, dir)
	if len(bad) != 1 || !strings.Contains(bad[0], "a.go:4") {
		t.Fatalf("got %q, want one literal in a.go line 4", bad)
	}
}

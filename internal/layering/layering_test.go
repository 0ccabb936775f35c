package layering

import (
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/lazuli-storage/lazuli/"

// Layers, bottom up: a package may import its own layer and those below,
// never one above. Every package of the module is in exactly one layer,
// so a new package must be placed here (the test names it otherwise).
var layers = []struct {
	name string
	pkgs []string
}{
	{"contract", []string{"storage"}},
	{"leaf", leaves},
	{"core", []string{"internal/engine/...", "storage/storagetest", "internal/content", "internal/cluster"}},
	{"domain", append([]string{"internal/smb", "internal/smb/smbtest"}, domains...)},
	{"protocol", []string{"internal/httpx", "internal/auth", "internal/blobhttp", "internal/queuehttp", "internal/tablehttp",
		"internal/filehttp", "internal/dfshttp", "internal/smbfile", "internal/azimport", "internal/admin", "internal/console"}},
	{"root", []string{"internal/server"}},
	{"main", []string{"emulator", "cmd/...", "internal/layering"}},
}

// domains are the Azure services' domain packages.
var domains = []string{"internal/blob", "internal/file", "internal/queue", "internal/table", "internal/dfs"}

// leaves import only the standard library, the storage contract and other
// leaves.
var leaves = []string{"internal/azerr", "internal/conditional", "internal/lease", "internal/keyenc", "internal/table/odata",
	"internal/auth/sharedkey", "internal/auth/sas", "internal/auth/bearer", "internal/smb/wire", "internal/smb/crypt",
	"internal/smb/ntlm", "internal/guid", "internal/redact", "internal/keycache", "internal/md5lanes", "internal/sddl",
	"internal/worker", "internal/tlscert", "internal/h1", "internal/acl", "internal/cors", "internal/svcprops", "internal/faults"}

// match reports whether pkg is pattern or, for "x/...", under x.
func match(pattern, pkg string) bool {
	if p, ok := strings.CutSuffix(pattern, "/..."); ok {
		return pkg == p || strings.HasPrefix(pkg, p+"/")
	}
	return pkg == pattern
}

func matchAny(patterns []string, pkg string) bool {
	for _, p := range patterns {
		if match(p, pkg) {
			return true
		}
	}
	return false
}

func layerOf(pkg string) int {
	for i, l := range layers {
		if matchAny(l.pkgs, pkg) {
			return i
		}
	}
	return -1
}

// check returns the broken rules of graph, which maps each package of the
// module (relative to it) to its imports (the module's relative, others
// as written).
func check(graph map[string][]string) []string {
	var bad []string
	for pkg, imports := range graph {
		layer := layerOf(pkg)
		if layer < 0 {
			bad = append(bad, pkg+": in no layer; place it in layering_test.go")
			continue
		}
		for _, imp := range imports {
			_, own := graph[imp]
			if !own {
				if matchAny(domains, pkg) && (imp == "net/http" || strings.HasPrefix(imp, "net/http/")) {
					bad = append(bad, pkg+": a domain package imports "+imp)
				}
				continue
			}
			if l := layerOf(imp); l > layer {
				bad = append(bad, pkg+" ("+layers[layer].name+") imports "+imp+" ("+layers[max(l, 0)].name+"), a layer above")
			}
			if matchAny(domains, pkg) && matchAny(domains, imp) {
				bad = append(bad, pkg+": a domain imports another, "+imp+" (what they share goes to internal/content)")
			}
			if matchAny(leaves, pkg) && imp != "storage" && !matchAny(leaves, imp) {
				bad = append(bad, pkg+": a leaf imports "+imp)
			}
			if match("internal/smb/...", pkg) && !match("internal/smb/...", imp) && imp != "internal/sddl" {
				bad = append(bad, pkg+": the SMB server imports "+imp+"; it knows nothing of Azure")
			}
			if pkg == "internal/cluster" && imp != "storage" && imp != "internal/keyenc" {
				bad = append(bad, pkg+" imports "+imp+"; what instances agree on knows nothing of Azure")
			}
		}
	}
	sort.Strings(bad)
	return bad
}

// load reads the import graph of the module rooted at root, from the
// non-test Go files of each directory (as built on this platform).
func load(t *testing.T, root string) map[string][]string {
	t.Helper()
	graph := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata") {
			return filepath.SkipDir
		}
		if path != root {
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir // another module (conformance)
			}
		}
		p, err := build.Default.ImportDir(path, 0)
		if _, none := err.(*build.NoGoError); none {
			return nil
		}
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		var imports []string
		for _, imp := range p.Imports {
			imports = append(imports, strings.TrimPrefix(imp, module))
		}
		graph[rel] = imports
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return graph
}

func TestLayering(t *testing.T) {
	graph := load(t, filepath.Join("..", ".."))
	if len(graph) < 30 {
		t.Fatalf("read %d packages; is the module root two levels up?", len(graph))
	}
	for _, b := range check(graph) {
		t.Error(b)
	}
}

// The checker finds each kind of violation in a graph that breaks one rule
// at a time, so a passing TestLayering means something.
func TestCheckerCatchesViolations(t *testing.T) {
	base := map[string][]string{
		"storage": {"errors"}, "internal/azerr": {"net/http", "storage"}, "internal/lease": {"internal/azerr"},
		"internal/blob": {"internal/azerr", "storage"}, "internal/queue": {"storage"}, "internal/smb": {"internal/smb/wire"},
		"internal/smb/wire": nil, "internal/httpx": {"net/http", "internal/azerr"}, "internal/blobhttp": {"internal/httpx", "internal/blob"},
		"internal/server": {"internal/blobhttp"}, "cmd/lazuli": {"internal/server"},
		"internal/cluster": {"storage", "internal/keyenc"}, "internal/keyenc": nil,
	}
	if bad := check(base); len(bad) != 0 {
		t.Fatalf("clean graph reported: %v", bad)
	}
	for _, c := range []struct{ pkg, imp, want string }{
		{"internal/blob", "net/http", "a domain package imports net/http"},
		{"internal/blob", "net/http/httptest", "a domain package imports net/http/httptest"},
		{"internal/blob", "internal/queue", "a domain imports another"},
		{"internal/lease", "internal/blob", "a leaf imports internal/blob"},
		{"internal/blob", "internal/httpx", "a layer above"},
		{"internal/blobhttp", "internal/server", "a layer above"},
		{"internal/smb", "internal/azerr", "knows nothing of Azure"},
		{"internal/cluster", "internal/azerr", "knows nothing of Azure"},
		{"internal/newthing", "storage", "in no layer"},
	} {
		g := map[string][]string{}
		for k, v := range base {
			g[k] = append([]string(nil), v...)
		}
		g[c.pkg] = append(g[c.pkg], c.imp)
		bad := check(g)
		if len(bad) == 0 || !strings.Contains(strings.Join(bad, "\n"), c.want) {
			t.Errorf("%s importing %s: got %q, want a violation with %q", c.pkg, c.imp, bad, c.want)
		}
	}
}

// The loader reads imports from source: a domain file importing net/http,
// written to a module on disk, is caught end to end.
func TestLoaderSeesSourceImports(t *testing.T) {
	root := t.TempDir()
	write := func(rel, src string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module github.com/lazuli-storage/lazuli\n")
	write("storage/s.go", "package storage\n")
	write("internal/queue/q.go", "package queue\n\nimport (\n\t_ \"net/http\"\n\n\t_ \"github.com/lazuli-storage/lazuli/storage\"\n)\n")
	write("internal/queue/q_test.go", "package queue\n\nimport _ \"github.com/lazuli-storage/lazuli/internal/blob\"\n")
	bad := check(load(t, root))
	if len(bad) != 1 || !strings.Contains(bad[0], "internal/queue: a domain package imports net/http") {
		t.Fatalf("got %q", bad)
	}
}

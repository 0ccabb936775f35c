package azerr

import (
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"strconv"
	"testing"
)

// TestCatalogComplete checks that every code has a name, a status that is
// an HTTP error status, and a message, and that no two codes share a name.
func TestCatalogComplete(t *testing.T) {
	seen := map[string]Code{}
	for c := Code(1); int(c) < len(catalog); c++ {
		d := catalog[c]
		if d.name == "" {
			t.Errorf("code %d has no catalog entry", c)
			continue
		}
		if d.status < 300 || d.status > 599 || http.StatusText(d.status) == "" {
			t.Errorf("%s: status %d", d.name, d.status)
		}
		if d.message == "" {
			t.Errorf("%s: no message", d.name)
		}
		if prev, ok := seen[d.name]; ok {
			t.Errorf("%s listed twice (codes %d and %d)", d.name, prev, c)
		}
		seen[d.name] = c
		if c.String() != d.name || c.Status() != d.status || c.Message() != d.message {
			t.Errorf("%s: accessors disagree with the catalog", d.name)
		}
		e := New(c)
		if e.Code != c || e.Status != d.status || e.Message != d.message {
			t.Errorf("New(%s) = %+v", d.name, e)
		}
	}
	if len(seen) < 100 {
		t.Fatalf("only %d codes", len(seen))
	}
}

// TestCatalogNamesMatchConstants reads catalog.go and checks that each
// entry is keyed by the constant of the same name, so that the name on the
// wire is always the identifier written in the code.
func TestCatalogNamesMatchConstants(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "catalog.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	entries := 0
	ast.Inspect(f, func(n ast.Node) bool {
		kv, ok := n.(*ast.KeyValueExpr)
		if !ok {
			return true
		}
		key, ok1 := kv.Key.(*ast.Ident)
		lit, ok2 := kv.Value.(*ast.CompositeLit)
		if !ok1 || !ok2 || len(lit.Elts) != 3 {
			t.Errorf("catalog entry of unexpected shape at %v", kv.Pos())
			return false
		}
		name, ok := lit.Elts[0].(*ast.BasicLit)
		if !ok {
			t.Errorf("%s: name is not a literal", key.Name)
			return false
		}
		if s, _ := strconv.Unquote(name.Value); s != key.Name {
			t.Errorf("constant %s is named %s on the wire", key.Name, s)
		}
		entries++
		return false
	})
	if entries != len(catalog)-1 {
		t.Errorf("%d keyed entries, catalog has %d codes", entries, len(catalog)-1)
	}
}

// TestUnknownCodeIsInternal checks that a Code outside the catalog renders
// as a 500 InternalError rather than an empty code.
func TestUnknownCodeIsInternal(t *testing.T) {
	for _, c := range []Code{0, Code(len(catalog)), Code(len(catalog) + 100)} {
		if c.String() != "InternalError" || c.Status() != http.StatusInternalServerError {
			t.Errorf("Code(%d) = %s %d", c, c, c.Status())
		}
	}
}

// TestHelpers checks the details of the shared 400 builders.
func TestHelpers(t *testing.T) {
	e := InvalidQuery("comp", "x", "bad")
	if e.Code != InvalidQueryParameterValue || e.Status != 400 || len(e.Details) != 3 || e.Details[2] != (Detail{"Reason", "bad"}) {
		t.Errorf("InvalidQuery = %+v", e)
	}
	if e := MissingHeader("x-ms-version"); e.Code != MissingRequiredHeader || e.Details[0] != (Detail{"HeaderName", "x-ms-version"}) {
		t.Errorf("MissingHeader = %+v", e)
	}
	if e := New(ConditionNotMet).WithStatus(304); e.Status != 304 || New(ConditionNotMet).Status != 412 {
		t.Errorf("WithStatus changed the catalog: %+v", e)
	}
}

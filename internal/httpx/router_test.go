package httpx

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestRouter(t *testing.T) {
	copySource := func(r *http.Request) bool { return r.Header.Get("X-Ms-Copy-Source") != "" }
	rt := NewRouter([]Route[string]{
		On(0, "service", "properties", "GET", nil, "GetProperties"),
		On(0, "*", "list", "GET", nil, "List"),
		On(1, "*", "", "PUT", copySource, "Copy"),
		On(1, "*", "", "PUT", nil, "Put"),
		On(1, "*", "", "GET HEAD", nil, "Get"),
		On(1, "special", "", "GET", nil, "Special"),
		On(2, "*", "*", "POST", nil, "Any"),
	})
	for _, c := range []struct {
		method, copy  string
		level         int
		restype, comp string
		want          string
		otherVerb     bool
	}{
		{"GET", "", 0, "service", "properties", "GetProperties", false},
		{"PUT", "", 0, "service", "properties", "", true},
		{"GET", "", 0, "", "properties", "", false},
		{"GET", "", 0, "service", "list", "List", false},
		{"GET", "", 0, "", "list", "List", false},
		{"DELETE", "", 0, "", "list", "", true},
		{"PUT", "", 1, "", "", "Put", false},
		{"PUT", "src", 1, "", "", "Copy", false},
		{"HEAD", "", 1, "x", "", "Get", false},
		{"GET", "", 1, "special", "", "Special", false},
		{"GET", "", 1, "", "tags", "", false},
		{"DELETE", "", 1, "", "", "", true},
		{"POST", "", 2, "a", "b", "Any", false},
		{"GET", "", 2, "a", "b", "", true},
		{"GET", "", 3, "", "", "", false},
	} {
		r := httptest.NewRequest(c.method, "/", nil)
		if c.copy != "" {
			r.Header.Set("X-Ms-Copy-Source", c.copy)
		}
		op, other := rt.Find(r, c.method, c.level, c.restype, c.comp)
		got := ""
		if op != nil {
			got = *op
		}
		if got != c.want || other != c.otherVerb {
			t.Errorf("%s level %d restype %q comp %q: %q %v, want %q %v", c.method, c.level, c.restype, c.comp, got, other, c.want, c.otherVerb)
		}
	}
}

func TestRouterShadowedRow(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("a shadowed row was accepted")
		}
	}()
	NewRouter([]Route[string]{On(1, "*", "", "PUT", nil, "Put"), On(1, "*", "", "GET PUT", nil, "Never")})
}

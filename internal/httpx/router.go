package httpx

import (
	"fmt"
	"net/http"
	"strings"
)

// Route is one row of a service's operation table: where the request's
// path points (Level, numbered by the service), its restype and comp query
// parameters ("*" matches any value, including none) and its methods
// (space-separated). When, if set, is a further condition on the request
// (a header, say); rows with the same key are tried in table order. Op is
// what the service runs: its operation name, the access it needs and its
// handler.
type Route[Op any] struct {
	Level   int
	Restype string
	Comp    string
	Methods string
	When    func(*http.Request) bool
	Op      Op
}

// Router finds the row of an operation table that a request asks for.
// It is built once and only read afterwards.
type Router[Op any] struct {
	index map[routeKey][]*Route[Op]
	// verbs holds the keys without their method, so that a request for a
	// known resource with a method it lacks can be told apart from an
	// unknown resource.
	verbs map[routeKey]bool
}

type routeKey struct {
	level         int
	restype, comp string
	method        string
}

// NewRouter indexes routes. A row that can never be chosen (it follows a
// row of the same key without When) is a mistake in the table, and
// NewRouter panics on it, so that any test of the service finds it.
func NewRouter[Op any](routes []Route[Op]) *Router[Op] {
	t := &Router[Op]{index: map[routeKey][]*Route[Op]{}, verbs: map[routeKey]bool{}}
	for i := range routes {
		rt := &routes[i]
		for _, m := range strings.Fields(rt.Methods) {
			k := routeKey{rt.Level, rt.Restype, rt.Comp, m}
			if prev := t.index[k]; len(prev) > 0 && prev[len(prev)-1].When == nil {
				panic(fmt.Sprintf("httpx: route %d (level %d, restype %q, comp %q, %s) is shadowed by an earlier one", i, rt.Level, rt.Restype, rt.Comp, m))
			}
			t.index[k] = append(t.index[k], rt)
		}
		t.verbs[routeKey{level: rt.Level, restype: rt.Restype, comp: rt.Comp}] = true
	}
	return t
}

// Find returns the op for a request with method (the request's, or the
// one it asks for with X-HTTP-Method) at level with the given restype and
// comp, trying an exact restype and comp before wildcards. When none
// matches, otherVerb reports whether the resource has operations for
// other methods (Azure's UnsupportedHttpVerb).
func (t *Router[Op]) Find(r *http.Request, method string, level int, restype, comp string) (op *Op, otherVerb bool) {
	for _, k := range [...]routeKey{
		{level, restype, comp, method},
		{level, "*", comp, method},
		{level, restype, "*", method},
		{level, "*", "*", method},
	} {
		for _, rt := range t.index[k] {
			if rt.When == nil || rt.When(r) {
				return &rt.Op, false
			}
		}
	}
	for _, k := range [...]routeKey{{level, restype, comp, ""}, {level, "*", comp, ""}, {level, restype, "*", ""}, {level, "*", "*", ""}} {
		if t.verbs[k] {
			return nil, true
		}
	}
	return nil, false
}

// On is a Route; it keeps operation tables to one short line per row.
func On[Op any](level int, restype, comp, methods string, when func(*http.Request) bool, op Op) Route[Op] {
	return Route[Op]{Level: level, Restype: restype, Comp: comp, Methods: methods, When: when, Op: op}
}

package blobhttp

import (
	"strings"
	"testing"

	"github.com/lazuli-storage/lazuli/internal/engine/memstore"
)

// A value the Blob domain refuses is answered with the header that
// carried it named in the body, as Azure does, though the domain knows
// the value only by what it means.
func TestDomainRefusalNamesHeader(t *testing.T) {
	h := handlerFor(memstore.New())
	do(t, h, "PUT", "cc1?restype=container", nil, nil)
	do(t, h, "PUT", "cc1/b", map[string]string{"x-ms-blob-type": "BlockBlob"}, []byte("x"))
	do(t, h, "PUT", "cc1/p", map[string]string{"x-ms-blob-type": "PageBlob", "x-ms-blob-content-length": "1024"}, nil)
	snap := do(t, h, "PUT", "cc1/b?comp=snapshot", nil, nil).Header().Get("x-ms-snapshot")
	for _, c := range []struct {
		method, path string
		hdr          map[string]string
		name, value  string
	}{
		{"PUT", "cc1/p?comp=properties", map[string]string{"x-ms-blob-content-length": "1000"}, "x-ms-blob-content-length", "1000"},
		{"DELETE", "cc1/b?snapshot=" + snap, map[string]string{"x-ms-delete-snapshots": "include"}, "x-ms-delete-snapshots", "include"},
		{"GET", "cc1/b", map[string]string{"x-ms-if-tags": "a="}, "x-ms-if-tags", "a="},
	} {
		w := do(t, h, c.method, c.path, c.hdr, nil)
		want := "<HeaderName>" + c.name + "</HeaderName><HeaderValue>" + c.value + "</HeaderValue></Error>"
		if w.Code != 400 || w.Header().Get("x-ms-error-code") != "InvalidHeaderValue" || !strings.HasSuffix(w.Body.String(), want) {
			t.Errorf("%s %s %v: %d %s\n%s\nwant the body to end %s", c.method, c.path, c.hdr, w.Code, w.Header().Get("x-ms-error-code"), w.Body, want)
		}
	}
}

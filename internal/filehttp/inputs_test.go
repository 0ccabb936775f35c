package filehttp

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/auth"
	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/blob"
	"github.com/lazuli-storage/lazuli/internal/engine/memstore"
	"github.com/lazuli-storage/lazuli/internal/file"
	"github.com/lazuli-storage/lazuli/internal/guid"
	"github.com/lazuli-storage/lazuli/internal/httpx"
)

// A value the File domain refuses is answered with the header that
// carried it named in the body, as Azure does, though the domain knows
// the value only by what it means: over the wire where REST lets the
// value through to the domain, and for every value the domain names.
func TestDomainRefusalNamesHeader(t *testing.T) {
	eng := memstore.New()
	t.Cleanup(func() { eng.Close() })
	d := httpx.Deps{Auth: auth.New(auth.Config{}), Now: time.Now,
		BaseURL: func(a string) string { return "http://127.0.0.1:10000/" + a }}
	h := httpx.Wrap(auth.File, New(d, file.New(eng, time.Now, guid.NewString), blob.New(eng, time.Now, guid.NewString)),
		httpx.Options{Silent: true})
	do := func(method, path string, hdr map[string]string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, "http://127.0.0.1:10000/devstoreaccount1/"+path, nil)
		for k, v := range hdr {
			r.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	if w := do("PUT", "share1?restype=share", nil); w.Code != 201 {
		t.Fatalf("create share: %d %s", w.Code, w.Body)
	}
	w := do("PUT", "share1?comp=forceclosehandles", map[string]string{"x-ms-handle-id": "abc"})
	want := "<HeaderName>x-ms-handle-id</HeaderName><HeaderValue>abc</HeaderValue></Error>"
	if w.Code != 400 || w.Header().Get("x-ms-error-code") != "InvalidHeaderValue" || !strings.HasSuffix(w.Body.String(), want) {
		t.Errorf("force close of handle abc: %d %s\n%s\nwant the body to end %s", w.Code, w.Header().Get("x-ms-error-code"), w.Body, want)
	}
	for in, name := range map[azerr.Input]string{file.InputFileSize: "x-ms-content-length", file.InputShareQuota: "x-ms-share-quota",
		file.InputHandleID: "x-ms-handle-id"} {
		e, _ := azerr.As(azerr.NameInput(azerr.InvalidValue(in, "v"), inputHeaders))
		if len(e.Details) != 2 || e.Details[0] != (azerr.Detail{Name: "HeaderName", Value: name}) || e.Details[1].Value != "v" {
			t.Errorf("%s: details %v, want HeaderName %s then HeaderValue v", in, e.Details, name)
		}
	}
}

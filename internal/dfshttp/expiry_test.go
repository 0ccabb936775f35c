package dfshttp

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/auth"
	"github.com/lazuli-storage/lazuli/internal/blob"
	"github.com/lazuli-storage/lazuli/internal/blobhttp"
	"github.com/lazuli-storage/lazuli/internal/engine/memstore"
	"github.com/lazuli-storage/lazuli/internal/guid"
	"github.com/lazuli-storage/lazuli/internal/httpx"
)

// newPortAt is newPort on a clock the test moves.
func newPortAt(clock *atomic.Int64) http.Handler {
	now := func() time.Time { return time.Unix(0, clock.Load()).UTC() }
	hns := func(a string) bool { return a == "devstoreaccount1" }
	d := httpx.Deps{Auth: auth.New(auth.Config{Now: now}), Now: now,
		BaseURL: func(a string) string { return "http://127.0.0.1:10000/" + a }}
	svc := blob.New(memstore.New(), now, guid.NewString)
	svc.UseHierarchicalNamespace(hns)
	return httpx.Wrap(auth.Blob, New(d, svc, blobhttp.New(d, svc), hns), httpx.Options{Silent: true})
}

// Path - Create of a file takes x-ms-expiry-option and x-ms-expiry-time
// as Set Blob Expiry does: the file reads as absent from that time.
func TestCreatePathExpiry(t *testing.T) {
	var clock atomic.Int64
	start := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	clock.Store(start.UnixNano())
	h := newPortAt(&clock)
	want(t, send(t, h, "PUT", acct+"/fsys?resource=filesystem", nil, ""), 201, "")

	rel := map[string]string{"x-ms-expiry-option": "RelativeToNow", "x-ms-expiry-time": "60000"}
	want(t, send(t, h, "PUT", acct+"/fsys/d/rel?resource=file", rel, ""), 201, "")
	abs := map[string]string{"x-ms-expiry-option": "Absolute", "x-ms-expiry-time": start.Add(2 * time.Hour).Format(http.TimeFormat)}
	want(t, send(t, h, "PUT", acct+"/fsys/abs?resource=file", abs, ""), 201, "")
	never := map[string]string{"x-ms-expiry-option": "NeverExpire"}
	want(t, send(t, h, "PUT", acct+"/fsys/never?resource=file", never, ""), 201, "")
	creation := map[string]string{"x-ms-expiry-option": "RelativeToCreation", "x-ms-expiry-time": "1000"}
	want(t, send(t, h, "PUT", acct+"/fsys/creation?resource=file", creation, ""), 201, "")

	for name, at := range map[string]string{
		"d/rel":    start.Add(time.Minute).Format(http.TimeFormat),
		"abs":      start.Add(2 * time.Hour).Format(http.TimeFormat),
		"never":    "",
		"creation": start.Add(time.Second).Format(http.TimeFormat),
	} {
		w := send(t, h, "HEAD", acct+"/fsys/"+name, nil, "")
		if w.Code != 200 || w.Header().Get("x-ms-expiry-time") != at {
			t.Fatalf("%s: %d expiry %q, want %q", name, w.Code, w.Header().Get("x-ms-expiry-time"), at)
		}
	}

	clock.Store(start.Add(time.Minute).UnixNano())
	want(t, send(t, h, "HEAD", acct+"/fsys/d/rel", nil, ""), 404, "BlobNotFound")
	want(t, send(t, h, "HEAD", acct+"/fsys/d/rel?action=getStatus", nil, ""), 404, "PathNotFound")
	want(t, send(t, h, "HEAD", acct+"/fsys/abs", nil, ""), 200, "")
	w := send(t, h, "GET", acct+"/fsys?resource=filesystem&recursive=true", nil, "")
	if w.Code != 200 || strings.Contains(w.Body.String(), `"d/rel"`) || !strings.Contains(w.Body.String(), `"abs"`) {
		t.Fatalf("list after expiry: %d %s", w.Code, w.Body.String())
	}
	// The name is free for a new file, which does not inherit the expiry.
	want(t, send(t, h, "PUT", acct+"/fsys/d/rel?resource=file", nil, ""), 201, "")
	if w := send(t, h, "HEAD", acct+"/fsys/d/rel", nil, ""); w.Code != 200 || w.Header().Get("x-ms-expiry-time") != "" {
		t.Fatalf("recreated: %d %v", w.Code, w.Header())
	}
	clock.Store(start.Add(3 * time.Hour).UnixNano())
	want(t, send(t, h, "HEAD", acct+"/fsys/abs", nil, ""), 404, "BlobNotFound")
	want(t, send(t, h, "HEAD", acct+"/fsys/never", nil, ""), 200, "")

	// Bad input: Azure's 400s, and nothing created.
	for _, c := range []struct {
		hdr  map[string]string
		code string
	}{
		{map[string]string{"x-ms-expiry-option": "Sometime"}, "InvalidHeaderValue"},
		{map[string]string{"x-ms-expiry-option": "RelativeToNow"}, "MissingRequiredHeader"},
		{map[string]string{"x-ms-expiry-option": "RelativeToNow", "x-ms-expiry-time": "-5"}, "InvalidHeaderValue"},
		{map[string]string{"x-ms-expiry-option": "RelativeToNow", "x-ms-expiry-time": "soon"}, "InvalidHeaderValue"},
		{map[string]string{"x-ms-expiry-option": "Absolute", "x-ms-expiry-time": start.Format(http.TimeFormat)}, "InvalidHeaderValue"},
		{map[string]string{"x-ms-expiry-option": "NeverExpire", "x-ms-expiry-time": "5"}, "InvalidHeaderValue"},
		{map[string]string{"x-ms-expiry-time": "5"}, "MissingRequiredHeader"},
	} {
		want(t, send(t, h, "PUT", acct+"/fsys/bad?resource=file", c.hdr, ""), 400, c.code)
	}
	want(t, send(t, h, "HEAD", acct+"/fsys/bad", nil, ""), 404, "BlobNotFound")
	// A directory takes no expiry (lazuli's choice: Azure documents the
	// headers for files only).
	want(t, send(t, h, "PUT", acct+"/fsys/dir?resource=directory", rel, ""), 400, "InvalidHeaderValue")
	want(t, send(t, h, "HEAD", acct+"/fsys/dir?action=getStatus", nil, ""), 404, "PathNotFound")
}

package blob_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/service"

	"github.com/lazuli-storage/lazuli/conformance/harness"
	"github.com/lazuli-storage/lazuli/emulator"
)

// withWeb starts lazuli with its static website endpoint.
func withWeb(o *emulator.Options) { o.Web = true }

// webGet fetches path from the static website and returns its status,
// headers and body.
func webGet(t *testing.T, method, url string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(harness.Ctx(t), method, url, nil)
	must(t, err)
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	must(t, err)
	return resp.StatusCode, resp.Header, string(b)
}

// TestStaticWebsite sets the StaticWebsite service property through
// azblob, reads it back, and reads the $web container anonymously from the
// web endpoint: files with their Content-Type, the index document of the
// root and of directories (with or without the trailing slash), the
// site's 404 page with status 404, Azure's own 404 page without one, and
// WebsiteDisabled while the site is off. The endpoint is read-only.
func TestStaticWebsite(t *testing.T) {
	harness.ForEachWith(t, withWeb, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		c := client(t, tg)
		sc := c.ServiceClient()
		web := ""
		if tg.Emulator != nil {
			web = tg.Emulator.WebURL()
		}
		if web != "" {
			// Off by default: the endpoint answers WebsiteDisabled.
			st, hd, b := webGet(t, http.MethodGet, web+"/index.html")
			if st != http.StatusNotFound || hd.Get("x-ms-error-code") != "WebsiteDisabled" || !strings.Contains(b, "WebsiteDisabled") {
				t.Fatalf("disabled site: %d %q %q", st, hd.Get("x-ms-error-code"), b)
			}
		}
		p, err := sc.GetProperties(ctx, nil)
		must(t, err)
		if p.StaticWebsite == nil || p.StaticWebsite.Enabled == nil || *p.StaticWebsite.Enabled {
			t.Fatalf("default StaticWebsite %+v", p.StaticWebsite)
		}
		_, err = sc.SetProperties(ctx, &service.SetPropertiesOptions{StaticWebsite: &service.StaticWebsite{
			Enabled: ptr(true), IndexDocument: ptr("index.html"), ErrorDocument404Path: ptr("errors/404.html")}})
		must(t, err)
		p, err = sc.GetProperties(ctx, nil)
		must(t, err)
		sw := p.StaticWebsite
		if sw == nil || sw.Enabled == nil || !*sw.Enabled || sw.IndexDocument == nil || *sw.IndexDocument != "index.html" ||
			sw.ErrorDocument404Path == nil || *sw.ErrorDocument404Path != "errors/404.html" {
			t.Fatalf("StaticWebsite after Set %+v", sw)
		}
		if web == "" {
			return
		}
		_, err = c.CreateContainer(ctx, "$web", nil)
		must(t, err)
		wc := sc.NewContainerClient("$web")
		for name, f := range map[string][2]string{
			"index.html":      {"text/html", "root index"},
			"docs/index.html": {"text/html", "docs index"},
			"app.js":          {"application/javascript", "js"},
			"errors/404.html": {"text/html; charset=utf-8", "custom 404"},
		} {
			_, err := wc.NewBlockBlobClient(name).UploadBuffer(ctx, []byte(f[1]),
				&blockblob.UploadBufferOptions{HTTPHeaders: &blob.HTTPHeaders{BlobContentType: ptr(f[0])}})
			must(t, err)
		}
		for _, tc := range []struct{ path, ct, body string }{
			{"/", "text/html", "root index"},
			{"", "text/html", "root index"},
			{"/index.html", "text/html", "root index"},
			{"/docs/", "text/html", "docs index"},
			{"/docs", "text/html", "docs index"},
			{"/app.js", "application/javascript", "js"},
		} {
			st, hd, b := webGet(t, http.MethodGet, web+tc.path)
			if st != http.StatusOK || hd.Get("Content-Type") != tc.ct || b != tc.body {
				t.Fatalf("GET %q: %d %q %q", tc.path, st, hd.Get("Content-Type"), b)
			}
		}
		st, hd, b := webGet(t, http.MethodHead, web+"/app.js")
		if st != http.StatusOK || hd.Get("Content-Length") != "2" || b != "" {
			t.Fatalf("HEAD: %d %q %q", st, hd.Get("Content-Length"), b)
		}
		// A browser's conditional GET; another account's site is off.
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, web+"/app.js", nil)
		must(t, err)
		req.Header.Set("If-None-Match", hd.Get("ETag"))
		resp, err := http.DefaultClient.Do(req)
		must(t, err)
		resp.Body.Close()
		if hd.Get("ETag") == "" || resp.StatusCode != http.StatusNotModified {
			t.Fatalf("If-None-Match %q: %d", hd.Get("ETag"), resp.StatusCode)
		}
		if st, hd, _ := webGet(t, http.MethodGet, strings.TrimSuffix(web, emulator.Account)+"nosuchaccount/index.html"); st != http.StatusNotFound || hd.Get("x-ms-error-code") != "WebsiteDisabled" {
			t.Fatalf("other account: %d %q", st, hd.Get("x-ms-error-code"))
		}
		st, hd, b = webGet(t, http.MethodGet, web+"/nope.html")
		if st != http.StatusNotFound || hd.Get("Content-Type") != "text/html; charset=utf-8" || b != "custom 404" {
			t.Fatalf("missing with error document: %d %q %q", st, hd.Get("Content-Type"), b)
		}
		for _, m := range []string{http.MethodPut, http.MethodDelete, http.MethodPost} {
			if st, _, _ := webGet(t, m, web+"/index.html"); st != http.StatusMethodNotAllowed {
				t.Fatalf("%s: %d", m, st)
			}
		}
		// Without an error document: Azure's own 404 page.
		_, err = sc.SetProperties(ctx, &service.SetPropertiesOptions{StaticWebsite: &service.StaticWebsite{
			Enabled: ptr(true), IndexDocument: ptr("index.html")}})
		must(t, err)
		st, hd, b = webGet(t, http.MethodGet, web+"/nope.html")
		if st != http.StatusNotFound || hd.Get("x-ms-error-code") != "WebContentNotFound" || !strings.Contains(b, "WebContentNotFound") {
			t.Fatalf("missing: %d %q %q", st, hd.Get("x-ms-error-code"), b)
		}
		// DefaultIndexDocumentPath answers every directory with one page.
		_, err = sc.SetProperties(ctx, &service.SetPropertiesOptions{StaticWebsite: &service.StaticWebsite{
			Enabled: ptr(true), DefaultIndexDocumentPath: ptr("index.html")}})
		must(t, err)
		if st, _, b := webGet(t, http.MethodGet, web+"/docs/"); st != http.StatusOK || b != "root index" {
			t.Fatalf("default index path: %d %q", st, b)
		}
		// Turned off again: WebsiteDisabled.
		_, err = sc.SetProperties(ctx, &service.SetPropertiesOptions{StaticWebsite: &service.StaticWebsite{Enabled: ptr(false)}})
		must(t, err)
		if st, hd, _ := webGet(t, http.MethodGet, web+"/index.html"); st != http.StatusNotFound || hd.Get("x-ms-error-code") != "WebsiteDisabled" {
			t.Fatalf("disabled again: %d %q", st, hd.Get("x-ms-error-code"))
		}
	})
}

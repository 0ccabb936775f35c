package blobhttp

import (
	"encoding/base64"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/blob"
	"github.com/lazuli-storage/lazuli/internal/content"
	"github.com/lazuli-storage/lazuli/internal/guid"
	"github.com/lazuli-storage/lazuli/internal/httpx"
)

// WebContainer is the container a static website serves.
const WebContainer = "$web"

// staticWebsite is the StaticWebsite element of the Blob service
// properties.
type staticWebsite struct {
	Enabled                  bool   `xml:"Enabled"`
	IndexDocument            string `xml:"IndexDocument"`
	ErrorDocument404Path     string `xml:"ErrorDocument404Path"`
	DefaultIndexDocumentPath string `xml:"DefaultIndexDocumentPath"`
}

// NewWeb is the static website endpoint: the $web container of each
// account, read anonymously with GET and HEAD at /<account>/<path>, as
// Azure's web endpoint serves it once the StaticWebsite service property
// is enabled. now dates the error pages.
func NewWeb(svc *blob.Service, now func() time.Time) http.Handler {
	return &webHandler{svc: svc, now: now}
}

type webHandler struct {
	svc *blob.Service
	now func() time.Time
}

func (h *webHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	reqID := guid.NewString()
	w.Header().Set("X-Ms-Request-Id", reqID)
	w.Header().Set("X-Ms-Version", "2018-03-28")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		// The web endpoint is read-only.
		h.errorPage(w, r, reqID, http.StatusMethodNotAllowed, "UnsupportedHttpVerb", "The requested operation is not supported.")
		return
	}
	p := r.URL.EscapedPath()
	acct, rest, _ := strings.Cut(strings.TrimPrefix(p, "/"), "/")
	name, err := url.PathUnescape(rest)
	if acct == "" || err != nil {
		h.errorPage(w, r, reqID, http.StatusBadRequest, "InvalidUri", "The requested URI does not represent any resource on the server.")
		return
	}
	site, err := h.site(r, acct)
	if err != nil {
		h.errorPage(w, r, reqID, http.StatusInternalServerError, "InternalError", "The server encountered an internal error.")
		return
	}
	if !site.Enabled {
		h.errorPage(w, r, reqID, http.StatusNotFound, "WebsiteDisabled", "The requested content does not exist.")
		return
	}
	for _, cand := range candidates(site, name) {
		b, err := h.svc.GetBlob(r.Context(), blob.Ref{Account: acct, Container: WebContainer, Name: cand}, blob.Cond{}, "")
		if err == nil {
			h.serve(w, r, b, http.StatusOK)
			return
		}
		if !missing(err) {
			// An archived blob, say: Azure's status and code.
			status, code := http.StatusInternalServerError, "InternalError"
			if e, ok := azerr.As(err); ok {
				status, code = e.Code.Status(), e.Code.String()
			}
			h.errorPage(w, r, reqID, status, code, "The requested content cannot be served.")
			return
		}
	}
	if doc := strings.TrimPrefix(site.ErrorDocument404Path, "/"); doc != "" {
		// The site's own 404 page, answered with 404.
		b, err := h.svc.GetBlob(r.Context(), blob.Ref{Account: acct, Container: WebContainer, Name: doc}, blob.Cond{}, "")
		if err == nil {
			h.serve(w, r, b, http.StatusNotFound)
			return
		}
	}
	h.errorPage(w, r, reqID, http.StatusNotFound, "WebContentNotFound", "The requested content does not exist.")
}

// site reads the account's StaticWebsite setting (disabled before any Set
// Blob Service Properties enables it).
func (h *webHandler) site(r *http.Request, acct string) (staticWebsite, error) {
	var site staticWebsite
	p, err := h.svc.GetServiceProps(r.Context(), acct)
	if err != nil {
		if missing(err) {
			return site, nil
		}
		return site, err
	}
	doc, err := storedServiceProps(p)
	if err != nil {
		return site, err
	}
	for _, e := range doc.Extra {
		if e.XMLName.Local == "StaticWebsite" {
			if err := xml.Unmarshal([]byte("<s>"+e.Inner+"</s>"), &site); err != nil {
				return staticWebsite{}, nil
			}
		}
	}
	return site, nil
}

// candidates are the blobs that may answer a path, in order: the root and
// paths ending in "/" are directories and serve their index document (or
// the site's DefaultIndexDocumentPath); another path is the blob of that
// name, else the index document of the directory of that name.
func candidates(site staticWebsite, name string) []string {
	index := func(dir string) []string {
		if d := strings.TrimPrefix(site.DefaultIndexDocumentPath, "/"); d != "" {
			return []string{d}
		}
		if site.IndexDocument != "" {
			return []string{dir + site.IndexDocument}
		}
		return nil
	}
	if name == "" || strings.HasSuffix(name, "/") {
		return index(name)
	}
	return append([]string{name}, index(name+"/")...)
}

// missing reports whether err says the blob, container or account does
// not exist.
func missing(err error) bool {
	e, ok := azerr.As(err)
	return ok && e.Code.Status() == http.StatusNotFound
}

// serve answers a blob's content with its stored headers; If-None-Match
// and If-Modified-Since answer 304 as browsers expect.
func (h *webHandler) serve(w http.ResponseWriter, r *http.Request, b *blob.Blob, status int) {
	hd := w.Header()
	etag := content.ETagString(b.ETag)
	hd.Set("ETag", etag)
	hd.Set("Last-Modified", httpx.FormatHTTPTime(b.Modified))
	if status == http.StatusOK && notModified(r, etag, b.Modified) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	p := b.Props
	ct := p.ContentType
	if ct == "" {
		ct = "application/octet-stream"
	}
	hd.Set("Content-Type", ct)
	for name, v := range map[string]string{"Content-Encoding": p.ContentEncoding, "Content-Language": p.ContentLanguage,
		"Content-Disposition": p.ContentDisposition, "Cache-Control": p.CacheControl} {
		if v != "" {
			hd.Set(name, v)
		}
	}
	if len(p.ContentMD5) > 0 {
		hd.Set("Content-Md5", base64.StdEncoding.EncodeToString(p.ContentMD5))
	}
	hd.Set("Content-Length", strconv.FormatInt(b.Size, 10))
	w.WriteHeader(status)
	if r.Method == http.MethodHead || b.Size == 0 {
		return
	}
	rc := h.svc.Open(r.Context(), b, 0, b.Size)
	defer rc.Close()
	buf := make([]byte, 64<<10)
	for {
		n, err := rc.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			// A read error mid-body can only cut the response short.
			return
		}
	}
}

// notModified evaluates a conditional GET of the web endpoint.
func notModified(r *http.Request, etag string, modified time.Time) bool {
	if inm := r.Header.Get("If-None-Match"); inm != "" {
		for _, t := range strings.Split(inm, ",") {
			if t = strings.TrimSpace(t); t == "*" || t == etag {
				return true
			}
		}
		return false
	}
	if ims := r.Header.Get("If-Modified-Since"); ims != "" {
		if t, err := http.ParseTime(ims); err == nil && !modified.Truncate(time.Second).After(t) {
			return true
		}
	}
	return false
}

// errorPage is the web endpoint's HTML error page, which names the status
// and error code as Azure's does; the code is also in x-ms-error-code.
func (h *webHandler) errorPage(w http.ResponseWriter, r *http.Request, reqID string, status int, code, msg string) {
	body := fmt.Sprintf("<!DOCTYPE html><html><head><title>%s</title></head><body><h1>%s</h1><p><ul><li>HttpStatusCode: %d</li><li>ErrorCode: %s</li><li>RequestId : %s</li><li>TimeStamp : %s</li></ul></p></body></html>",
		msg, msg, status, code, reqID, h.now().UTC().Format("2006-01-02T15:04:05.0000000Z"))
	hd := w.Header()
	hd.Set("X-Ms-Error-Code", code)
	hd.Set("Content-Type", "text/html")
	hd.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write([]byte(body))
	}
}

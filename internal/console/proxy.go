package console

import (
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/lazuli-storage/lazuli/internal/auth"
	"github.com/lazuli-storage/lazuli/internal/auth/sharedkey"
	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/httpx"
)

// services maps the proxy's first path segment to a service.
var services = []struct {
	name string
	svc  auth.Service
}{{"blob", auth.Blob}, {"queue", auth.Queue}, {"table", auth.Table}, {"file", auth.File}}

// forwarded are the request headers the proxy passes on besides x-ms-*:
// those the REST operations read. Everything else the browser sends
// (cookies, the admin listener's Authorization, Origin, Sec-Fetch-*) stays
// with the console.
var forwarded = []string{
	"Accept", "Content-Type", "Content-Md5", "Content-Encoding", "Content-Language", "Range",
	"If-Match", "If-None-Match", "If-Modified-Since", "If-Unmodified-Since",
	"Dataserviceversion", "Maxdataserviceversion", "Prefer",
}

// methods are the HTTP methods of the REST operations (MERGE is Table's
// Merge Entity).
var methods = map[string]bool{"GET": true, "HEAD": true, "PUT": true, "POST": true, "DELETE": true, "MERGE": true, "PATCH": true}

// proxy forwards /api/{service}/{account}/{path} to the service's handler
// as a request from account, signed with the account's first key.
// rest is the escaped path after "/api/".
func (c *Console) proxy(w http.ResponseWriter, r *http.Request, rest, caller string, restricted bool) {
	// A proxied answer shown as a page (a blob of HTML opened by
	// address) gets an origin of its own and runs nothing.
	w.Header().Set("Content-Security-Policy", "sandbox; default-src 'none'")
	svcName, rest, _ := strings.Cut(rest, "/")
	var handler http.Handler
	var svc auth.Service
	for _, s := range services {
		if s.name == svcName {
			handler, svc = c.cfg.Handlers[s.svc], s.svc
		}
	}
	if handler == nil {
		c.refuse(w, r, azerr.Newf(azerr.ResourceNotFound, "No service %q is served here.", svcName))
		return
	}
	account, rest, _ := strings.Cut(rest, "/")
	if restricted && account != caller {
		// Checked before the registry, so that a restricted caller learns
		// nothing about other accounts.
		c.refuse(w, r, azerr.Newf(azerr.AuthorizationFailure, "This console session acts as account %q only.", caller))
		return
	}
	acc, ok := c.accounts[account]
	if !ok {
		c.refuse(w, r, azerr.Newf(azerr.ResourceNotFound, "No account %q is known.", account))
		return
	}
	if !methods[r.Method] {
		c.refuse(w, r, azerr.New(azerr.UnsupportedHttpVerb))
		return
	}
	// The service sees the path-style URL an SDK would send to its port.
	u, err := url.Parse("/" + account + "/" + rest)
	if err != nil || u.Host != "" || u.Scheme != "" {
		c.refuse(w, r, azerr.New(azerr.InvalidUri))
		return
	}
	u.RawQuery = r.URL.RawQuery
	switch {
	case r.ContentLength > c.cfg.MaxBody:
		c.refuse(w, r, azerr.New(azerr.RequestBodyTooLarge))
		return
	case r.ContentLength < 0:
		// A chunked body has no length to sign and to bound up front.
		c.refuse(w, r, azerr.New(azerr.MissingContentLengthHeader))
		return
	}
	out, err := http.NewRequestWithContext(r.Context(), r.Method, u.String(), nil)
	if err != nil {
		c.refuse(w, r, azerr.New(azerr.InvalidUri))
		return
	}
	out.URL = u
	out.Host = "127.0.0.1"
	out.RemoteAddr = r.RemoteAddr
	out.ContentLength = r.ContentLength
	if r.ContentLength > 0 {
		// The body is what Content-Length says (at most MaxBody, checked
		// above), whatever the reader would give beyond it.
		out.Body = struct {
			io.Reader
			io.Closer
		}{io.LimitReader(r.Body, r.ContentLength), r.Body}
	} else {
		out.Body = http.NoBody
	}
	for k, vs := range r.Header {
		if len(k) > 5 && strings.EqualFold(k[:5], "x-ms-") {
			out.Header[k] = vs
		}
	}
	for _, k := range forwarded {
		if vs, ok := r.Header[k]; ok {
			out.Header[k] = vs
		}
	}
	restoreMetadataNames(out.Header, r.Header.Get(MetaNamesHeader))
	// The date is the clock the services check request dates against
	// (Config.Now), so that requests stay valid.
	out.Header.Set("X-Ms-Date", c.cfg.Now().UTC().Format(http.TimeFormat))
	if out.Header.Get("X-Ms-Version") == "" {
		out.Header.Set("X-Ms-Version", httpx.DefaultVersion)
	}
	if err := sharedkey.Sign(out, acc.Name, acc.Keys[0], svc == auth.Table); err != nil {
		c.refuse(w, r, azerr.New(azerr.InternalError))
		return
	}
	handler.ServeHTTP(w, out)
}

// MetaNamesHeader lists, comma-separated, the metadata names of the
// request's x-ms-meta-* headers as the user typed them. Header names lose
// their case between the page and the proxy (fetch may lowercase them,
// net/http canonicalizes them), while Azure keeps metadata names as sent.
const MetaNamesHeader = "X-Lazuli-Meta-Names"

// restoreMetadataNames re-keys the x-ms-meta-* headers of h under the
// names listed in names.
func restoreMetadataNames(h http.Header, names string) {
	for n := range strings.SplitSeq(names, ",") {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		want := "x-ms-meta-" + n
		for k, vs := range h {
			if k != want && strings.EqualFold(k, want) {
				delete(h, k)
				h[want] = vs
				break
			}
		}
	}
}

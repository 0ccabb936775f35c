package harness

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
)

// InProcess is an http.RoundTripper (and azcore Transporter) that calls a
// handler directly, streaming the response body through a pipe so large
// downloads are not buffered.
type InProcess struct {
	// Handlers maps a request's Host to the handler that serves it.
	Handlers map[string]http.Handler
}

// Do implements policy.Transporter.
func (p *InProcess) Do(req *http.Request) (*http.Response, error) { return p.RoundTrip(req) }

// RoundTrip implements http.RoundTripper.
func (p *InProcess) RoundTrip(req *http.Request) (*http.Response, error) {
	h, ok := p.Handlers[req.URL.Host]
	if !ok {
		return nil, fmt.Errorf("in-process transport: no handler for host %q", req.URL.Host)
	}
	r := req.Clone(req.Context())
	// A network server sees canonical header keys; so does the handler,
	// except for metadata names, whose spelling lazuli recovers from the
	// wire (Azure keeps their case).
	canon := make(http.Header, len(r.Header))
	for k, vs := range r.Header {
		ck := http.CanonicalHeaderKey(k)
		if len(k) > len("x-ms-meta-") && strings.EqualFold(k[:len("x-ms-meta-")], "x-ms-meta-") {
			ck = k
		}
		canon[ck] = append(canon[ck], vs...)
	}
	r.Header = canon
	r.RequestURI = req.URL.RequestURI()
	r.Host = req.URL.Host
	r.RemoteAddr = "127.0.0.1:50000"
	if r.Body == nil {
		r.Body = http.NoBody
	}
	if r.ContentLength == 0 && r.Body != http.NoBody && req.GetBody == nil {
		// Unknown length: the server reads to EOF.
		r.ContentLength = -1
	}
	pr, pw := io.Pipe()
	w := &pipeWriter{header: http.Header{}, pw: pw, ready: make(chan struct{}), req: r}
	go func() {
		defer func() {
			if v := recover(); v != nil {
				pw.CloseWithError(fmt.Errorf("handler panic: %v", v))
				w.signal()
				return
			}
			w.signal()
			pw.Close()
		}()
		h.ServeHTTP(w, r)
	}()
	<-w.ready
	resp := &http.Response{
		Status:        fmt.Sprintf("%d %s", w.status, http.StatusText(w.status)),
		StatusCode:    w.status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        w.sent,
		Body:          pr,
		ContentLength: -1,
		Request:       req,
	}
	if cl := w.sent.Get("Content-Length"); cl != "" {
		fmt.Sscan(cl, &resp.ContentLength)
	}
	if req.Method == http.MethodHead || w.status == http.StatusNoContent || w.status == http.StatusNotModified {
		resp.Body = http.NoBody
		go io.Copy(io.Discard, pr)
	}
	return resp, nil
}

type pipeWriter struct {
	header http.Header
	sent   http.Header
	pw     *io.PipeWriter
	status int
	once   sync.Once
	ready  chan struct{}
	req    *http.Request
	buf    bytes.Buffer
}

func (w *pipeWriter) Header() http.Header { return w.header }

func (w *pipeWriter) WriteHeader(code int) {
	if w.status != 0 {
		return
	}
	w.status = code
	w.sent = canonical(w.header)
	w.signal()
}

func (w *pipeWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	return w.pw.Write(b)
}

func (w *pipeWriter) Flush() {}

func (w *pipeWriter) signal() {
	w.once.Do(func() {
		if w.status == 0 {
			w.status = http.StatusOK
			w.sent = canonical(w.header)
		}
		close(w.ready)
	})
}

// canonical copies h with canonical keys, as an HTTP client sees a
// response after parsing it.
func canonical(h http.Header) http.Header {
	out := make(http.Header, len(h))
	for k, vs := range h {
		ck := http.CanonicalHeaderKey(k)
		out[ck] = append(out[ck], vs...)
	}
	return out
}

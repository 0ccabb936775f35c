package emulator

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"

	"github.com/lazuli-storage/lazuli/internal/httpx"
)

// Transport is an http.RoundTripper that hands each request straight to
// the handler of the service whose Endpoint has the request's host, with
// no socket in between. Plug it into an http.Client, or into an Azure SDK
// client's ClientOptions.Transport (it also has the Do method azcore's
// policy.Transporter asks for).
//
// Response bodies stream through a pipe, so a large download is not held
// in memory; as with any transport, the caller must close the body.
type Transport struct {
	handlers map[string]http.Handler // by host:port
}

// Transport returns an in-process transport to this emulator's services.
// It works whether or not the emulator listens (Options.NoListen).
func (e *Emulator) Transport() *Transport {
	t := &Transport{handlers: make(map[string]http.Handler, 4)}
	for _, s := range []Service{Blob, Queue, Table, File} {
		t.handlers[e.host(s)] = e.Handler(s)
	}
	return t
}

// Do implements azcore's policy.Transporter.
func (t *Transport) Do(req *http.Request) (*http.Response, error) { return t.RoundTrip(req) }

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	h, ok := t.handlers[req.URL.Host]
	if !ok {
		return nil, fmt.Errorf("emulator: in-process transport: no service at host %q", req.URL.Host)
	}
	r := req.Clone(req.Context())
	// Header names as a network server hands them over: canonical, but for
	// metadata names, whose spelling Azure keeps (one rule, in httpx).
	httpx.CanonicalizeHeaders(r)
	r.RequestURI = req.URL.RequestURI()
	r.Host = req.URL.Host
	r.RemoteAddr = "127.0.0.1:1"
	if r.Body == nil {
		r.Body = http.NoBody
	}
	if r.ContentLength == 0 && r.Body != http.NoBody && req.GetBody == nil {
		r.ContentLength = -1 // unknown length: the handler reads to EOF
	}
	pr, pw := io.Pipe()
	w := &pipeWriter{header: http.Header{}, pw: pw, ready: make(chan struct{})}
	go func() {
		defer func() {
			if v := recover(); v != nil {
				pw.CloseWithError(fmt.Errorf("emulator: handler panic: %v", v))
			} else {
				pw.Close()
			}
			w.headersDone()
		}()
		h.ServeHTTP(w, r)
	}()
	<-w.ready
	resp := &http.Response{
		Status:        strconv.Itoa(w.status) + " " + http.StatusText(w.status),
		StatusCode:    w.status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        w.sent,
		Body:          pr,
		ContentLength: -1,
		Request:       req,
	}
	if n, err := strconv.ParseInt(w.sent.Get("Content-Length"), 10, 64); err == nil {
		resp.ContentLength = n
	}
	if req.Method == http.MethodHead || w.status == http.StatusNoContent || w.status == http.StatusNotModified {
		resp.Body = http.NoBody
		go io.Copy(io.Discard, pr) // let the handler finish
	}
	return resp, nil
}

// pipeWriter is the handler's http.ResponseWriter: the status and headers
// are handed to RoundTrip at the first write (or when the handler
// returns), and the body goes into the pipe the response reads.
type pipeWriter struct {
	header, sent http.Header
	status       int
	pw           *io.PipeWriter
	once         sync.Once
	ready        chan struct{}
}

func (w *pipeWriter) Header() http.Header { return w.header }

func (w *pipeWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
		w.headersDone()
	}
}

func (w *pipeWriter) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.pw.Write(b)
}

// Flush implements http.Flusher; every Write already reaches the reader.
func (w *pipeWriter) Flush() {}

// headersDone freezes the response headers (canonical names, as a client
// parsing them from the wire would see) and releases RoundTrip.
func (w *pipeWriter) headersDone() {
	w.once.Do(func() {
		if w.status == 0 {
			w.status = http.StatusOK
		}
		w.sent = make(http.Header, len(w.header))
		for k, vs := range w.header {
			ck := http.CanonicalHeaderKey(k)
			w.sent[ck] = append(w.sent[ck], vs...)
		}
		close(w.ready)
	})
}

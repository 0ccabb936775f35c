package server

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/lazuli-storage/lazuli/internal/auth"
	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/h1"
	"github.com/lazuli-storage/lazuli/internal/httpx"
)

// Both HTTP servers bound request heads alike: the per-request limits of h1
// (MaxURIBytes, MaxFieldBytes, MaxHeaderBytes) and the server-wide budget
// of head bytes read before a handler runs. A refused head is answered with
// an Azure error of the listener's service (headRefusal), through the
// service's own plumbing (httpx.WithRefusal), so that it carries a request
// id, x-ms-error-code and the service's error body like any other error.
//
// Azure's front end answers such heads itself (HTTP.sys's "Request URL Too
// Long", "Request Header Fields Too Long"), without an Azure error code;
// lazuli answers 400 with one instead, so that every refusal a client sees
// is a well-formed Azure error.

// headRefusal is the Azure error for a head refused with one of h1's limit
// errors.
func headRefusal(err error) *azerr.Error {
	switch err {
	case h1.ErrURITooLong:
		return azerr.Newf(azerr.InvalidUri, "The request URL is longer than the %d bytes the server accepts.", h1.MaxURIBytes)
	case h1.ErrFieldTooLong:
		return azerr.Newf(azerr.InvalidHeaderValue, "A request header field is longer than the %d bytes the server accepts.", h1.MaxFieldBytes)
	case h1.ErrOverBudget:
		return azerr.New(azerr.ServerBusy)
	}
	return azerr.Newf(azerr.InvalidHeaderValue, "The request headers are larger than the %d bytes the server accepts.", h1.MaxHeaderBytes)
}

// refusedBy returns the h1.Server.Refused hook that answers through h.
func refusedBy(h http.Handler) func(http.ResponseWriter, *http.Request, error) {
	return func(w http.ResponseWriter, r *http.Request, err error) {
		h.ServeHTTP(w, r.WithContext(httpx.WithRefusal(r.Context(), headRefusal(err))))
	}
}

// stdHeadLimits answers a request whose target, one of whose header fields
// or whose whole head is longer than h1 allows as h1 does, before h sees
// it. (A head far longer than that never gets here: budgetConn refuses it
// while it is being read.)
func stdHeadLimits(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var err error
		if len(r.RequestURI) > h1.MaxURIBytes {
			err = h1.ErrURITooLong
		} else {
			size := len(r.Method) + len(r.RequestURI) + len("  HTTP/1.1\r\n\r\n") + len("Host: \r\n") + len(r.Host)
			for k, vs := range r.Header {
				for _, v := range vs {
					field := len(k) + 2 + len(v)
					if field > h1.MaxFieldBytes {
						err = h1.ErrFieldTooLong
					}
					size += field + 2
				}
			}
			if err == nil && size > h1.MaxHeaderBytes {
				err = h1.ErrHeadTooLarge
			}
		}
		if err != nil {
			h.ServeHTTP(w, r.WithContext(httpx.WithRefusal(r.Context(), headRefusal(err))))
			return
		}
		h.ServeHTTP(w, r)
	})
}

// stdMaxHeaderBytes is net/http's own limit on a head (it answers 431 in
// plain text beyond it): out of the way of the limits above, which answer
// first.
const stdMaxHeaderBytes = 2 * h1.MaxHeaderBytes

// budgetListener wraps accepted connections in budgetConns; refused heads
// are answered through the handler of svc.
type budgetListener struct {
	net.Listener
	budget *h1.Budget
	srv    *Server
	svc    auth.Service
}

func (l budgetListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &budgetConn{Conn: c, budget: l.budget, refuse: func(err error) {
		if h := l.srv.handlers[l.svc]; h != nil {
			replyRaw(c, refusedBy(h), err)
		}
	}}, nil
}

// budgetConn charges the bytes net/http reads between requests (the next
// request's head) to the budget, beyond a first step its read buffer holds
// anyway, and gives them back when the request is over (budgetState). A
// head the budget cannot cover, or longer than h1 allows, is answered
// with the Azure error h1 would answer (refuse) and the read fails as a
// network read error, which net/http drops the connection on silently.
type budgetConn struct {
	net.Conn
	budget *h1.Budget
	refuse func(error)
	mu     sync.Mutex
	active bool  // a handler is running: reads are body bytes
	read   int64 // head bytes read since the last request ended
	held   int64 // bytes reserved from the budget
	lf     bool  // a line feed was read since the last request ended
}

const budgetFree = 4 << 10

// stdHeadMax bounds the bytes read for one head: h1.MaxHeaderBytes, and
// the one read buffer of body bytes that may have come with it.
const stdHeadMax = h1.MaxHeaderBytes + budgetFree

func (c *budgetConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.mu.Lock()
		defer c.mu.Unlock()
		if !c.active {
			c.read += int64(n)
			if !c.lf && bytes.IndexByte(p[:n], '\n') >= 0 {
				c.lf = true
			}
			var refused error
			switch {
			case !c.lf && c.read > h1.MaxURIBytes+budgetFree:
				refused = h1.ErrURITooLong
			case c.read > stdHeadMax:
				refused = h1.ErrHeadTooLarge
			}
			for refused == nil && c.read > budgetFree+c.held {
				if !c.budget.Reserve(budgetFree) {
					refused = h1.ErrOverBudget
					break
				}
				c.held += budgetFree
			}
			if refused != nil {
				c.refuse(refused)
				return 0, &net.OpError{Op: "read", Net: "tcp", Err: refused}
			}
		}
	}
	return n, err
}

// replyRaw answers a refused head on c itself, through h, as a response
// that closes the connection.
func replyRaw(c net.Conn, h func(http.ResponseWriter, *http.Request, error), err error) {
	r, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, "/", nil)
	r.RequestURI = "/"
	r.RemoteAddr = c.RemoteAddr().String()
	w := &rawResponse{header: http.Header{}, status: http.StatusOK}
	h(w, r, err)
	var b bytes.Buffer
	fmt.Fprintf(&b, "HTTP/1.1 %d %s\r\n", w.status, http.StatusText(w.status))
	w.header.Set("Content-Length", strconv.Itoa(w.body.Len()))
	w.header.Set("Connection", "close")
	w.header.Write(&b)
	b.WriteString("\r\n")
	b.Write(w.body.Bytes())
	c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	c.Write(b.Bytes())
}

// rawResponse collects a response for replyRaw.
type rawResponse struct {
	header http.Header
	status int
	wrote  bool
	body   bytes.Buffer
}

func (w *rawResponse) Header() http.Header { return w.header }

func (w *rawResponse) WriteHeader(status int) {
	if !w.wrote {
		w.status, w.wrote = status, true
	}
}

func (w *rawResponse) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(p)
}

// budgetState follows the connection's state: StateActive means net/http
// has read a request head and runs its handler; when the request is over
// (idle or closed) its reservation is released, and the raw header
// recorder lets go of what it kept of the request.
func budgetState(c net.Conn, st http.ConnState) {
	if rc, ok := c.(*httpx.RawConn); ok {
		if st == http.StateIdle {
			rc.Idle()
		}
		c = rc.Conn
	}
	bc, ok := c.(*budgetConn)
	if !ok {
		return
	}
	bc.mu.Lock()
	defer bc.mu.Unlock()
	switch st {
	case http.StateActive:
		bc.active = true
	case http.StateIdle, http.StateClosed:
		bc.active = false
		bc.read = 0
		bc.lf = false
		bc.budget.Release(bc.held)
		bc.held = 0
	}
}

// stdProgress gives the net/http server h1's progress timeouts: each read
// of a request body, and each write of a response, must make progress
// within d (zero: h1.DefaultProgressTimeout). Once the body is read the
// read deadline is lifted again, so that net/http's background read, which
// notices a client going away, is not cut off by a long response.
func stdProgress(h http.Handler, d time.Duration) http.Handler {
	if d <= 0 {
		d = h1.DefaultProgressTimeout
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		// A deadline left by the previous request on the connection.
		rc.SetWriteDeadline(time.Time{})
		var body *progressBody
		if r.Body != nil && r.Body != http.NoBody {
			body = &progressBody{ReadCloser: r.Body, rc: rc, d: d}
			r.Body = body
			rc.SetReadDeadline(time.Now().Add(d))
		}
		defer func() {
			// net/http sends what is still buffered, and reads and drops
			// what is left of the body, after the handler returns.
			rc.SetWriteDeadline(time.Now().Add(d))
			if body != nil && !body.done {
				rc.SetReadDeadline(time.Now().Add(d))
			}
		}()
		h.ServeHTTP(&progressWriter{ResponseWriter: w, rc: rc, d: d}, r)
	})
}

type progressBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	d    time.Duration
	done bool // the body has ended well
}

func (b *progressBody) Read(p []byte) (int, error) {
	b.rc.SetReadDeadline(time.Now().Add(b.d))
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.done = true
		b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

type progressWriter struct {
	http.ResponseWriter
	rc *http.ResponseController
	d  time.Duration
}

func (w *progressWriter) Write(p []byte) (int, error) {
	w.rc.SetWriteDeadline(time.Now().Add(w.d))
	return w.ResponseWriter.Write(p)
}

func (w *progressWriter) Flush() {
	w.rc.SetWriteDeadline(time.Now().Add(w.d))
	w.rc.Flush()
}

func (w *progressWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

package server

import (
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/lazuli-storage/lazuli/internal/h1"
	"github.com/lazuli-storage/lazuli/internal/httpx"
)

// The net/http server (--httpServer std) gets the same bounds on request
// heads as internal/h1 applies itself: the per-request limits of h1
// (MaxURIBytes, MaxFieldBytes; MaxHeaderBytes through
// http.Server.MaxHeaderBytes, which net/http answers 431 rather than 400)
// and the server-wide budget of head bytes read before a handler runs.

// stdHeadLimits answers a request whose target or one of whose header
// fields is longer than h1 allows as h1 does, before h sees it.
func stdHeadLimits(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(r.RequestURI) > h1.MaxURIBytes {
			refuse(w, http.StatusRequestURITooLong, "Request URL Too Long")
			return
		}
		for k, vs := range r.Header {
			for _, v := range vs {
				if len(k)+2+len(v) > h1.MaxFieldBytes {
					refuse(w, http.StatusBadRequest, "Request Header Fields Too Long")
					return
				}
			}
		}
		h.ServeHTTP(w, r)
	})
}

func refuse(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Connection", "close")
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	io.WriteString(w, msg)
}

// budgetListener wraps accepted connections in budgetConns.
type budgetListener struct {
	net.Listener
	budget *h1.Budget
}

func (l budgetListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &budgetConn{Conn: c, budget: l.budget}, nil
}

// budgetConn charges the bytes net/http reads between requests (the next
// request's head) to the budget, beyond a first step its read buffer holds
// anyway, and gives them back when the request is over (budgetState). A
// read the budget cannot cover fails, and net/http drops the connection.
type budgetConn struct {
	net.Conn
	budget *h1.Budget
	mu     sync.Mutex
	active bool  // a handler is running: reads are body bytes
	read   int64 // head bytes read since the last request ended
	held   int64 // bytes reserved from the budget
}

const budgetFree = 4 << 10

func (c *budgetConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.mu.Lock()
		defer c.mu.Unlock()
		if !c.active {
			c.read += int64(n)
			for c.read > budgetFree+c.held {
				if !c.budget.Reserve(budgetFree) {
					return 0, errOverBudget
				}
				c.held += budgetFree
			}
		}
	}
	return n, err
}

var errOverBudget = errors.New("request heads are over the server's budget")

// budgetState follows the connection's state: StateActive means net/http
// has read a request head and runs its handler; when the request is over
// (idle or closed) its reservation is released.
func budgetState(c net.Conn, st http.ConnState) {
	if rc, ok := c.(*httpx.RawConn); ok {
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

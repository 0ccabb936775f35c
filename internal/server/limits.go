package server

import (
	"errors"
	"io"
	"net"
	"net/http"
	"sync"

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

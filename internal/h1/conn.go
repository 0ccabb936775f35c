package h1

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Connection states, for Shutdown: only an idle (or new) connection may be
// closed under its goroutine's feet, and the goroutine and Shutdown agree on
// who moves it out of idle with a compare-and-swap.
const (
	stateNew int32 = iota
	stateActive
	stateIdle
	stateClosing
)

const (
	readBufSize  = 4 << 10
	writeBufSize = 20 << 10
	// pendingMax is how much of a response body is held back so that a
	// handler that returns early gets a Content-Length instead of chunks.
	pendingMax = 16 << 10
	// maxDiscard is how much unread request body is read and dropped after
	// a handler so the connection can carry the next request.
	maxDiscard = 256 << 10
	// lingerTime is how long a connection closing with request bytes in
	// flight keeps reading (and dropping) them, so that the client sees the
	// response rather than a reset.
	lingerTime = 500 * time.Millisecond
)

var (
	readerPool = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, readBufSize) }}
	outPool    = sync.Pool{New: func() any { return &outBuf{bw: bufio.NewWriterSize(nil, writeBufSize)} }}
)

// outBuf is the write side of a connection, borrowed from outPool while a
// response is being produced and returned while the connection is idle.
type outBuf struct {
	bw      *bufio.Writer
	head    []byte // serialized handler headers of the current response
	pending []byte // body held back before the response head is written
}

type conn struct {
	srv        *Server
	rwc        net.Conn
	state      atomic.Int32
	ctx        context.Context
	cancel     context.CancelFunc
	remoteAddr string
	tlsConn    *tls.Conn
	tlsState   *tls.ConnectionState
	br         *bufio.Reader
	out        *outBuf
	rerr       error // sticky read error of the connection
	werr       error // sticky write error of the connection
	line       []byte
	reserved   int    // head bytes reserved from the server's budget
	method     string // of the request line being read, for Refused
	target     string
	inBody     bool // reads are of a request body: each one must progress
	watch      watch
}

// connReader feeds the request reader. Before it blocks on the network it
// sends any response still buffered, so pipelined responses are coalesced
// but never held back while the server waits for the client.
type connReader struct{ c *conn }

func (r connReader) Read(p []byte) (int, error) {
	c := r.c
	if c.rerr != nil {
		return 0, c.rerr
	}
	if c.out != nil && c.out.bw.Buffered() > 0 {
		c.flush()
	}
	if c.watch.peeked && len(p) > 0 {
		// The watcher read the first byte of the next request.
		c.watch.peeked = false
		p[0] = c.watch.peek[0]
		return 1, nil
	}
	if c.inBody {
		c.rwc.SetReadDeadline(time.Now().Add(c.srv.progressTimeout()))
	}
	n, err := c.rwc.Read(p)
	if err != nil {
		c.rerr = err
		if c.inBody {
			// The client went away in the middle of a body (or stalled).
			c.cancel()
		}
	}
	return n, err
}

// connWriter sends responses: each write to the network must be taken by
// the client within the progress timeout.
type connWriter struct{ c *conn }

func (w connWriter) Write(p []byte) (int, error) {
	w.c.rwc.SetWriteDeadline(time.Now().Add(w.c.srv.progressTimeout()))
	return w.c.rwc.Write(p)
}

func (s *Server) newConn(rwc net.Conn) *conn {
	c := &conn{srv: s, rwc: rwc}
	base := rwc
	if s.Unwrap != nil {
		if u := s.Unwrap(rwc); u != nil {
			base = u
		}
	}
	c.tlsConn, _ = base.(*tls.Conn)
	return c
}

func (c *conn) setState(st int32, hs http.ConnState) {
	c.state.Store(st)
	if c.srv.ConnState != nil {
		c.srv.ConnState(c.rwc, hs)
	}
}

// activate moves the connection out of idle (or new) unless Shutdown or
// Close got there first.
func (c *conn) activate() bool {
	if !c.state.CompareAndSwap(stateIdle, stateActive) && !c.state.CompareAndSwap(stateNew, stateActive) {
		return c.state.Load() == stateActive
	}
	if c.srv.ConnState != nil {
		c.srv.ConnState(c.rwc, http.StateActive)
	}
	return true
}

func (c *conn) getOut() *outBuf {
	if c.out == nil {
		c.out = outPool.Get().(*outBuf)
		c.out.bw.Reset(connWriter{c})
	}
	return c.out
}

func (c *conn) releaseOut() {
	if c.out != nil && c.out.bw.Buffered() == 0 {
		c.out.bw.Reset(nil)
		if cap(c.out.pending) > 4*pendingMax {
			c.out.pending = nil
		}
		outPool.Put(c.out)
		c.out = nil
	}
}

func (c *conn) flush() {
	if c.out == nil || c.werr != nil {
		return
	}
	if err := c.out.bw.Flush(); err != nil {
		c.werr = err
	}
}

func (c *conn) serve() {
	s := c.srv
	c.remoteAddr = c.rwc.RemoteAddr().String()
	ctx := context.Background()
	if s.ConnContext != nil {
		ctx = s.ConnContext(ctx, c.rwc)
		if ctx == nil {
			panic("h1: ConnContext returned nil")
		}
	}
	c.ctx, c.cancel = context.WithCancel(ctx)
	c.br = readerPool.Get().(*bufio.Reader)
	c.br.Reset(connReader{c})
	defer c.finish()

	first := true
	for {
		if !c.awaitRequest(first) {
			return
		}
		first = false
		ex, err := c.readRequest()
		if err != nil {
			c.replyError(err)
			return
		}
		ok := c.handle(ex)
		c.releaseHead()
		if !ok {
			return
		}
		if ex.w.closeAfter || s.shutdown.Load() {
			c.flush()
			if ex.body != nil && !ex.body.sawEOF {
				c.linger()
			}
			return
		}
	}
}

// awaitRequest waits for the first byte of the next request, with the idle
// (or, on a new connection, header) timeout, and sets the header deadline.
func (c *conn) awaitRequest(first bool) bool {
	s := c.srv
	c.inBody = false
	if c.br.Buffered() == 0 {
		c.flush()
		if c.werr != nil {
			return false
		}
		c.releaseOut()
		timeout := s.headerTimeout()
		if !first {
			c.setState(stateIdle, http.StateIdle)
			timeout = s.idleTimeout()
		}
		if s.shutdown.Load() {
			return false
		}
		c.rwc.SetReadDeadline(time.Now().Add(timeout))
		if _, err := c.br.Peek(1); err != nil {
			return false
		}
		if !c.activate() {
			return false
		}
	} else if !c.activate() {
		return false
	}
	if c.tlsConn != nil && c.tlsState == nil {
		st := c.tlsConn.ConnectionState()
		c.tlsState = &st
	}
	// A complete header block already buffered needs no deadline.
	if !headerBuffered(c.br) {
		c.rwc.SetReadDeadline(time.Now().Add(s.headerTimeout()))
	}
	return true
}

func headerBuffered(br *bufio.Reader) bool {
	b, _ := br.Peek(br.Buffered())
	for i := 0; i+1 < len(b); i++ {
		if b[i] == '\n' && (b[i+1] == '\n' || b[i+1] == '\r' && i+2 < len(b) && b[i+2] == '\n') {
			return true
		}
	}
	return false
}

// handle runs the handler for one request and completes its response. It
// reports false when the connection must be dropped at once (a panic).
func (c *conn) handle(ex *exchange) (ok bool) {
	w := &ex.w
	r := ex.req
	defer func() {
		if v := recover(); v != nil {
			if v != http.ErrAbortHandler {
				buf := make([]byte, 64<<10)
				buf = buf[:runtime.Stack(buf, false)]
				c.srv.logf("h1: panic serving %s: %v\n%s", c.remoteAddr, v, buf)
			}
			c.flush()
			ok = false
		}
	}()
	if ex.expectFailed {
		w.Header().Set("Connection", "close")
		w.WriteHeader(http.StatusExpectationFailed)
	} else if r.RequestURI == "*" && r.Method == http.MethodOptions {
		w.Header().Set("Content-Length", "0")
	} else {
		c.startWatch(ex)
		func() {
			defer c.stopWatch()
			c.srv.Handler.ServeHTTP(w, r)
		}()
	}
	w.finish()
	return c.werr == nil
}

// linger half-closes the connection and reads (and drops) what the client
// is still sending for a while, so that closing does not reset the
// connection before the client has read the response.
func (c *conn) linger() {
	base := c.rwc
	if c.srv.Unwrap != nil {
		if u := c.srv.Unwrap(base); u != nil {
			base = u
		}
	}
	if cw, ok := base.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
	}
	deadline := time.Now().Add(lingerTime)
	c.rwc.SetReadDeadline(deadline)
	buf := make([]byte, 4<<10)
	for time.Now().Before(deadline) {
		if _, err := c.rwc.Read(buf); err != nil {
			return
		}
	}
}

func (c *conn) finish() {
	c.releaseHead()
	c.state.Store(stateClosing)
	c.flush()
	c.rwc.Close()
	c.cancel()
	c.srv.trackConn(c, false)
	if c.srv.ConnState != nil {
		c.srv.ConnState(c.rwc, http.StateClosed)
	}
	if c.out != nil {
		c.out.bw.Reset(nil)
		outPool.Put(c.out)
		c.out = nil
	}
	c.br.Reset(nil)
	readerPool.Put(c.br)
	c.br = nil
}

// replyError answers a request that could not be read, as net/http does,
// and leaves the connection to be closed.
func (c *conn) replyError(err error) {
	if c.srv.Refused != nil && isLimit(err) {
		c.refuse(err)
		return
	}
	var pe *protoError
	if !errors.As(err, &pe) {
		// The client went away or timed out: nobody to answer.
		return
	}
	msg := pe.text
	if pe.detail != "" {
		msg += ": " + pe.detail
	}
	out := c.getOut()
	out.bw.WriteString("HTTP/1.1 ")
	out.bw.WriteString(pe.text)
	out.bw.WriteString("\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n")
	out.bw.WriteString(msg)
	c.flush()
	c.linger()
}

// refuse answers a head refused for a limit with Server.Refused.
func (c *conn) refuse(err error) {
	method, target := c.method, c.target
	if method == "" {
		// The request line itself was too long: its method is what
		// came before the first space.
		method = http.MethodGet
		if sp := indexByte(c.line, ' '); sp > 0 && allToken(c.line[:sp]) {
			method = internMethod(c.line[:sp])
		}
	}
	u, perr := url.ParseRequestURI(target)
	if perr != nil || target == "" {
		target = "/"
		u = &url.URL{Path: "/"}
	}
	r := (&http.Request{Method: method, URL: u, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{}, RemoteAddr: c.remoteAddr, RequestURI: target, Close: true,
		TLS: c.tlsState, Body: http.NoBody}).WithContext(c.ctx)
	ex := &exchange{protoMinor: 1, req: r}
	ex.w.init(c, ex)
	func() {
		defer func() {
			if v := recover(); v != nil && v != http.ErrAbortHandler {
				c.srv.logf("h1: panic answering a refused request from %s: %v", c.remoteAddr, v)
			}
		}()
		c.srv.Refused(&ex.w, r, err)
		ex.w.finish()
	}()
	c.flush()
	c.linger()
}

// protoError is a request the server refuses before any handler sees it.
type protoError struct {
	text   string // status code and reason
	detail string // appended to the body after ": "
}

func (e *protoError) Error() string { return e.text + ": " + e.detail }

var (
	errVersion        = &protoError{text: "505 HTTP Version Not Supported"}
	errUnsupportedTE  = &protoError{text: "501 Not Implemented"}
	errMalformedChunk = errors.New("h1: malformed chunked encoding")
)

func badRequest(detail string) error { return &protoError{text: "400 Bad Request", detail: detail} }

// readErr turns a failure to read the request head into what replyError
// expects: end of input and network failures are silent.
func readErr(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// connBufferSize is the size of each connection's read and write buffers.
const connBufferSize = 64 << 10

// defaultIdleTimeout is how long a connection may sit in the idle pool.
// Node.js servers (the reference emulator) close a keep-alive connection
// after 5 s idle; dropping ours first keeps requests off connections the
// server is closing.
const defaultIdleTimeout = 4 * time.Second

// target is one storage endpoint under test. It speaks HTTP/1.1 itself:
// every request takes a keep-alive connection from the pool of its host,
// is written and signed straight into the connection's buffer, and its
// response is parsed by the calling goroutine, so a request costs a few
// microseconds of client CPU and no goroutine hand-offs.
type target struct {
	name    string
	acct    *account
	version string
	timeout time.Duration
	// idleTimeout drops pooled connections idle longer than this.
	idleTimeout time.Duration
	maxIdle     int

	blob, queue, table *hostPool // the pools of the account's endpoints
	mu                 sync.Mutex
	others             map[string]*hostPool // any other scheme://host

	dials   atomic.Int64 // connections opened
	retries atomic.Int64 // requests resent on a fresh connection
}

// newTarget builds the client of a target. Each host keeps up to one idle
// connection per concurrent client (and some slack), so connections are
// reused instead of redialled.
func newTarget(name string, a *account, version string, concurrency int, timeout time.Duration) *target {
	t := &target{name: name, acct: a, version: version, timeout: timeout,
		idleTimeout: defaultIdleTimeout, maxIdle: 2*concurrency + 8, others: map[string]*hostPool{}}
	t.blob, t.queue, t.table = t.lookupPool(a.Blob), t.lookupPool(a.Queue), t.lookupPool(a.Table)
	return t
}

// poolFor returns the connection pool of the host of u.
func (t *target) poolFor(u *url.URL) *hostPool {
	switch u {
	case t.acct.Blob:
		return t.blob
	case t.acct.Queue:
		return t.queue
	case t.acct.Table:
		return t.table
	}
	return t.lookupPool(u)
}

func (t *target) lookupPool(u *url.URL) *hostPool {
	key := u.Scheme + "://" + u.Host
	t.mu.Lock()
	defer t.mu.Unlock()
	if p := t.others[key]; p != nil {
		return p
	}
	p := &hostPool{t: t, host: u.Host, addr: u.Host}
	if u.Port() == "" {
		port := "80"
		if u.Scheme == "https" {
			port = "443"
		}
		p.addr = net.JoinHostPort(u.Hostname(), port)
	}
	if u.Scheme == "https" {
		p.tls = &tls.Config{ServerName: u.Hostname(), NextProtos: []string{"http/1.1"}}
	}
	p.spread = t.acct.Spread[u.Host]
	t.others[key] = p
	return p
}

// close drops the idle connections of the target.
func (t *target) close() {
	t.mu.Lock()
	pools := make([]*hostPool, 0, len(t.others))
	for _, p := range t.others {
		pools = append(pools, p)
	}
	t.mu.Unlock()
	for _, p := range pools {
		p.closeIdle()
	}
}

// hostPool holds the idle connections to one host, most recently used
// last.
type hostPool struct {
	t    *target
	host string // Host header
	addr string // dial address
	tls  *tls.Config
	// spread, when set, replaces addr: each new connection dials the
	// next of these (several instances serving one endpoint).
	spread []string
	dialed atomic.Uint64

	mu   sync.Mutex
	idle []*conn
}

// conn is one HTTP/1.1 connection with its buffers and its signer.
type conn struct {
	nc     net.Conn
	br     *bufio.Reader
	bw     *bufio.Writer
	sg     *signer
	hdr    []field // request headers being written
	hbuf   []byte  // response header block being read
	idleAt time.Time
	// lenN and lenS cache the last Content-Length written.
	lenN int
	lenS string
}

// get returns an idle connection (reused) or dials a new one. Connections
// idle for longer than the idle timeout are closed.
func (p *hostPool) get() (pc *conn, reused bool, err error) {
	var stale []*conn
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		pc = p.idle[n-1]
		p.idle[n-1] = nil
		p.idle = p.idle[:n-1]
		if time.Since(pc.idleAt) > p.t.idleTimeout {
			// Every connection below it has been idle longer still.
			stale = append(append(stale, pc), p.idle...)
			clear(p.idle)
			p.idle = p.idle[:0]
			pc = nil
		}
	}
	p.mu.Unlock()
	for _, c := range stale {
		c.nc.Close()
	}
	if pc != nil {
		return pc, true, nil
	}
	pc, err = p.dial()
	return pc, false, err
}

// put returns a connection whose response has been read in full.
func (p *hostPool) put(pc *conn) {
	pc.idleAt = time.Now()
	p.mu.Lock()
	if len(p.idle) < p.t.maxIdle {
		p.idle = append(p.idle, pc)
		pc = nil
	}
	p.mu.Unlock()
	if pc != nil {
		pc.nc.Close()
	}
}

func (p *hostPool) closeIdle() {
	p.mu.Lock()
	idle := p.idle
	p.idle = nil
	p.mu.Unlock()
	for _, c := range idle {
		c.nc.Close()
	}
}

// dial opens a connection (TCP_NODELAY is Go's default).
func (p *hostPool) dial() (*conn, error) {
	d := net.Dialer{Timeout: min(10*time.Second, p.t.timeout), KeepAlive: 30 * time.Second}
	addr := p.addr
	if len(p.spread) > 0 {
		addr = p.spread[(p.dialed.Add(1)-1)%uint64(len(p.spread))]
	}
	nc, err := d.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	if p.tls != nil {
		tc := tls.Client(nc, p.tls)
		ctx, cancel := context.WithTimeout(context.Background(), p.t.timeout)
		err := tc.HandshakeContext(ctx)
		cancel()
		if err != nil {
			nc.Close()
			return nil, err
		}
		nc = tc
	}
	p.t.dials.Add(1)
	return &conn{nc: nc, br: bufio.NewReaderSize(nc, connBufferSize), bw: bufio.NewWriterSize(nc, connBufferSize),
		sg: newSigner(p.t.acct.Name, p.t.acct.Key), hdr: make([]field, 0, 12), hbuf: make([]byte, 0, 1024)}, nil
}

// requestError is a request that failed: a transport error (Status 0) or
// an unexpected status, with the x-ms-error-code the server sent.
type requestError struct {
	Op      string // what was being done, e.g. "Put Blob"
	Method  string
	Path    string
	Status  int
	Code    string
	Message string
}

func (e *requestError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s %s): ", e.Op, e.Method, e.Path)
	if e.Status == 0 {
		b.WriteString(e.Message)
		return b.String()
	}
	fmt.Fprintf(&b, "%d", e.Status)
	if e.Code != "" {
		b.WriteString(" " + e.Code)
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	return b.String()
}

// kind groups failures for counting: "501 NotImplemented", "transport".
func (e *requestError) kind() string {
	if e.Status == 0 {
		return "transport error"
	}
	if e.Code == "" {
		return fmt.Sprintf("%d", e.Status)
	}
	return fmt.Sprintf("%d %s", e.Status, e.Code)
}

// call describes one REST request.
type call struct {
	op     string   // operation name for error reports
	method string   // HTTP method
	base   *url.URL // service endpoint
	path   string   // appended to the endpoint path; already escaped
	query  string   // raw query, already escaped
	body   []byte   // shared and never modified
	table  bool     // Table service: JSON headers and the Table signing layout
	want   int      // expected status
	any2xx bool     // any success status will do, not only want
	hdr    []string // extra header name/value pairs
}

// accepts reports whether status is the answer c expects.
func (c *call) accepts(status int) bool {
	return status == c.want || c.any2xx && status >= 200 && status < 300
}

// header is the header block of a response, one "name:value\n" line per
// field with the value trimmed, names as the server sent them.
type header string

// Get returns the value of the first field named name (compared
// case-insensitively), or "".
func (h header) Get(name string) string {
	s := string(h)
	for s != "" {
		line, rest, _ := strings.Cut(s, "\n")
		s = rest
		if len(line) > len(name) && line[len(name)] == ':' && strings.EqualFold(line[:len(name)], name) {
			return line[len(name)+1:]
		}
	}
	return ""
}

// do sends c, checks the status and returns the response headers. The
// response body is read into into when into is not nil, else discarded.
// A request that fails on a reused connection before any byte of the
// response arrives (the server closed it while idle) is sent once more on
// a new connection.
func (t *target) do(c *call, into *bytes.Buffer) (header, error) {
	p := t.poolFor(c.base)
	pc, reused, err := p.get()
	for {
		if err != nil {
			return "", &requestError{Op: c.op, Method: c.method, Path: c.path, Message: "connecting: " + err.Error()}
		}
		// err is the loop's: a failed redial must reach the check above.
		var h header
		var fresh bool
		h, fresh, err = t.roundTrip(p, pc, c, into)
		if err == nil || !fresh || !reused {
			return h, err
		}
		t.retries.Add(1)
		reused = false
		pc, err = p.dial()
	}
}

// roundTrip sends c on pc and reads the response. The connection goes back
// to the pool after a complete response and is closed on any error; fresh
// reports an error that happened before any byte of the response came and
// was not a timeout, so that the request can be resent.
func (t *target) roundTrip(p *hostPool, pc *conn, c *call, into *bytes.Buffer) (h header, fresh bool, err error) {
	if err := pc.nc.SetDeadline(time.Now().Add(t.timeout)); err != nil {
		pc.nc.Close()
		return "", true, t.transportError(c, "", err)
	}
	if err := t.writeRequest(pc, p.host, c); err != nil {
		pc.nc.Close()
		return "", !isTimeout(err), t.transportError(c, "writing request", err)
	}
	if _, err := pc.br.Peek(1); err != nil {
		pc.nc.Close()
		return "", !isTimeout(err), t.transportError(c, "reading response", err)
	}
	resp, err := pc.readHeader(c.method == "HEAD")
	if err != nil {
		pc.nc.Close()
		return "", false, t.transportError(c, "reading response", err)
	}
	if !c.accepts(resp.status) {
		var body cappedBuffer
		if err := pc.readBody(&resp, &body); err != nil {
			pc.nc.Close()
		} else if resp.close {
			pc.nc.Close()
		} else {
			p.put(pc)
		}
		return resp.header, false, responseError(c, resp.status, resp.header, body.b)
	}
	var dst io.Writer
	if into != nil {
		into.Reset()
		dst = into
	}
	if err := pc.readBody(&resp, dst); err != nil {
		pc.nc.Close()
		return "", false, &requestError{Op: c.op, Method: c.method, Path: c.path, Status: resp.status,
			Message: "reading body: " + err.Error()}
	}
	if resp.close {
		pc.nc.Close()
	} else {
		p.put(pc)
	}
	return resp.header, false, nil
}

func (t *target) transportError(c *call, doing string, err error) *requestError {
	msg := err.Error()
	if doing != "" {
		msg = doing + ": " + msg
	}
	return &requestError{Op: c.op, Method: c.method, Path: c.path, Message: msg}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

// writeRequest serializes and signs c into the connection's buffer and
// flushes it. The wire headers are those net/http would send for the same
// request: Content-Length when there is a body, and "0" for a PUT, POST or
// PATCH without one.
func (t *target) writeRequest(pc *conn, host string, c *call) error {
	hdr := t.requestHeaders(pc, c)
	sig := pc.sg.sign(c.method, c.base.Path, c.path, c.query, hdr, c.table)
	w := pc.bw
	w.WriteString(c.method)
	w.WriteByte(' ')
	if c.base.Path == "" && c.path == "" {
		w.WriteByte('/')
	} else {
		w.WriteString(c.base.Path)
		w.WriteString(c.path)
	}
	if c.query != "" {
		w.WriteByte('?')
		w.WriteString(c.query)
	}
	w.WriteString(" HTTP/1.1\r\nHost: ")
	w.WriteString(host)
	w.WriteString("\r\nUser-Agent: lazuli-bench\r\n")
	for _, f := range hdr {
		w.WriteString(f.name)
		w.WriteString(": ")
		w.WriteString(f.value)
		w.WriteString("\r\n")
	}
	w.WriteString("Authorization: SharedKey ")
	w.WriteString(t.acct.Name)
	w.WriteByte(':')
	w.Write(sig)
	w.WriteString("\r\n\r\n")
	// A body larger than the free buffer goes to the connection directly
	// once the buffer is full: only its first bytes are copied.
	w.Write(c.body)
	return w.Flush()
}

// requestHeaders returns the headers of c other than Host, User-Agent
// and Authorization, in pc's reused slice.
func (t *target) requestHeaders(pc *conn, c *call) []field {
	hdr := append(pc.hdr[:0], field{"x-ms-version", t.version}, field{"x-ms-date", msDate()})
	switch {
	case c.body != nil:
		if n := len(c.body); n != pc.lenN || pc.lenS == "" {
			pc.lenN, pc.lenS = n, strconv.Itoa(n)
		}
		hdr = append(hdr, field{"Content-Length", pc.lenS})
	case c.method == "PUT" || c.method == "POST" || c.method == "PATCH":
		hdr = append(hdr, field{"Content-Length", "0"})
	}
	if c.table {
		hdr = append(hdr, field{"Accept", "application/json;odata=nometadata"},
			field{"DataServiceVersion", "3.0"}, field{"MaxDataServiceVersion", "3.0;NetFx"})
		if c.body != nil {
			hdr = append(hdr, field{"Content-Type", "application/json"})
		}
	}
	for i := 0; i+1 < len(c.hdr); i += 2 {
		hdr = setField(hdr, c.hdr[i], c.hdr[i+1])
	}
	pc.hdr = hdr
	return hdr
}

// response is a parsed status line and header block.
type response struct {
	status  int
	header  header
	length  int64 // body length; -1 when unknown
	chunked bool
	noBody  bool
	close   bool // close the connection after the body
}

var errMalformed = errors.New("malformed HTTP response")

// readHeader reads the status line and header of the response, skipping
// interim (1xx) responses.
func (pc *conn) readHeader(head bool) (response, error) {
	for {
		line, err := pc.readLine()
		if err != nil {
			return response{}, err
		}
		// HTTP/1.x SP 3DIGIT [SP reason]
		if len(line) < 12 || string(line[:7]) != "HTTP/1." || line[8] != ' ' ||
			(len(line) > 12 && line[12] != ' ') {
			return response{}, fmt.Errorf("%w: status line %q", errMalformed, line)
		}
		status := 0
		for _, d := range line[9:12] {
			if d < '0' || d > '9' {
				return response{}, fmt.Errorf("%w: status line %q", errMalformed, line)
			}
			status = status*10 + int(d-'0')
		}
		r := response{status: status, length: -1, close: line[7] == '0'}
		keepAlive := false
		hb := pc.hbuf[:0]
		for {
			line, err := pc.readLine()
			if err != nil {
				return response{}, err
			}
			if len(line) == 0 {
				break
			}
			if line[0] == ' ' || line[0] == '\t' { // obsolete line folding
				if len(hb) == 0 {
					return response{}, fmt.Errorf("%w: continuation line first", errMalformed)
				}
				hb = append(hb[:len(hb)-1], ' ')
				hb = append(hb, trimSpaceBytes(line)...)
				hb = append(hb, '\n')
				continue
			}
			i := bytes.IndexByte(line, ':')
			if i <= 0 {
				return response{}, fmt.Errorf("%w: header line %q", errMalformed, line)
			}
			name, value := line[:i], trimSpaceBytes(line[i+1:])
			switch {
			case equalFold(name, "Content-Length"):
				n, err := strconv.ParseInt(string(value), 10, 64)
				if err != nil || n < 0 || (r.length >= 0 && r.length != n) {
					return response{}, fmt.Errorf("%w: Content-Length %q", errMalformed, value)
				}
				r.length = n
			case equalFold(name, "Transfer-Encoding"):
				if hasToken(value, "chunked") {
					r.chunked = true
				}
			case equalFold(name, "Connection"):
				if hasToken(value, "close") {
					r.close = true
				} else if hasToken(value, "keep-alive") {
					keepAlive = true
				}
			}
			hb = append(hb, name...)
			hb = append(hb, ':')
			hb = append(hb, value...)
			hb = append(hb, '\n')
		}
		pc.hbuf = hb
		if status >= 100 && status < 200 {
			if status == 101 {
				return response{}, fmt.Errorf("%w: unexpected 101 Switching Protocols", errMalformed)
			}
			continue // interim response: the real one follows
		}
		if line[7] == '0' && keepAlive {
			r.close = false
		}
		r.header = header(hb)
		switch {
		case head || status == 204 || status == 304:
			r.noBody = true
		case r.chunked:
			r.length = -1
		case r.length < 0:
			r.close = true // the body ends when the server closes
		}
		return r, nil
	}
}

// readLine returns the next line without its CRLF; the slice is valid
// until the next read.
func (pc *conn) readLine() ([]byte, error) {
	line, err := pc.br.ReadSlice('\n')
	if err != nil {
		if err == bufio.ErrBufferFull {
			return nil, fmt.Errorf("%w: line longer than %d bytes", errMalformed, connBufferSize)
		}
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	line = line[:len(line)-1]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, nil
}

// readBody reads the body of r into w (nil: discard).
func (pc *conn) readBody(r *response, w io.Writer) error {
	switch {
	case r.noBody:
		return nil
	case r.chunked:
		return pc.readChunked(w)
	case r.length >= 0:
		return pc.copyN(w, r.length)
	}
	if w == nil {
		w = io.Discard
	}
	_, err := pc.br.WriteTo(w)
	return err
}

// copyN moves n bytes of body to w (nil: discard).
func (pc *conn) copyN(w io.Writer, n int64) error {
	for n > 0 {
		k := int(min(n, int64(pc.br.Size())))
		b, err := pc.br.Peek(k)
		if len(b) > 0 && w != nil {
			if _, err := w.Write(b); err != nil {
				return err
			}
		}
		pc.br.Discard(len(b))
		n -= int64(len(b))
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
	}
	return nil
}

// readChunked reads a chunked body: chunks of "size[;ext]CRLF data CRLF",
// a zero-size chunk, then trailer fields up to an empty line.
func (pc *conn) readChunked(w io.Writer) error {
	for {
		line, err := pc.readLine()
		if err != nil {
			return err
		}
		if i := bytes.IndexByte(line, ';'); i >= 0 {
			line = line[:i]
		}
		line = trimSpaceBytes(line)
		if len(line) == 0 || len(line) > 15 {
			return fmt.Errorf("%w: chunk size %q", errMalformed, line)
		}
		var size int64
		for _, c := range line {
			var d byte
			switch {
			case '0' <= c && c <= '9':
				d = c - '0'
			case 'a' <= c && c <= 'f':
				d = c - 'a' + 10
			case 'A' <= c && c <= 'F':
				d = c - 'A' + 10
			default:
				return fmt.Errorf("%w: chunk size %q", errMalformed, line)
			}
			size = size<<4 | int64(d)
		}
		if size == 0 {
			for { // trailer fields
				line, err := pc.readLine()
				if err != nil {
					return err
				}
				if len(line) == 0 {
					return nil
				}
			}
		}
		if err := pc.copyN(w, size); err != nil {
			return err
		}
		if line, err := pc.readLine(); err != nil {
			return err
		} else if len(line) != 0 {
			return fmt.Errorf("%w: chunk data longer than its size", errMalformed)
		}
	}
}

func trimSpaceBytes(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// equalFold reports whether b equals the ASCII string s ignoring case.
func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		if lower(b[i]) != lower(s[i]) {
			return false
		}
	}
	return true
}

// hasToken reports whether the comma-separated list v holds token
// (case-insensitively).
func hasToken(v []byte, token string) bool {
	for len(v) > 0 {
		var item []byte
		if i := bytes.IndexByte(v, ','); i >= 0 {
			item, v = v[:i], v[i+1:]
		} else {
			item, v = v, nil
		}
		if equalFold(trimSpaceBytes(item), token) {
			return true
		}
	}
	return false
}

// cappedBuffer keeps the first 8 KiB written to it and drops the rest: an
// error body is read in full, but only its start is parsed.
type cappedBuffer struct{ b []byte }

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if room := 8<<10 - len(c.b); room > 0 {
		c.b = append(c.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

// responseError describes an unexpected response: its status, the
// x-ms-error-code header (or the code in the XML or JSON error body) and
// the first line of the error message.
func responseError(c *call, status int, h header, body []byte) *requestError {
	e := &requestError{Op: c.op, Method: c.method, Path: c.path, Status: status,
		Code: h.Get("x-ms-error-code")}
	if e.Code == "" {
		e.Code = between(body, "<Code>", "</Code>")
	}
	if e.Code == "" {
		e.Code = between(body, `"code":"`, `"`)
	}
	msg := between(body, "<Message>", "</Message>")
	if msg == "" {
		msg = between(body, `"value":"`, `"`)
	}
	if i := strings.IndexAny(msg, "\r\n"); i >= 0 {
		msg = msg[:i]
	}
	if i := strings.Index(msg, `\n`); i >= 0 { // escaped newline in JSON
		msg = msg[:i]
	}
	e.Message = strings.TrimSpace(msg)
	if e.Code == "" && e.Message == "" && !c.accepts(status) {
		e.Message = fmt.Sprintf("want status %d", c.want)
	}
	return e
}

// between returns the text of b between the first open and the next
// close, or "".
func between(b []byte, open, close string) string {
	i := bytes.Index(b, []byte(open))
	if i < 0 {
		return ""
	}
	rest := b[i+len(open):]
	j := bytes.Index(rest, []byte(close))
	if j < 0 {
		return ""
	}
	return string(rest[:j])
}

// escapeQuery escapes a query value with %20 for spaces, as the storage
// SDKs do (a "+" would not mean space to every server).
func escapeQuery(v string) string {
	return strings.ReplaceAll(url.QueryEscape(v), "+", "%20")
}

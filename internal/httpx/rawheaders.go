package httpx

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/textproto"
	"sync"
)

// Go's HTTP server canonicalizes header names ("x-ms-meta-MyKey" becomes
// "X-Ms-Meta-Mykey"), but Azure keeps the case of metadata names as the
// client sent them. RawConn records the bytes a connection reads so the
// original header names of each request can be recovered; bodies with a
// known length are skipped without being kept.

// maxRawBuffer bounds what one connection keeps while it looks for the
// next request's header block: twice the largest head the server accepts.
const maxRawBuffer = 128 << 10

// RawConn wraps a server-side connection and remembers its header blocks.
type RawConn struct {
	net.Conn
	mu   sync.Mutex
	buf  []byte
	skip int64 // body bytes of the previous request still to discard
	lost bool  // the buffer overflowed; resynchronize on the next request
}

// Read records what it reads.
func (c *RawConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.mu.Lock()
		b := p[:n]
		if c.skip > 0 {
			k := min(int64(len(b)), c.skip)
			c.skip -= k
			b = b[k:]
		}
		if len(c.buf)+len(b) > maxRawBuffer {
			// Keep the tail only: a header block is looked for from a
			// request line, so a lost prefix just means a resync.
			keep := maxRawBuffer / 2
			all := append(c.buf, b...)
			c.buf = append(c.buf[:0], all[len(all)-keep:]...)
			c.lost = true
		} else {
			c.buf = append(c.buf, b...)
		}
		c.mu.Unlock()
	}
	return n, err
}

// idleKeep is what Idle keeps of the recording: more than net/http can
// have read without consuming it (its 4 KiB read buffer, and the one byte
// of its background read).
const idleKeep = 8 << 10

// Idle tells the recorder that the connection's request is over (net/http's
// StateIdle). Everything it recorded but the last idleKeep bytes belongs to
// requests net/http has finished reading, so it goes, and a large buffer is
// let go of: an idle connection holds a few KiB, however large the chunked
// body its last request sent.
func (c *RawConn) Idle() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.buf) > idleKeep {
		c.buf = c.buf[len(c.buf)-idleKeep:]
	}
	if cap(c.buf) > 2*idleKeep {
		c.buf = append([]byte(nil), c.buf...)
	}
}

type rawConnKey struct{}

// ConnContext is an http.Server ConnContext hook that makes a RawConn
// reachable from its requests.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	if rc, ok := c.(*RawConn); ok {
		return context.WithValue(ctx, rawConnKey{}, rc)
	}
	return ctx
}

// RawListener wraps every accepted connection in a RawConn.
type RawListener struct{ net.Listener }

// Accept implements net.Listener.
func (l RawListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &RawConn{Conn: c}, nil
}

// rawHeaderNames returns the header names of r as sent, in order, or nil
// when they cannot be recovered (in-process requests, lost sync).
func rawHeaderNames(r *http.Request) []string { return rawHeaders(r, true) }

// rawHeaders drops r's header block (and known-length body) from the
// connection's buffer and, when names is set, returns the header names in
// it, as rawHeaderNames describes.
func rawHeaders(r *http.Request, names bool) []string {
	rc, ok := r.Context().Value(rawConnKey{}).(*RawConn)
	if !ok {
		return nil
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	start := findRequestLine(rc.buf, r)
	if start < 0 {
		return nil
	}
	end := bytes.Index(rc.buf[start:], []byte("\r\n\r\n"))
	if end < 0 {
		return nil
	}
	block := rc.buf[start : start+end]
	rest := rc.buf[start+end+4:]
	var out []string
	if names {
		lines := bytes.Split(block, []byte("\r\n"))
		for _, line := range lines[1:] {
			if i := bytes.IndexByte(line, ':'); i > 0 {
				out = append(out, string(line[:i]))
			}
		}
	}
	// Drop this request's header block and, when its length is known, its
	// body; a chunked body stays buffered and the next request's line is
	// searched for.
	switch cl := r.ContentLength; {
	case cl >= 0 && int64(len(rest)) >= cl:
		rest = rest[cl:]
	case cl >= 0:
		rc.skip = cl - int64(len(rest))
		rest = rest[:0]
	}
	rc.buf = append(rc.buf[:0], rest...)
	rc.lost = false
	return out
}

// findRequestLine finds where r's request line starts in b.
func findRequestLine(b []byte, r *http.Request) int {
	// The usual case: the buffer starts with this request's line.
	if hasRequestLine(b, r) {
		return 0
	}
	line := []byte("\r\n" + r.Method + " " + r.RequestURI + " HTTP/")
	i := bytes.Index(b, line)
	if i < 0 {
		return -1
	}
	return i + 2
}

// hasRequestLine reports whether b starts with "<method> <uri> HTTP/" of r.
func hasRequestLine(b []byte, r *http.Request) bool {
	m, u := r.Method, r.RequestURI
	n := len(m) + 1 + len(u) + 1
	if len(b) < n+len("HTTP/") || string(b[:len(m)]) != m || b[len(m)] != ' ' ||
		string(b[len(m)+1:len(m)+1+len(u)]) != u || b[n-1] != ' ' {
		return false
	}
	return string(b[n:n+len("HTTP/")]) == "HTTP/"
}

// restoreMetadataCase re-keys x-ms-meta-* headers under the names the
// client sent, so services see "x-ms-meta-MyKey" rather than the
// canonicalized "X-Ms-Meta-Mykey".
func restoreMetadataCase(r *http.Request) {
	var raw []string
	for k := range r.Header {
		if isMetaHeader(k) {
			raw = rawHeaderNames(r)
			break
		}
	}
	if raw == nil {
		// Still consume this request's header block so the next request
		// on the connection is found quickly.
		rawHeaders(r, false)
		return
	}
	for _, name := range raw {
		if !isMetaHeader(name) {
			continue
		}
		canon := textproto.CanonicalMIMEHeaderKey(name)
		if canon == name {
			continue
		}
		if vs, ok := r.Header[canon]; ok {
			delete(r.Header, canon)
			r.Header[name] = vs
		}
	}
}

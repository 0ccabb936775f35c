package h1

import (
	"fmt"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"
)

// response is the http.ResponseWriter of one request.
//
// The handler's headers are serialized when the status is fixed
// (WriteHeader, or the first Write); the head goes out with the first
// pendingMax bytes of body or when the handler returns, whichever is first,
// so that a small response gets a Content-Length and leaves in one write.
type response struct {
	c      *conn
	ex     *exchange
	header http.Header

	status        int
	contentLength int64 // declared or computed; -1 unknown
	written       int64
	te            string   // the handler's Transfer-Encoding
	connVals      []string // the handler's Connection values

	wroteHeader bool // the status is fixed
	committed   bool // the head has been written
	bodyAllowed bool
	isHEAD      bool
	chunking    bool
	closeAfter  bool // close the connection after this response
	noContinue  bool // the handler sent 100 itself
	fullDuplex  bool
	hasCT       bool
	hasCE       bool
	hasDate     bool
	hasConn     bool
}

func (w *response) init(c *conn, ex *exchange) {
	w.c = c
	w.ex = ex
	w.contentLength = -1
	w.isHEAD = ex.req.Method == http.MethodHead
	w.closeAfter = ex.req.Close
}

// Header returns the response header map.
func (w *response) Header() http.Header {
	if w.header == nil {
		w.header = make(http.Header, 8)
	}
	return w.header
}

func bodyAllowedForStatus(code int) bool {
	switch {
	case code >= 100 && code <= 199:
		return false
	case code == http.StatusNoContent, code == http.StatusNotModified:
		return false
	}
	return true
}

// WriteHeader fixes the status (the first call wins). Informational codes
// other than 101 are sent at once with the current headers.
func (w *response) WriteHeader(code int) {
	if code < 100 || code > 999 {
		panic(fmt.Sprintf("invalid WriteHeader code %v", code))
	}
	if w.wroteHeader {
		w.c.srv.logf("h1: superfluous response.WriteHeader call (status %d after %d)", code, w.status)
		return
	}
	if code < 200 && code != http.StatusSwitchingProtocols {
		if code == http.StatusContinue {
			w.noContinue = true
		}
		out := w.c.getOut()
		b := appendStatusLine(out.head[:0], w.ex.protoMinor, code)
		for k, vs := range w.header {
			if k == "Content-Length" || k == "Transfer-Encoding" || !validFieldName(k) {
				continue
			}
			for _, v := range vs {
				b = appendField(b, k, v)
			}
		}
		b = append(b, '\r', '\n')
		out.head = b[:0]
		if _, err := out.bw.Write(b); err != nil {
			w.c.werr = err
		}
		w.c.flush()
		return
	}
	w.wroteHeader = true
	w.status = code
	w.bodyAllowed = bodyAllowedForStatus(code)

	out := w.c.getOut()
	b := out.head[:0]
	for k, vs := range w.header {
		switch k {
		case "Content-Length":
			if len(vs) > 0 {
				n, err := strconv.ParseInt(vs[0], 10, 64)
				if err != nil || n < 0 {
					w.c.srv.logf("h1: invalid Content-Length of %q", vs[0])
				} else {
					w.contentLength = n
				}
			}
			continue
		case "Transfer-Encoding":
			if len(vs) > 0 {
				w.te = vs[0]
			}
			continue
		case "Connection":
			w.hasConn = true
			w.connVals = vs
			continue
		case "Content-Type":
			w.hasCT = true
			if code == http.StatusNotModified {
				continue
			}
		case "Content-Encoding":
			w.hasCE = len(vs) > 0 && vs[0] != ""
		case "Date":
			w.hasDate = true
		}
		if !validFieldName(k) {
			continue
		}
		for _, v := range vs {
			b = appendField(b, k, v)
		}
	}
	out.head = b
}

// appendField appends "k: v\r\n" with CR and LF in v turned into spaces
// and surrounding whitespace trimmed, as net/http writes header values.
func appendField(b []byte, k, v string) []byte {
	b = append(b, k...)
	b = append(b, ':', ' ')
	clean := true
	for i := 0; i < len(v); i++ {
		if v[i] == '\r' || v[i] == '\n' {
			clean = false
			break
		}
	}
	if clean {
		b = append(b, trimOWS(v)...)
	} else {
		start := len(b)
		for i := 0; i < len(v); i++ {
			c := v[i]
			if c == '\r' || c == '\n' {
				c = ' '
			}
			b = append(b, c)
		}
		t := trimOWS(string(b[start:]))
		b = append(b[:start], t...)
	}
	return append(b, '\r', '\n')
}

func appendStatusLine(b []byte, minor, code int) []byte {
	if minor == 0 {
		b = append(b, "HTTP/1.0 "...)
	} else {
		b = append(b, "HTTP/1.1 "...)
	}
	text := http.StatusText(code)
	if code < 100 {
		b = append(b, '0')
	}
	b = strconv.AppendInt(b, int64(code), 10)
	b = append(b, ' ')
	if text == "" {
		b = append(b, "status code "...)
		b = strconv.AppendInt(b, int64(code), 10)
	} else {
		b = append(b, text...)
	}
	return append(b, '\r', '\n')
}

type dateEntry struct {
	sec int64
	b   []byte
}

var dateCache atomic.Pointer[dateEntry]

func appendDate(b []byte) []byte {
	now := time.Now()
	sec := now.Unix()
	d := dateCache.Load()
	if d == nil || d.sec != sec {
		d = &dateEntry{sec: sec, b: now.UTC().AppendFormat(nil, http.TimeFormat)}
		dateCache.Store(d)
	}
	return append(b, d.b...)
}

// settleBody decides, before the head is written, what becomes of a request
// body the handler has not read to its end: a small rest is read and
// dropped, anything else closes the connection.
func (w *response) settleBody() {
	b := w.ex.body
	if b == nil || b.sawEOF || w.closeAfter {
		return
	}
	if b.expect || b.continued {
		// The client offered a body on 100-continue and the handler did
		// not take all of it.
		w.closeAfter = true
		return
	}
	if !b.drain() {
		w.closeAfter = true
	}
}

// commit writes the response head. final is set when the handler has
// returned and data is then the whole body; otherwise data is the start
// of the body, for sniffing.
func (w *response) commit(final bool, data []byte) {
	w.committed = true
	c := w.c
	ex := w.ex
	hasTE := w.te != ""
	if final && !hasTE && w.bodyAllowed && w.contentLength == -1 && (!w.isHEAD || len(data) > 0) {
		w.contentLength = int64(len(data))
	}
	if len(w.connVals) > 0 && w.connVals[0] == "close" {
		w.closeAfter = true
	}
	if c.srv.shutdown.Load() {
		w.closeAfter = true
	}
	if !w.fullDuplex {
		w.settleBody()
	}
	addKeepAlive := false
	if ex.wants10Keep && (w.isHEAD || w.contentLength != -1 || !w.bodyAllowed) {
		addKeepAlive = !w.hasConn
	} else if ex.protoMinor == 0 || ex.req.Close {
		w.closeAfter = true
	}
	var ctype string
	if w.bodyAllowed && !w.hasCT && !w.hasCE && !hasTE && len(data) > 0 {
		ctype = http.DetectContentType(data)
	}
	switch {
	case w.isHEAD || !w.bodyAllowed:
	case w.contentLength != -1:
	case ex.protoMinor >= 1:
		if w.te == "identity" {
			w.closeAfter = true
		} else {
			w.chunking = true
		}
	default:
		w.closeAfter = true
	}

	out := c.out
	bw := out.bw
	var scratch [256]byte
	b := appendStatusLine(scratch[:0], ex.protoMinor, w.status)
	if w.bodyAllowed && w.contentLength != -1 {
		b = append(b, "Content-Length: "...)
		b = strconv.AppendInt(b, w.contentLength, 10)
		b = append(b, '\r', '\n')
	}
	if w.chunking {
		b = append(b, "Transfer-Encoding: chunked\r\n"...)
	}
	if ctype != "" {
		b = append(b, "Content-Type: "...)
		b = append(b, ctype...)
		b = append(b, '\r', '\n')
	}
	if !w.hasDate {
		b = append(b, "Date: "...)
		b = appendDate(b)
		b = append(b, '\r', '\n')
	}
	if w.closeAfter && !hasToken(w.connVals, "close") {
		if ex.protoMinor >= 1 {
			b = append(b, "Connection: close\r\n"...)
		}
	} else {
		for _, v := range w.connVals {
			b = appendField(b, "Connection", v)
		}
		if addKeepAlive {
			b = append(b, "Connection: keep-alive\r\n"...)
		}
	}
	bw.Write(b)
	bw.Write(out.head)
	if _, err := bw.Write([]byte("\r\n")); err != nil && c.werr == nil {
		c.werr = err
	}
}

// writeBody frames p onto the connection.
func (w *response) writeBody(p []byte) {
	if w.isHEAD || len(p) == 0 {
		return
	}
	c := w.c
	bw := c.out.bw
	var err error
	if w.chunking {
		var hb [20]byte
		h := strconv.AppendInt(hb[:0], int64(len(p)), 16)
		h = append(h, '\r', '\n')
		bw.Write(h)
		bw.Write(p)
		_, err = bw.Write(hb[len(h)-2 : len(h)])
	} else {
		_, err = bw.Write(p)
	}
	if err != nil && c.werr == nil {
		c.werr = err
	}
}

// Write sends body bytes (after an implicit WriteHeader(200)).
func (w *response) Write(p []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if len(p) == 0 {
		return 0, nil
	}
	if !w.bodyAllowed {
		return 0, http.ErrBodyNotAllowed
	}
	w.written += int64(len(p))
	if w.contentLength != -1 && w.written > w.contentLength {
		return 0, http.ErrContentLength
	}
	c := w.c
	if c.werr != nil {
		return 0, c.werr
	}
	if !w.committed {
		out := c.out
		if len(out.pending)+len(p) <= pendingMax {
			out.pending = append(out.pending, p...)
			return len(p), nil
		}
		var sniff []byte
		if !w.hasCT {
			var buf [512]byte
			n := copy(buf[:], out.pending)
			n += copy(buf[n:], p)
			sniff = buf[:n]
		}
		w.commit(false, sniff)
		w.writeBody(out.pending)
		out.pending = out.pending[:0]
	}
	w.writeBody(p)
	if c.werr != nil {
		return 0, c.werr
	}
	return len(p), nil
}

// WriteString is Write for a string, without converting it first when it
// fits the pending buffer.
func (w *response) WriteString(s string) (int, error) {
	if w.wroteHeader && w.bodyAllowed && !w.committed && w.c.werr == nil &&
		len(w.c.out.pending)+len(s) <= pendingMax &&
		(w.contentLength == -1 || w.written+int64(len(s)) <= w.contentLength) {
		w.written += int64(len(s))
		w.c.out.pending = append(w.c.out.pending, s...)
		return len(s), nil
	}
	return w.Write([]byte(s))
}

// commitPending writes the head (a 200 if the handler chose none) and the
// body held back so far, unless the head is already out; final says the
// handler has returned, so the held body is all there is.
func (w *response) commitPending(final bool) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if !w.committed {
		out := w.c.out
		w.commit(final, out.pending)
		w.writeBody(out.pending)
		out.pending = out.pending[:0]
	}
}

// FlushError sends the head and what body has been written so far.
func (w *response) FlushError() error {
	w.commitPending(false)
	w.c.flush()
	return w.c.werr
}

// Flush implements http.Flusher.
func (w *response) Flush() { w.FlushError() }

// SetReadDeadline sets the connection's read deadline (for
// http.ResponseController).
func (w *response) SetReadDeadline(t time.Time) error { return w.c.rwc.SetReadDeadline(t) }

// SetWriteDeadline sets the connection's write deadline (for
// http.ResponseController).
func (w *response) SetWriteDeadline(t time.Time) error { return w.c.rwc.SetWriteDeadline(t) }

// EnableFullDuplex lets the handler keep reading the request body after
// it has started the response (for http.ResponseController).
func (w *response) EnableFullDuplex() error {
	w.fullDuplex = true
	return nil
}

// finish completes the response after the handler has returned.
func (w *response) finish() {
	w.commitPending(true)
	c := w.c
	if w.chunking && !w.isHEAD {
		if _, err := c.out.bw.Write([]byte("0\r\n\r\n")); err != nil && c.werr == nil {
			c.werr = err
		}
	}
	if !w.isHEAD && w.contentLength != -1 && w.bodyAllowed && w.contentLength != w.written {
		// The client was promised other than what it got.
		w.closeAfter = true
	}
	if !w.closeAfter {
		w.settleBody()
	}
	if c.werr != nil {
		w.closeAfter = true
	}
}

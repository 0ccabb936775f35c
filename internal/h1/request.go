package h1

import (
	"bufio"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// exchange is one request and its response, allocated together.
type exchange struct {
	req          *http.Request
	w            response
	body         *body // nil without a body
	bodyStore    body
	wants10Keep  bool // an HTTP/1.0 request that asked for keep-alive
	expectFailed bool // an Expect the server cannot meet
	protoMinor   int
	te           [1]string
}

// readLine returns the next line without its line ending (LF or CRLF). The
// slice is valid until the next read. n counts the bytes of the head so far;
// a line longer than limit fails with tooLong, a head longer than
// MaxHeaderBytes with errHeadTooLarge, and a head the server's budget
// cannot hold with errOverBudget.
func (c *conn) readLine(n *int, limit int, tooLong error) ([]byte, error) {
	line, err := c.br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		c.line = append(c.line[:0], line...)
		for err == bufio.ErrBufferFull {
			if len(c.line) > limit {
				return nil, tooLong
			}
			if *n+len(c.line) > MaxHeaderBytes {
				return nil, errHeadTooLarge
			}
			if err := c.chargeHead(*n + len(c.line)); err != nil {
				return nil, err
			}
			line, err = c.br.ReadSlice('\n')
			c.line = append(c.line, line...)
		}
		line = c.line
	}
	*n += len(line)
	if len(line) > limit+2 {
		return nil, tooLong
	}
	if *n > MaxHeaderBytes {
		return nil, errHeadTooLarge
	}
	if err := c.chargeHead(*n); err != nil {
		return nil, err
	}
	if err != nil {
		return nil, readErr(err)
	}
	line = line[:len(line)-1]
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	return line, nil
}

// readRequest reads a request line and header block and prepares the
// request, its body and its response writer.
func (c *conn) readRequest() (*exchange, error) {
	n := 0
	c.method, c.target, c.line = "", "", c.line[:0]
	// The request line: the target and up to 17 bytes of method and
	// version around it.
	line, err := c.readLine(&n, MaxURIBytes+32, errURITooLong)
	if err != nil {
		return nil, err
	}
	// Request line: method SP request-target SP HTTP-version.
	sp1 := indexByte(line, ' ')
	if sp1 < 0 {
		return nil, badRequest("malformed HTTP request")
	}
	sp2 := indexByte(line[sp1+1:], ' ')
	if sp2 < 0 {
		return nil, badRequest("malformed HTTP request")
	}
	sp2 += sp1 + 1
	mb, ub, pb := line[:sp1], line[sp1+1:sp2], line[sp2+1:]
	if len(ub) > MaxURIBytes {
		return nil, errURITooLong
	}
	major, minor, ok := parseVersion(pb)
	if !ok {
		return nil, badRequest("malformed HTTP version")
	}
	if len(mb) == 0 || !allToken(mb) {
		return nil, badRequest("invalid method")
	}
	if major != 1 {
		return nil, errVersion
	}
	method := internMethod(mb)
	rawURI := string(ub)
	c.method, c.target = method, rawURI
	proto := "HTTP/1.1"
	if minor == 0 {
		proto = "HTTP/1.0"
	} else if minor != 1 {
		proto = string(pb)
	}

	ex := &exchange{protoMinor: minor}
	hdr, err := c.readHeader(&n)
	if err != nil {
		return nil, err
	}

	uri := rawURI
	justAuthority := method == http.MethodConnect && !strings.HasPrefix(uri, "/")
	if justAuthority {
		uri = "http://" + uri
	}
	u, err := url.ParseRequestURI(uri)
	if err != nil {
		return nil, badRequest("invalid request URI")
	}
	if justAuthority {
		u.Scheme = ""
	}

	// Host.
	hosts, haveHost := hdr["Host"]
	if minor >= 1 && len(hosts) == 0 && method != http.MethodConnect {
		return nil, badRequest("missing required Host header")
	}
	if len(hosts) > 1 {
		return nil, badRequest("too many Host headers")
	}
	if len(hosts) == 1 && !validHost(hosts[0]) {
		return nil, badRequest("malformed Host header")
	}
	host := u.Host
	if host == "" && len(hosts) > 0 {
		host = hosts[0]
	}
	if haveHost {
		delete(hdr, "Host")
	}
	if pragma, ok := hdr["Pragma"]; ok && len(pragma) > 0 && pragma[0] == "no-cache" {
		if _, ok := hdr["Cache-Control"]; !ok {
			hdr["Cache-Control"] = []string{"no-cache"}
		}
	}

	// Connection.
	conns := hdr["Connection"]
	hasClose := hasToken(conns, "close")
	closing := hasClose
	if minor == 0 {
		keep := hasToken(conns, "keep-alive")
		closing = hasClose || !keep
		ex.wants10Keep = keep && !hasClose
	}

	// Framing of the body.
	chunked := false
	if te, ok := hdr["Transfer-Encoding"]; ok {
		delete(hdr, "Transfer-Encoding")
		if minor >= 1 {
			// Exactly "chunked", as net/http takes it: a value that
			// obsolete folding left "chunked " is not.
			if len(te) != 1 || !strings.EqualFold(te[0], "chunked") {
				return nil, errUnsupportedTE
			}
			chunked = true
		}
	}
	var length int64
	if cls, ok := hdr["Content-Length"]; ok {
		if chunked {
			return nil, badRequest("Transfer-Encoding and Content-Length together")
		}
		first := trimOWS(cls[0])
		for _, v := range cls[1:] {
			if trimOWS(v) != first {
				return nil, badRequest("multiple differing Content-Length headers")
			}
		}
		if len(cls) > 1 {
			hdr["Content-Length"] = cls[:1:1]
		}
		if first == "" {
			return nil, badRequest("invalid empty Content-Length")
		}
		v, err := strconv.ParseUint(first, 10, 63)
		if err != nil {
			return nil, badRequest("bad Content-Length")
		}
		length = int64(v)
	}

	tmp := http.Request{
		Method:     method,
		URL:        u,
		Proto:      proto,
		ProtoMajor: 1,
		ProtoMinor: minor,
		Header:     hdr,
		Host:       host,
		RemoteAddr: c.remoteAddr,
		RequestURI: rawURI,
		Close:      closing,
		TLS:        c.tlsState,
		Body:       http.NoBody,
	}
	switch {
	case chunked:
		ex.te[0] = "chunked"
		tmp.TransferEncoding = ex.te[:]
		tmp.ContentLength = -1
		ex.bodyStore = body{c: c, chunked: true}
	case length > 0:
		tmp.ContentLength = length
		ex.bodyStore = body{c: c, remaining: length}
	}
	if chunked || length > 0 {
		ex.body = &ex.bodyStore
		tmp.Body = ex.body
		// Body reads have no overall deadline (uploads stream), only the
		// progress timeout of each read.
		c.inBody = true
		c.rwc.SetReadDeadline(time.Now().Add(c.srv.progressTimeout()))
	}

	if exp, ok := hdr["Expect"]; ok && len(exp) > 0 && exp[0] != "" {
		if containsWord(exp[0], "100-continue") {
			if minor >= 1 && ex.body != nil {
				ex.body.expect = true
			}
		} else {
			ex.expectFailed = true
		}
	}

	ex.req = tmp.WithContext(c.ctx)
	if ex.body != nil {
		ex.body.w = &ex.w
	}
	ex.w.init(c, ex)
	return ex, nil
}

// readHeader reads header fields up to the empty line, with names
// canonicalized and values trimmed, as net/textproto does (obsolete line
// folding included: a continuation joins the previous value with a space).
func (c *conn) readHeader(n *int) (http.Header, error) {
	hint := countLines(c.br)
	hdr := make(http.Header, hint)
	var strs []string
	if hint > 0 {
		strs = make([]string, hint)
	}
	var lastKey string
	firstLine := true
	for {
		line, err := c.readLine(n, MaxFieldBytes, errFieldTooLong)
		if err != nil {
			return nil, err
		}
		if len(line) == 0 {
			return hdr, nil
		}
		if line[0] == ' ' || line[0] == '\t' {
			if firstLine {
				return nil, badRequest("malformed MIME header initial line")
			}
			// Obsolete line folding: part of the previous value.
			v := trimBytes(line)
			if !validValue(v) {
				return nil, badRequest("malformed MIME header line")
			}
			// Joined with one space, even when empty, as net/textproto
			// joins them.
			vs := hdr[lastKey]
			if prev := vs[len(vs)-1]; prev != "" {
				vs[len(vs)-1] = prev + " " + string(v)
			} else {
				vs[len(vs)-1] = string(v)
			}
			continue
		}
		firstLine = false
		colon := indexByte(line, ':')
		if colon < 0 {
			return nil, badRequest("malformed MIME header: missing colon")
		}
		key, ok := canonicalKey(line[:colon])
		if !ok {
			return nil, badRequest("malformed MIME header line")
		}
		v := trimBytes(line[colon+1:])
		if !validValue(v) {
			return nil, badRequest("malformed MIME header line")
		}
		value := internValue(v)
		if isMetaName(key) && key != string(line[:colon]) {
			// Azure keeps the case of metadata names as sent.
			key = c.metaName(hdr, key, line[:colon])
		}
		lastKey = key
		vs, seen := hdr[key]
		if !seen && len(strs) > 0 {
			vs, strs = strs[:1:1], strs[1:]
			vs[0] = value
			hdr[key] = vs
		} else {
			hdr[key] = append(vs, value)
		}
	}
}

// isMetaName reports whether a canonical header name is x-ms-meta-*.
func isMetaName(key string) bool {
	return len(key) > len("X-Ms-Meta-") && key[:len("X-Ms-Meta-")] == "X-Ms-Meta-"
}

// metaName returns the key under which a metadata header is kept: the
// name as the client sent it, or the spelling an earlier header of the same
// name (compared without case) already has in hdr.
func (c *conn) metaName(hdr http.Header, canon string, raw []byte) string {
	if _, ok := hdr[canon]; ok {
		return canon
	}
	for k := range hdr {
		if len(k) == len(raw) && strings.EqualFold(k, string(raw)) {
			return k
		}
	}
	return string(raw)
}

// countLines estimates the number of header lines already buffered.
func countLines(br *bufio.Reader) int {
	b, _ := br.Peek(br.Buffered())
	n := 0
	for i := 0; i < len(b); i++ {
		if b[i] == '\n' {
			if i+1 < len(b) && (b[i+1] == '\n' || b[i+1] == '\r') {
				break
			}
			n++
		}
	}
	return min(n, 1000)
}

func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}

// parseVersion parses "HTTP/d.d".
func parseVersion(b []byte) (major, minor int, ok bool) {
	if len(b) != 8 || string(b[:5]) != "HTTP/" || b[6] != '.' ||
		b[5] < '0' || b[5] > '9' || b[7] < '0' || b[7] > '9' {
		return 0, 0, false
	}
	return int(b[5] - '0'), int(b[7] - '0'), true
}

func internMethod(b []byte) string {
	switch string(b) {
	case "GET":
		return http.MethodGet
	case "PUT":
		return http.MethodPut
	case "POST":
		return http.MethodPost
	case "HEAD":
		return http.MethodHead
	case "DELETE":
		return http.MethodDelete
	case "OPTIONS":
		return http.MethodOptions
	case "PATCH":
		return http.MethodPatch
	case "MERGE":
		return "MERGE"
	}
	return string(b)
}

// internValue returns v as a string, sharing the common ones.
func internValue(v []byte) string {
	switch len(v) {
	case 0:
		return ""
	case 1:
		if v[0] == '0' {
			return "0"
		}
	}
	switch string(v) {
	case "keep-alive":
		return "keep-alive"
	case "close":
		return "close"
	case "application/xml":
		return "application/xml"
	case "application/json":
		return "application/json"
	case "gzip":
		return "gzip"
	case "*/*":
		return "*/*"
	case "application/json;odata=minimalmetadata":
		return "application/json;odata=minimalmetadata"
	case "application/json;odata=nometadata":
		return "application/json;odata=nometadata"
	case "application/json;odata=fullmetadata":
		return "application/json;odata=fullmetadata"
	case "return-no-content":
		return "return-no-content"
	case "return-content":
		return "return-content"
	case "application/octet-stream":
		return "application/octet-stream"
	case "3.0;NetFx":
		return "3.0;NetFx"
	case "BlockBlob":
		return "BlockBlob"
	}
	return string(v)
}

// trimBytes drops surrounding spaces and tabs (a header value's OWS; a CR
// left in a line makes the value invalid, as with net/http).
func trimBytes(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

func trimOWS(s string) string {
	for len(s) > 0 && isSpace(s[0]) {
		s = s[1:]
	}
	for len(s) > 0 && isSpace(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	return s
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// validValue reports whether a header value has no control bytes other
// than tab.
func validValue(v []byte) bool {
	for _, c := range v {
		if c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

// validHost reports whether a Host header has only the bytes a host (with
// port, IPv6 literal or zone) can contain.
func validHost(h string) bool {
	for i := 0; i < len(h); i++ {
		if !hostByte[h[i]] {
			return false
		}
	}
	return true
}

var hostByte = func() (t [256]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
		t[c-'a'+'A'] = true
	}
	for _, c := range "!$%&'()*+,-.:;=[]_~" {
		t[c] = true
	}
	return t
}()

// containsWord reports whether v holds word, case-insensitively, with a
// space, tab, comma or an end of v on each side: the looser reading net/http
// gives the Expect header ("100-continue 0" expects a continue), which h1
// follows so that the two never disagree on whether a request is served.
func containsWord(v, word string) bool {
	boundary := func(c byte) bool { return c == ' ' || c == ',' || c == '\t' }
	for i := 0; i+len(word) <= len(v); i++ {
		if !strings.EqualFold(v[i:i+len(word)], word) {
			continue
		}
		if (i == 0 || boundary(v[i-1])) && (i+len(word) == len(v) || boundary(v[i+len(word)])) {
			return true
		}
	}
	return false
}

// hasToken reports whether a comma-separated header list has the token,
// case-insensitively.
func hasToken(vs []string, token string) bool {
	for _, v := range vs {
		for v != "" {
			var item string
			item, v, _ = strings.Cut(v, ",")
			if strings.EqualFold(trimOWS(item), token) {
				return true
			}
		}
	}
	return false
}

package main

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/lazuli-storage/lazuli/internal/auth/sharedkey"
)

// target is one storage endpoint under test, with its own connection pool.
type target struct {
	name    string
	acct    *account
	version string
	hc      *http.Client
}

// newTarget builds the HTTP client for a target. The transport keeps at
// least one idle connection per concurrent client for every service host,
// so connections are reused instead of redialled, and it does no
// compression or proxying: the client should cost as little CPU as it can.
func newTarget(name string, a *account, version string, concurrency int, timeout time.Duration) *target {
	tr := &http.Transport{
		DialContext: (&net.Dialer{
			Timeout:   10 * time.Second,
			KeepAlive: 30 * time.Second,
		}).DialContext,
		MaxIdleConnsPerHost: 2*concurrency + 8,
		// Node.js servers (the reference emulator) close a keep-alive
		// connection after 5 s idle; dropping ours first keeps requests off
		// connections the server is closing (net/http retries only GET and
		// HEAD when that happens, so a DELETE would fail).
		IdleConnTimeout:       4 * time.Second,
		ResponseHeaderTimeout: timeout,
		DisableCompression:    true,
		WriteBufferSize:       64 << 10,
		ReadBufferSize:        64 << 10,
	}
	return &target{name: name, acct: a, version: version, hc: &http.Client{Transport: tr, Timeout: timeout}}
}

// close drops the idle connections of the target.
func (t *target) close() { t.hc.CloseIdleConnections() }

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
	hdr    []string // extra header name/value pairs
}

// request builds the signed *http.Request for c.
func (t *target) request(c *call) (*http.Request, error) {
	u := *c.base
	u.Path = c.base.Path + c.path
	// Keep characters such as ( ) ' , exactly as written, the way the
	// storage SDKs send Table entity paths.
	u.RawPath = u.Path
	u.RawQuery = c.query
	r := &http.Request{
		Method:     c.method,
		URL:        &u,
		Proto:      "HTTP/1.1",
		ProtoMajor: 1,
		ProtoMinor: 1,
		Header:     make(http.Header, 12),
		Host:       u.Host,
	}
	if c.body != nil {
		body := c.body
		r.ContentLength = int64(len(body))
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	h := r.Header
	h.Set("X-Ms-Version", t.version) // canonical spelling: no rewrite on Set
	if c.table {
		h.Set("Accept", "application/json;odata=nometadata")
		h.Set("DataServiceVersion", "3.0")
		h.Set("MaxDataServiceVersion", "3.0;NetFx")
		if c.body != nil {
			h.Set("Content-Type", "application/json")
		}
	}
	for i := 0; i+1 < len(c.hdr); i += 2 {
		h.Set(c.hdr[i], c.hdr[i+1])
	}
	if err := sharedkey.Sign(r, t.acct.Name, t.acct.Key, c.table); err != nil {
		return nil, err
	}
	return r, nil
}

// do sends c, checks the status and returns the response headers. The
// response body is read into into when into is not nil, else discarded.
func (t *target) do(c *call, into *bytes.Buffer) (http.Header, error) {
	r, err := t.request(c)
	if err != nil {
		return nil, &requestError{Op: c.op, Method: c.method, Path: c.path, Message: err.Error()}
	}
	resp, err := t.hc.Do(r)
	if err != nil {
		return nil, &requestError{Op: c.op, Method: c.method, Path: c.path, Message: err.Error()}
	}
	defer resp.Body.Close()
	if resp.StatusCode != c.want {
		return resp.Header, responseError(c, resp)
	}
	if into != nil {
		into.Reset()
		_, err = into.ReadFrom(resp.Body)
	} else {
		_, err = io.Copy(io.Discard, resp.Body)
	}
	if err != nil {
		return nil, &requestError{Op: c.op, Method: c.method, Path: c.path, Status: resp.StatusCode,
			Message: "reading body: " + err.Error()}
	}
	return resp.Header, nil
}

// responseError describes an unexpected response: its status, the
// x-ms-error-code header (or the code in the XML or JSON error body) and
// the first line of the error message.
func responseError(c *call, resp *http.Response) *requestError {
	e := &requestError{Op: c.op, Method: c.method, Path: c.path, Status: resp.StatusCode,
		Code: resp.Header.Get("x-ms-error-code")}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 8<<10))
	_, _ = io.Copy(io.Discard, resp.Body)
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
	if e.Code == "" && e.Message == "" && c.want != resp.StatusCode {
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

// Package robustness_test sends malformed raw HTTP requests to the Blob,
// Queue and Table services and checks that every one of them is refused the
// Azure way: a 4xx status, an x-ms-error-code header, the service's error
// body (XML, or OData JSON for Table) except on HEAD, no hang, and no
// partial write left behind.
package robustness_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/conformance/harness"
	"github.com/lazuli-storage/lazuli/internal/auth/sharedkey"
)

// svc names one of the three services under test.
type svc int

const (
	blobSvc svc = iota
	queueSvc
	tableSvc
)

func (s svc) String() string { return [...]string{"blob", "queue", "table"}[s] }

func (s svc) base(tg *harness.Target) string {
	switch s {
	case blobSvc:
		return tg.BlobURL
	case queueSvc:
		return tg.QueueURL
	}
	return tg.TableURL
}

// requestTimeout bounds every request: a handler that does not answer in
// this time counts as a hang (generous: a 10 MB body is parsed under the
// race detector on a loaded machine).
const requestTimeout = 60 * time.Second

// reply is a fully read response.
type reply struct {
	Status int
	Header http.Header
	Body   []byte
}

func (r *reply) code() string { return r.Header.Get("x-ms-error-code") }

func (r *reply) String() string {
	b := r.Body
	if len(b) > 600 {
		b = append(b[:600:600], "..."...)
	}
	return http.StatusText(r.Status) + " (" + strconv.Itoa(r.Status) + ") x-ms-error-code=" + r.code() + " body=" + string(b)
}

// call is one raw request. Path is appended to the service URL (which
// already names the account) after a slash and must be escaped as it goes
// on the wire; Header values replace the defaults, and an empty value
// removes a default header.
type call struct {
	Svc    svc
	Method string
	Path   string
	Header map[string]string
	Body   []byte
	// Add holds extra header values added after Header (for repeated
	// headers).
	Add [][2]string
	// Unsigned sends the request without an Authorization header.
	Unsigned bool
}

// defaults are the headers every request of a service starts with.
func defaults(s svc) map[string]string {
	switch s {
	case tableSvc:
		return map[string]string{
			"x-ms-version":       "2019-02-02",
			"DataServiceVersion": "3.0",
			"Accept":             "application/json;odata=minimalmetadata",
		}
	}
	return map[string]string{"x-ms-version": "2025-01-05"}
}

// build turns c into a signed *http.Request.
func build(ctx context.Context, tg *harness.Target, c call) (*http.Request, error) {
	var rd io.Reader
	if c.Body != nil {
		rd = bytes.NewReader(c.Body)
	}
	req, err := http.NewRequestWithContext(ctx, c.Method, c.Svc.base(tg)+"/"+c.Path, rd)
	if err != nil {
		return nil, err
	}
	if c.Body != nil {
		req.ContentLength = int64(len(c.Body))
	}
	h := defaults(c.Svc)
	if c.Svc == tableSvc && len(c.Body) > 0 {
		h["Content-Type"] = "application/json"
	}
	for k, v := range c.Header {
		h[k] = v
	}
	for k, v := range h {
		if v != "" {
			req.Header.Set(k, v)
		}
	}
	for _, kv := range c.Add {
		req.Header.Add(kv[0], kv[1])
	}
	if !c.Unsigned {
		if err := sharedkey.Sign(req, tg.Account, tg.KeyBytes(), c.Svc == tableSvc); err != nil {
			return nil, err
		}
	}
	return req, nil
}

// send performs c and reads the whole response. A transport error or a
// response that takes longer than requestTimeout fails the test.
func send(t testing.TB, tg *harness.Target, c call) *reply {
	t.Helper()
	r, err := try(tg, c)
	if err != nil {
		t.Fatalf("%s %s %s: %v", c.Svc, c.Method, c.Path, err)
	}
	return r
}

// try is send without a test: it returns the transport error.
func try(tg *harness.Target, c call) (*reply, error) {
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	req, err := build(ctx, tg, c)
	if err != nil {
		return nil, err
	}
	resp, err := tg.HTTP.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	return &reply{Status: resp.StatusCode, Header: resp.Header, Body: b}, nil
}

// mustOK fails unless the reply is a 2xx.
func mustOK(t testing.TB, r *reply, what string) {
	t.Helper()
	if r.Status < 200 || r.Status > 299 {
		t.Fatalf("%s: %s", what, r)
	}
}

// errorShape returns "" when r is a well-formed Azure error response for a
// request of service s with method m, else what is wrong with it. It checks
// a 4xx status, the x-ms-error-code header, and (except on HEAD) an error
// body that names the same code: XML <Error><Code> for Blob and Queue and
// for Table's XML resources (ACL, service properties), OData JSON
// {"odata.error":{"code":...}} for the rest of Table.
func errorShape(s svc, m string, r *reply) string {
	if r.Status < 400 || r.Status > 499 {
		return "status is not 4xx"
	}
	code := r.code()
	if code == "" {
		return "no x-ms-error-code header"
	}
	if r.Header.Get("x-ms-request-id") == "" {
		return "no x-ms-request-id header"
	}
	if m == http.MethodHead {
		if len(r.Body) != 0 {
			return "HEAD error carries a body"
		}
		return ""
	}
	body := bytes.TrimSpace(r.Body)
	if s == tableSvc && !bytes.HasPrefix(body, []byte("<")) {
		var e struct {
			OData struct {
				Code    string `json:"code"`
				Message struct {
					Lang  string `json:"lang"`
					Value string `json:"value"`
				} `json:"message"`
			} `json:"odata.error"`
		}
		if err := json.Unmarshal(body, &e); err != nil {
			return "body is not OData JSON: " + err.Error()
		}
		if e.OData.Code != code {
			return "OData error code " + e.OData.Code + " differs from x-ms-error-code " + code
		}
		if e.OData.Message.Value == "" {
			return "OData error has no message"
		}
		if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
			return "OData error Content-Type is " + r.Header.Get("Content-Type")
		}
		return ""
	}
	var e struct {
		XMLName xml.Name `xml:"Error"`
		Code    string   `xml:"Code"`
		Message string   `xml:"Message"`
	}
	if err := xml.Unmarshal(body, &e); err != nil {
		return "body is not an XML Error: " + err.Error()
	}
	if e.Code != code {
		return "XML error code " + e.Code + " differs from x-ms-error-code " + code
	}
	if e.Message == "" {
		return "XML error has no message"
	}
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/xml") {
		return "XML error Content-Type is " + r.Header.Get("Content-Type")
	}
	return ""
}

// bad describes one malformed request and what it must get.
type bad struct {
	Name string
	call
	// Status, when not zero, is the exact status Azure answers.
	Status int
	// Codes, when not empty, lists the acceptable x-ms-error-code values.
	Codes []string
}

// refuse sends b and checks the refusal (status, code, body shape).
func refuse(t *testing.T, tg *harness.Target, b bad) {
	t.Helper()
	r := send(t, tg, b.call)
	if msg := errorShape(b.Svc, b.Method, r); msg != "" {
		t.Errorf("%s %s: %s: %s", b.Method, shorten(b.Path), msg, r)
		return
	}
	if b.Status != 0 && r.Status != b.Status {
		t.Errorf("%s %s: status %d, want %d: %s", b.Method, shorten(b.Path), r.Status, b.Status, r)
	}
	if len(b.Codes) > 0 {
		for _, c := range b.Codes {
			if r.code() == c {
				return
			}
		}
		t.Errorf("%s %s: x-ms-error-code %q, want one of %v: %s", b.Method, shorten(b.Path), r.code(), b.Codes, r)
	}
}

func shorten(s string) string {
	if len(s) > 120 {
		return s[:120] + "...(" + strconv.Itoa(len(s)) + " bytes)"
	}
	return s
}

// state captures what a service holds, as raw response bodies and the
// headers that describe the resource, so that a later capture can show that
// nothing changed.
type state []string

// capture reads every request of reads and records status, selected
// headers and body.
func capture(t testing.TB, tg *harness.Target, reads []call) state {
	t.Helper()
	var out state
	for _, c := range reads {
		r := send(t, tg, c)
		var sb strings.Builder
		sb.WriteString(c.Method + " " + c.Path + " -> " + strconv.Itoa(r.Status) + "\n")
		for _, h := range []string{"ETag", "Last-Modified", "Content-Length", "Content-Type", "x-ms-blob-type",
			"x-ms-lease-state", "x-ms-lease-status", "x-ms-approximate-messages-count", "x-ms-blob-committed-block-count"} {
			if v := r.Header.Get(h); v != "" {
				sb.WriteString(h + ": " + v + "\n")
			}
		}
		for k, v := range r.Header {
			if strings.HasPrefix(strings.ToLower(k), "x-ms-meta-") {
				sb.WriteString(k + ": " + strings.Join(v, ",") + "\n")
			}
		}
		sb.Write(r.Body)
		out = append(out, sb.String())
	}
	return out
}

// same fails when two captures differ.
func same(t *testing.T, what string, before, after state) {
	t.Helper()
	for i := range before {
		if i >= len(after) || before[i] != after[i] {
			a := ""
			if i < len(after) {
				a = after[i]
			}
			t.Errorf("%s changed the stored state:\nbefore: %s\nafter:  %s", what, clip(before[i]), clip(a))
			return
		}
	}
}

func clip(s string) string {
	if len(s) > 1500 {
		return s[:1500] + "..."
	}
	return s
}

// runBad sends every case and after each one checks the state read by
// reads is unchanged.
func runBad(t *testing.T, tg *harness.Target, cases []bad, reads []call) {
	t.Helper()
	before := capture(t, tg, reads)
	for _, b := range cases {
		t.Run(b.Name, func(t *testing.T) {
			refuse(t, tg, b)
			after := capture(t, tg, reads)
			same(t, b.Name, before, after)
			before = after
		})
	}
}

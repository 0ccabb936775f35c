package robustness_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/conformance/harness"
	"github.com/lazuli-storage/lazuli/internal/auth/sharedkey"
)

var errClientGone = errors.New("client gave up mid-body")

// cutReader yields the first n bytes of data and then fails, as a client
// that dies in the middle of an upload.
type cutReader struct {
	data []byte
	n    int
}

func (c *cutReader) Read(p []byte) (int, error) {
	if c.n == 0 {
		return 0, errClientGone
	}
	k := copy(p, c.data[:min(c.n, len(p))])
	c.data, c.n = c.data[k:], c.n-k
	return k, nil
}

// sendCut sends c with its body cut after n bytes while Content-Length
// announces the whole body. The answer, if any, is not checked: nobody is
// left to read it.
func sendCut(t *testing.T, tg *harness.Target, c call, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	req, err := build(ctx, tg, c)
	if err != nil {
		t.Fatal(err)
	}
	req.Body = io.NopCloser(&cutReader{data: c.Body, n: n})
	req.GetBody = nil
	resp, err := tg.HTTP.Do(req)
	if err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

// TestAbortedUploadsLeaveNothing: uploads whose body stops half way change
// nothing: no partial blob, block, page, message, entity or batch.
func TestAbortedUploadsLeaveNothing(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		breads := blobFixture(t, tg)
		qreads, id, receipt := queueFixture(t, tg)
		treads := tableFixture(t, tg)
		reads := append(append(append([]call{}, breads...), qreads...), treads...)
		big := strings.Repeat("0123456789abcdef", 64<<10) // 1 MiB
		opURL := tg.TableURL + "/" + tb
		cases := []call{
			{Svc: blobSvc, Method: http.MethodPut, Path: ctr + "/b", Header: map[string]string{"x-ms-blob-type": "BlockBlob"}, Body: []byte(big)},
			{Svc: blobSvc, Method: http.MethodPut, Path: ctr + "/fresh", Header: map[string]string{"x-ms-blob-type": "BlockBlob"}, Body: []byte(big)},
			{Svc: blobSvc, Method: http.MethodPut, Path: ctr + "/blk?comp=block&blockid=QkJCQg%3D%3D", Body: []byte(big)},
			{Svc: blobSvc, Method: http.MethodPut, Path: ctr + "/blk?comp=blocklist", Body: []byte("<BlockList>" + strings.Repeat("<Latest>QUFBQQ==</Latest>", 1000) + "</BlockList>")},
			{Svc: blobSvc, Method: http.MethodPut, Path: ctr + "/pg?comp=page", Header: map[string]string{"x-ms-page-write": "update", "x-ms-range": "bytes=0-1023"}, Body: []byte(strings.Repeat("z", 1024))},
			{Svc: blobSvc, Method: http.MethodPut, Path: ctr + "/ap?comp=appendblock", Body: []byte(big)},
			{Svc: blobSvc, Method: http.MethodPut, Path: ctr + "?restype=container&comp=acl", Body: []byte("<SignedIdentifiers><SignedIdentifier><Id>a</Id><AccessPolicy><Permission>r</Permission></AccessPolicy></SignedIdentifier></SignedIdentifiers>")},
			{Svc: blobSvc, Method: http.MethodPut, Path: ctr + "/b?comp=tags", Body: []byte("<Tags><TagSet><Tag><Key>z</Key><Value>z</Value></Tag></TagSet></Tags>")},
			{Svc: queueSvc, Method: http.MethodPost, Path: rq + "/messages", Body: msgBody(strings.Repeat("m", 40000))},
			{Svc: queueSvc, Method: http.MethodPut, Path: rq + "/messages/" + id + "?popreceipt=" + url.QueryEscape(receipt) + "&visibilitytimeout=0", Body: msgBody(strings.Repeat("u", 40000))},
			{Svc: queueSvc, Method: http.MethodPut, Path: rq + "?comp=acl", Body: []byte("<SignedIdentifiers><SignedIdentifier><Id>a</Id><AccessPolicy><Permission>r</Permission></AccessPolicy></SignedIdentifier></SignedIdentifiers>")},
			{Svc: tableSvc, Method: http.MethodPost, Path: tb, Body: []byte(`{"PartitionKey":"p","RowKey":"cut","s":"` + strings.Repeat("s", 30000) + `"}`)},
			{Svc: tableSvc, Method: http.MethodPut, Path: entityURL("p", "r"), Body: []byte(`{"s":"` + strings.Repeat("s", 30000) + `"}`)},
			{Svc: tableSvc, Method: http.MethodPost, Path: "$batch", Header: map[string]string{"Content-Type": "multipart/mixed; boundary=batch_r"},
				Body: []byte(batch(batchOp(http.MethodPost, opURL, `{"PartitionKey":"p","RowKey":"b1"}`), batchOp(http.MethodPost, opURL, `{"PartitionKey":"p","RowKey":"b2","s":"`+strings.Repeat("s", 30000)+`"}`)))},
		}
		before := capture(t, tg, reads)
		for _, c := range cases {
			for _, frac := range []int{0, 1, 2, 3} {
				n := len(c.Body) * frac / 4
				if frac == 3 {
					n = len(c.Body) - 1
				}
				sendCut(t, tg, c, n)
				// A server may notice the cut after the client did.
				time.Sleep(20 * time.Millisecond)
				after := capture(t, tg, reads)
				same(t, fmt.Sprintf("%s %s cut after %d of %d bytes", c.Method, shorten(c.Path), n, len(c.Body)), before, after)
				before = after
			}
		}
		r := send(t, tg, call{Svc: blobSvc, Method: http.MethodGet, Path: ctr + "/fresh"})
		if r.Status != http.StatusNotFound {
			t.Errorf("a blob whose upload was cut exists: %s", r)
		}
	})
}

// rawConn sends head (request line and headers, without the blank line)
// and body over a fresh TCP connection to addr, optionally closing the
// write side afterwards, and reads one response.
func rawConn(t *testing.T, addr, head string, body []byte, closeWrite bool) (*http.Response, []byte, error) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(requestTimeout))
	if _, err := io.WriteString(conn, head+"\r\n"); err != nil {
		return nil, nil, err
	}
	if _, err := conn.Write(body); err != nil {
		return nil, nil, err
	}
	if closeWrite {
		conn.(*net.TCPConn).CloseWrite()
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return nil, nil, err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, b, err
}

// signedHead returns the request line and signed headers of c, with
// Content-Length set as given ("" for none) and extra raw header lines.
func signedHead(t *testing.T, tg *harness.Target, c call, contentLength string, extra ...string) (addr, head string) {
	t.Helper()
	req, err := build(context.Background(), tg, c)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := strconv.ParseInt(contentLength, 10, 64); err == nil && n >= 0 {
		req.ContentLength = n
		if err := sharedkey.Sign(req, tg.Account, tg.KeyBytes(), c.Svc == tableSvc); err != nil {
			t.Fatal(err)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\n", req.Method, req.URL.RequestURI(), req.URL.Host)
	for k, vs := range req.Header {
		if k == "Content-Length" {
			continue
		}
		for _, v := range vs {
			fmt.Fprintf(&b, "%s: %s\r\n", k, v)
		}
	}
	if contentLength != "" {
		fmt.Fprintf(&b, "Content-Length: %s\r\n", contentLength)
	}
	for _, e := range extra {
		b.WriteString(e + "\r\n")
	}
	return req.URL.Host, b.String()
}

// tcpTargets are the selected targets reached over TCP; raw connection
// tests need one, so an in-memory TCP lazuli is used when none is selected.
func tcpTargets(t *testing.T, fn func(t *testing.T, tg *harness.Target)) {
	ran := false
	for _, name := range harness.Names() {
		if strings.HasSuffix(name, "-tcp") {
			ran = true
			t.Run(name, func(t *testing.T) { fn(t, harness.Start(t, name)) })
		}
	}
	if !ran {
		t.Run("mem-tcp", func(t *testing.T) { fn(t, harness.Start(t, "mem-tcp")) })
	}
}

// TestBrokenFraming sends requests whose HTTP framing is broken (negative,
// huge or doubled Content-Length, a body shorter than announced, bad chunk
// sizes, bad escapes) over raw TCP: each gets a 4xx (or, for a body cut
// short, at least no 5xx), the server never hangs, and nothing is written.
func TestBrokenFraming(t *testing.T) {
	tcpTargets(t, func(t *testing.T, tg *harness.Target) {
		reads := blobFixture(t, tg)
		treads := tableFixture(t, tg)
		reads = append(reads, treads...)
		put := call{Svc: blobSvc, Method: http.MethodPut, Path: ctr + "/b", Header: map[string]string{"x-ms-blob-type": "BlockBlob"}}
		block := call{Svc: blobSvc, Method: http.MethodPut, Path: ctr + "/blk?comp=block&blockid=QkJCQg%3D%3D"}
		ins := call{Svc: tableSvc, Method: http.MethodPost, Path: tb, Header: map[string]string{"Content-Type": "application/json"}}
		entity := []byte(`{"PartitionKey":"p","RowKey":"raw"}`)
		type rawCase struct {
			name       string
			c          call
			cl         string
			extra      []string
			body       []byte
			closeWrite bool
			// anyStatus: the client broke the exchange; only a 5xx, a hang
			// or a write counts against the server.
			anyStatus bool
			// status, when set, is the one status HTTP prescribes.
			status int
			// mayReset: the server refuses in the middle of a body it cannot
			// frame, so its close may reach the client as a reset that
			// swallows the answer; a reset then counts as a refusal.
			mayReset bool
		}
		cases := []rawCase{
			// Refused on the headers alone: no body is sent, so that the
			// server's close after its 400 cannot turn into a reset that
			// swallows the answer.
			{name: "negative content-length", c: put, cl: "-1"},
			{name: "huge content-length", c: put, cl: "99999999999999999999999"},
			{name: "content-length letters", c: put, cl: "ten"},
			{name: "two content-lengths", c: put, cl: "3", extra: []string{"Content-Length: 4"}},
			{name: "content-length and chunked", c: put, cl: "3", extra: []string{"Transfer-Encoding: chunked"}, body: []byte("3\r\nnew\r\n0\r\n\r\n")},
			{name: "body shorter than content-length", c: put, cl: "100", body: []byte("only some"), closeWrite: true, anyStatus: true},
			{name: "block shorter than content-length", c: block, cl: "100", body: []byte("only some"), closeWrite: true, anyStatus: true},
			{name: "entity shorter than content-length", c: ins, cl: "100", body: entity, closeWrite: true, anyStatus: true},
			{name: "chunk size not hex", c: put, extra: []string{"Transfer-Encoding: chunked"}, body: []byte("3\r\nnew\r\nzz\r\nmore\r\n0\r\n\r\n"), mayReset: true},
			{name: "chunk longer than said", c: put, extra: []string{"Transfer-Encoding: chunked"}, body: []byte("3\r\nnew and more\r\n0\r\n\r\n"), mayReset: true},
			{name: "chunked body never ends", c: put, extra: []string{"Transfer-Encoding: chunked"}, body: []byte("3\r\nnew\r\n"), closeWrite: true, anyStatus: true},
			{name: "entity chunk size not hex", c: ins, extra: []string{"Transfer-Encoding: chunked"}, body: []byte("5\r\n{\"Par\r\nzz\r\n0\r\n\r\n"), mayReset: true},
			{name: "unknown transfer-encoding", c: put, extra: []string{"Transfer-Encoding: sideways"}, body: []byte("new"), status: http.StatusNotImplemented, mayReset: true},
		}
		check := func(name string, resp *http.Response, body []byte, err error, anyStatus bool, status int, mayReset bool) {
			t.Helper()
			switch {
			case err != nil && mayReset && errors.Is(err, syscall.ECONNRESET):
			case status != 0:
				if err != nil || resp.StatusCode != status {
					t.Errorf("%s: want %d, got %v %v", name, status, resp, err)
				}
			case err != nil && anyStatus:
				// The server closed without answering a broken exchange.
			case err != nil:
				t.Errorf("%s: no response: %v", name, err)
			case resp.StatusCode >= 500:
				t.Errorf("%s: %d %s", name, resp.StatusCode, body)
			case !anyStatus && resp.StatusCode < 400:
				t.Errorf("%s: accepted with %d: %s", name, resp.StatusCode, body)
			}
		}
		before := capture(t, tg, reads)
		for _, rc := range cases {
			addr, head := signedHead(t, tg, rc.c, rc.cl, rc.extra...)
			resp, body, err := rawConn(t, addr, head, rc.body, rc.closeWrite)
			check(rc.name, resp, body, err, rc.anyStatus, rc.status, rc.mayReset)
			time.Sleep(20 * time.Millisecond)
			after := capture(t, tg, reads)
			same(t, rc.name, before, after)
			before = after
		}
		// Bad request lines and headers never reach a service but must not
		// hang or crash it either.
		host := strings.TrimPrefix(strings.TrimPrefix(tg.BlobURL, "http://"), "https://")
		addr, _, _ := strings.Cut(host, "/")
		for _, head := range []string{
			"GET /devstoreaccount1/" + ctr + "/a%zz HTTP/1.1\r\nHost: " + addr + "\r\n",
			"GET /devstoreaccount1/" + ctr + "/b HTTP/1.1\r\nHost: " + addr + "\r\nno colon here\r\n",
			"GET /devstoreaccount1/" + ctr + "/b HTTP/1.1\r\nHost: " + addr + "\r\nX-Big: " + strings.Repeat("b", 2<<20) + "\r\n",
			"GET /devstoreaccount1/" + ctr + "/b HTTP/9.9\r\nHost: " + addr + "\r\n",
			"GET\r\n",
			"G\x00T /devstoreaccount1 HTTP/1.1\r\nHost: " + addr + "\r\n",
		} {
			resp, body, err := rawConn(t, addr, head, nil, false)
			if err == nil && resp.StatusCode >= 500 && resp.StatusCode != http.StatusHTTPVersionNotSupported {
				t.Errorf("%q: %d %s", shorten(head), resp.StatusCode, body)
			}
			if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
				var ne net.Error
				if errors.As(err, &ne) && ne.Timeout() {
					t.Errorf("%q: the server hung: %v", shorten(head), err)
				}
			}
		}
		// Odd request targets and Host headers reach the services; every
		// service answers them with its own well-formed error.
		for _, s := range []svc{blobSvc, queueSvc, tableSvc} {
			host := strings.TrimPrefix(s.base(tg), "http://")
			addr, _, _ := strings.Cut(host, "/")
			for _, head := range []string{
				"GET /devstoreaccount1/rc1/rb1 HTTP/1.0\r\n",
				"GET /devstoreaccount1/rc1/rb1 HTTP/1.1\r\nHost: \r\n",
				"GET /devstoreaccount1/rc1/rb1 HTTP/1.1\r\nHost: [::1\r\n",
				"GET /rc1/rb1 HTTP/1.1\r\nHost: .blob.localhost\r\n",
				"GET /rc1/rb1 HTTP/1.1\r\nHost: devstoreaccount1-secondary.blob.localhost:1\r\n",
				"GET /rc1/rb1 HTTP/1.1\r\nHost: " + strings.Repeat("a.", 2000) + "x\r\n",
				"GET http://other/devstoreaccount1/rc1/rb1 HTTP/1.1\r\nHost: other\r\n",
				"GET * HTTP/1.1\r\nHost: " + addr + "\r\n",
				"GET //// HTTP/1.1\r\nHost: " + addr + "\r\n",
				"GET /devstoreaccount1/?%zz=1 HTTP/1.1\r\nHost: " + addr + "\r\n",
				"GET /devstoreaccount1/?comp=list;x=1 HTTP/1.1\r\nHost: " + addr + "\r\n",
				"GET /devstoreaccount1/rc1/r%b1 HTTP/1.1\r\nHost: " + addr + "\r\n",
				"GET /devstoreaccount1/rc1/rb1 HTTP/1.1\r\nHost: " + addr + "\r\nAuthorization: SharedKey devstoreaccount1:AAAA\r\nAuthorization: SharedKey devstoreaccount1:BBBB\r\n",
			} {
				resp, body, err := rawConn(t, addr, head, nil, false)
				if err != nil {
					t.Errorf("%s %q: %v", s, shorten(head), err)
					continue
				}
				r := &reply{Status: resp.StatusCode, Header: resp.Header, Body: body}
				if msg := errorShape(s, http.MethodGet, r); msg != "" {
					t.Errorf("%s %q: %s: %s", s, shorten(head), msg, r)
				}
			}
		}
		same(t, "bad request lines", before, capture(t, tg, reads))
		if r := send(t, tg, call{Svc: blobSvc, Method: http.MethodGet, Path: ctr + "/b"}); r.Status != 200 || string(r.Body) != original {
			t.Errorf("blob after the broken requests: %s", r)
		}
	})
}

// TestEarlyRefusalOfLargeBodies: a large upload refused before its body is
// read (missing container, queue or table, bad headers, no credentials)
// still gets its whole Azure error, and the client's next request works.
func TestEarlyRefusalOfLargeBodies(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		randomFixture(t, tg)
		big := []byte(strings.Repeat("x", 10<<20))
		for _, b := range []bad{
			{Name: "missing container", call: call{Svc: blobSvc, Method: http.MethodPut, Path: "nosuch/b", Header: map[string]string{"x-ms-blob-type": "BlockBlob"}, Body: big}, Status: 404, Codes: []string{"ContainerNotFound"}},
			{Name: "unknown blob type", call: call{Svc: blobSvc, Method: http.MethodPut, Path: "rc1/b", Header: map[string]string{"x-ms-blob-type": "Bogus"}, Body: big}, Status: 400, Codes: []string{"InvalidHeaderValue"}},
			{Name: "no credentials", call: call{Svc: blobSvc, Method: http.MethodPut, Path: "rc1/b", Header: map[string]string{"x-ms-blob-type": "BlockBlob"}, Body: big, Unsigned: true}, Status: 401, Codes: []string{"NoAuthenticationInformation"}},
			{Name: "bad version", call: call{Svc: blobSvc, Method: http.MethodPut, Path: "rc1/b", Header: map[string]string{"x-ms-blob-type": "BlockBlob", "x-ms-version": "bad"}, Body: big}, Status: 400, Codes: []string{"InvalidHeaderValue"}},
			{Name: "missing queue", call: call{Svc: queueSvc, Method: http.MethodPost, Path: "nosuch/messages", Body: big}},
			{Name: "missing table", call: call{Svc: tableSvc, Method: http.MethodPost, Path: "nosuch", Body: big}},
			{Name: "batch too large", call: call{Svc: tableSvc, Method: http.MethodPost, Path: "$batch", Header: map[string]string{"Content-Type": "multipart/mixed; boundary=batch_r"}, Body: big}},
		} {
			refuse(t, tg, b)
			if r := send(t, tg, call{Svc: blobSvc, Method: http.MethodGet, Path: "rc1/rb1"}); r.Status != 200 || string(r.Body) != "blob one" {
				t.Errorf("read after %s: %s", b.Name, r)
			}
		}
		if r := send(t, tg, call{Svc: blobSvc, Method: http.MethodGet, Path: "rc1/b"}); r.Status != http.StatusNotFound {
			t.Errorf("a refused upload left a blob: %s", r)
		}
	})
}

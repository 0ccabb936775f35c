package file_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/lazuli-storage/lazuli/conformance/harness"
)

// Get File reads its range as Get Blob does (one parser for both): an
// unparsable x-ms-range is 400 InvalidHeaderValue; an x-ms-range with a
// negative start (what the SDKs write for a negative offset) and an
// unparsable Range are ignored, and the whole file is returned.
func TestReadRangeRules(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		wantRaw(t, raw(t, tg, http.MethodPut, e.name+"/f", map[string]string{"x-ms-type": "file", "x-ms-content-length": "10"}, nil), 201, "")
		content := []byte("0123456789")
		wantRaw(t, raw(t, tg, http.MethodPut, e.name+"/f?comp=range", map[string]string{"x-ms-range": "bytes=0-9", "x-ms-write": "update"}, content), 201, "")
		for _, c := range []struct {
			hdr, val string
			status   int
			body     string
		}{
			{"x-ms-range", "bytes=2-4", 206, "234"},
			{"Range", "bytes=7-", 206, "789"},
			{"x-ms-range", "bytes=-1-5", 200, string(content)},
			{"x-ms-range", "bytes=-3", 200, string(content)},
			{"Range", "bytes=a-b", 200, string(content)},
			{"Range", "items=0-1", 200, string(content)},
			{"x-ms-range", "bytes=a-b", 400, ""},
			{"x-ms-range", "bytes=5-1", 400, ""},
		} {
			resp := raw(t, tg, http.MethodGet, e.name+"/f", map[string]string{c.hdr: c.val}, nil)
			b := readAll(t, resp.Body)
			if resp.StatusCode != c.status {
				t.Errorf("%s: %s: %d, want %d: %s", c.hdr, c.val, resp.StatusCode, c.status, b)
			} else if c.status == 400 {
				if code := resp.Header.Get("x-ms-error-code"); code != "InvalidHeaderValue" || !strings.Contains(string(b), "<HeaderName>x-ms-range</HeaderName>") {
					t.Errorf("%s: %s: code %q body %s", c.hdr, c.val, code, b)
				}
			} else if string(b) != c.body {
				t.Errorf("%s: %s: body %q, want %q", c.hdr, c.val, b, c.body)
			}
		}
	})
}

// A range that starts past the end of the file is 416 InvalidRange with
// the file's size in Content-Range, as on Get Blob.
func TestReadRangePastTheEnd(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		wantRaw(t, raw(t, tg, http.MethodPut, e.name+"/f", map[string]string{"x-ms-type": "file", "x-ms-content-length": "10"}, nil), 201, "")
		for _, h := range []string{"x-ms-range", "Range"} {
			resp := raw(t, tg, http.MethodGet, e.name+"/f", map[string]string{h: "bytes=10-20"}, nil)
			wantRaw(t, resp, 416, "InvalidRange")
			if got := resp.Header.Get("Content-Range"); got != "bytes */10" {
				t.Errorf("%s: Content-Range %q", h, got)
			}
		}
	})
}

package blob_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/lazuli-storage/lazuli/conformance/harness"
)

// Get Blob reads its range as Get File does (one parser for both): an
// unparsable x-ms-range is 400 InvalidHeaderValue; an x-ms-range with a
// negative start (what the SDKs write for a negative offset) and an
// unparsable Range are ignored, and the whole blob is returned.
func TestReadRangeRules(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		content := []byte("0123456789")
		if resp := raw(t, tg, http.MethodPut, e.name+"/f", map[string]string{"x-ms-blob-type": "BlockBlob"}, content); resp.StatusCode != 201 {
			t.Fatalf("put blob: %d", resp.StatusCode)
		}
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

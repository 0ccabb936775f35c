package blob_test

import (
	"bytes"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"

	"github.com/lazuli-storage/lazuli/conformance/harness"
	"github.com/lazuli-storage/lazuli/internal/auth/sharedkey"
)

// batchBody frames signed Delete Blob sub-requests for the given blobs.
// jsFraming ends each sub-request right after its last header line, as
// the JavaScript SDK's BlobBatch does (the CRLF that follows belongs to
// the next boundary); otherwise each ends with the blank line.
func batchBody(t *testing.T, tg *harness.Target, container, boundary string, names []string, jsFraming bool) []byte {
	t.Helper()
	var b bytes.Buffer
	for i, n := range names {
		// A name "tier:x" sets blob x to the Cool tier instead.
		method, query := http.MethodDelete, ""
		if rest, ok := strings.CutPrefix(n, "tier:"); ok {
			n, method, query = rest, http.MethodPut, "?comp=tier"
		}
		u, err := url.Parse(tg.BlobURL + "/" + container + "/" + n + query)
		must(t, err)
		sr, err := http.NewRequest(method, u.String(), nil)
		must(t, err)
		sr.Header.Set("x-ms-version", "2025-01-05")
		sr.Header.Set("Content-Length", "0")
		if method == http.MethodPut {
			sr.Header.Set("x-ms-access-tier", "Cool")
		}
		must(t, sharedkey.Sign(sr, tg.Account, tg.KeyBytes(), false))
		fmt.Fprintf(&b, "--%s\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\nContent-ID: %d\r\n\r\n", boundary, i)
		fmt.Fprintf(&b, "%s %s HTTP/1.1\r\n", method, u.RequestURI())
		keys := make([]string, 0, len(sr.Header))
		for k := range sr.Header {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "%s: %s\r\n", k, sr.Header.Get(k))
		}
		if !jsFraming {
			b.WriteString("\r\n")
		}
		b.WriteString("\r\n")
	}
	fmt.Fprintf(&b, "--%s--\r\n", boundary)
	return b.Bytes()
}

// batchStatuses reads the sub-response status codes of a batch answer.
func batchStatuses(t *testing.T, resp *http.Response) []int {
	t.Helper()
	if resp.StatusCode != 202 {
		t.Fatalf("batch status %d: %s", resp.StatusCode, readAll(t, resp.Body))
	}
	ct := resp.Header.Get("Content-Type")
	_, bnd, ok := strings.Cut(ct, "boundary=")
	if !ok {
		t.Fatalf("response Content-Type %q", ct)
	}
	mr := multipart.NewReader(resp.Body, bnd)
	var out []int
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			return out
		}
		must(t, err)
		text := readAll(t, p)
		var code int
		if _, err := fmt.Sscanf(string(text), "HTTP/1.1 %d", &code); err != nil {
			t.Fatalf("sub-response %q", text)
		}
		out = append(out, code)
		if code >= 400 && !bytes.Contains(text, []byte("x-ms-error-code")) && !bytes.Contains(text, []byte("X-Ms-Error-Code")) {
			t.Fatalf("sub-response error without code: %q", text)
		}
	}
}

// TestBatchFraming pins the batch bodies and Content-Types Azure accepts:
// sub-requests ending right after their headers (the JavaScript SDK),
// boundary parameter names in any case, whitespace around the boundary,
// and "=" inside quoted and bare boundaries. A Content-Type without a
// usable boundary is answered 202 with one 400 InvalidHeaderValue part,
// as Azure answers it; one naming its boundary twice, with one 400
// InvalidInput part.
func TestBatchFraming(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		for _, c := range []struct {
			ct, boundary string
			js           bool
		}{
			{"multipart/mixed; boundary=batch_js", "batch_js", true},
			{"multipart/mixed; boundary=batch_std", "batch_std", false},
			{"multipart/mixed; BOUNDARY=batch_upper", "batch_upper", true},
			{"multipart/mixed;  boundary =  batch_space", "batch_space", false},
			{`multipart/mixed; boundary="===============53060851==";`, "===============53060851==", false},
			{"multipart/mixed; boundary=====bare=eq==", "====bare=eq==", true},
		} {
			names := []string{"a", "b"}
			for _, n := range names {
				_, err := e.cc.NewBlockBlobClient(n).Upload(ctx, body([]byte("x")), nil)
				must(t, err)
			}
			resp := raw(t, tg, http.MethodPost, "?comp=batch", map[string]string{"Content-Type": c.ct},
				batchBody(t, tg, e.name, c.boundary, names, c.js))
			got := batchStatuses(t, resp)
			if fmt.Sprint(got) != "[202 202]" {
				t.Fatalf("%q: sub-statuses %v", c.ct, got)
			}
			// Container-scoped batch with the same framing.
			for _, n := range names {
				_, err := e.cc.NewBlockBlobClient(n).Upload(ctx, body([]byte("x")), nil)
				must(t, err)
			}
			resp = raw(t, tg, http.MethodPost, e.name+"?restype=container&comp=batch", map[string]string{"Content-Type": c.ct},
				batchBody(t, tg, e.name, c.boundary, names, c.js))
			if got := batchStatuses(t, resp); fmt.Sprint(got) != "[202 202]" {
				t.Fatalf("%q container batch: sub-statuses %v", c.ct, got)
			}
		}
		for _, ct := range []string{
			"multipart/mixed",
			"multipart/mixed; boundary=",
			`multipart/mixed; boundary=""`,
			"multipart/mixed; boundary=a; boundary=b",
		} {
			resp := raw(t, tg, http.MethodPost, "?comp=batch", map[string]string{"Content-Type": ct},
				batchBody(t, tg, e.name, "a", []string{"a"}, false))
			if got := batchStatuses(t, resp); fmt.Sprint(got) != "[400]" {
				t.Fatalf("%q: sub-statuses %v", ct, got)
			}
		}
		// The part's code: a missing boundary is InvalidHeaderValue, one
		// given twice InvalidInput.
		for ct, code := range map[string]string{"multipart/mixed": "InvalidHeaderValue", "multipart/mixed; boundary=a; boundary=b": "InvalidInput"} {
			resp := raw(t, tg, http.MethodPost, "?comp=batch", map[string]string{"Content-Type": ct},
				batchBody(t, tg, e.name, "a", []string{"a"}, false))
			if b := string(readAll(t, resp.Body)); resp.StatusCode != 202 || !strings.Contains(b, "x-ms-error-code: "+code) {
				t.Fatalf("%q: %d %s", ct, resp.StatusCode, b)
			}
		}
	})
}

// TestBatchMixedAndAccountSAS pins that Delete Blob and Set Blob Tier may
// share one batch, and that a batch sent with an account SAS runs its
// sub-requests (each carrying the SAS in its URL, as the SDK sends them).
func TestBatchMixedAndAccountSAS(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		for _, n := range []string{"a", "b"} {
			_, err := e.cc.NewBlockBlobClient(n).Upload(ctx, body([]byte("x")), nil)
			must(t, err)
		}
		resp := raw(t, tg, http.MethodPost, e.name+"?restype=container&comp=batch", map[string]string{"Content-Type": "multipart/mixed; boundary=mixed"},
			batchBody(t, tg, e.name, "mixed", []string{"a", "tier:b"}, true))
		if got := batchStatuses(t, resp); fmt.Sprint(got) != "[202 200]" {
			t.Fatalf("mixed batch: %v", got)
		}
		p, err := e.cc.NewBlobClient("b").GetProperties(ctx, nil)
		must(t, err)
		if *p.AccessTier != "Cool" {
			t.Fatalf("tier %s", *p.AccessTier)
		}
		_, err = e.cc.NewBlobClient("a").GetProperties(ctx, nil)
		mustCode(t, err, 404, "BlobNotFound")

		c := accountSASClient(t, tg, sas.AccountPermissions{Read: true, Write: true, Delete: true, List: true})
		svc := c.ServiceClient()
		bb, err := svc.NewBatchBuilder()
		must(t, err)
		must(t, bb.Delete(e.name, "b", nil))
		must(t, bb.Delete(e.name, "missing", nil))
		res, err := svc.SubmitBatch(ctx, bb, nil)
		must(t, err)
		if len(res.Responses) != 2 || res.Responses[0].Error != nil || !isCode(res.Responses[1].Error, 404, "BlobNotFound") {
			t.Fatalf("account SAS batch: %+v", res.Responses)
		}
	})
}

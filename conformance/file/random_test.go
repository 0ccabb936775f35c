package file_test

import (
	"bytes"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"

	"github.com/lazuli-storage/lazuli/conformance/harness"
	"github.com/lazuli-storage/lazuli/internal/auth/sharedkey"
)

// TestRandomRequests sends signed requests built from random choices of
// method, path, query and header values (valid, garbage and extreme) and
// checks that every answer is an Azure answer: never a 5xx, and every
// error carries x-ms-error-code.
func TestRandomRequests(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		wantRaw(t, raw(t, tg, http.MethodPut, e.name+"/d?restype=directory", nil, nil), 201, "")
		wantRaw(t, raw(t, tg, http.MethodPut, e.name+"/d/f", map[string]string{"x-ms-type": "file", "x-ms-content-length": "4096"}, nil), 201, "")
		r := rand.New(rand.NewPCG(1, 2))
		pick := func(xs []string) string { return xs[r.IntN(len(xs))] }
		methods := []string{"GET", "HEAD", "PUT", "DELETE", "POST", "OPTIONS"}
		paths := []string{"", e.name, e.name + "/d", e.name + "/d/f", e.name + "/D/F", e.name + "/nope/f", e.name + "/d/%00", e.name + "/d/..", "Bad_Share/x", e.name + "/" + strings.Repeat("a", 300)}
		queries := []string{"", "restype=share", "restype=directory", "comp=list", "comp=range", "comp=rangelist", "comp=lease", "comp=metadata",
			"comp=properties", "comp=acl&restype=share", "comp=snapshot&restype=share", "comp=listhandles", "comp=forceclosehandles", "comp=rename",
			"comp=copy&copyid=x", "restype=service&comp=properties", "comp=filepermission&restype=share", "sharesnapshot=bogus", "maxresults=-1&comp=list&restype=directory"}
		headers := []string{"x-ms-range", "Range", "x-ms-write", "x-ms-type", "x-ms-content-length", "x-ms-lease-action", "x-ms-lease-id",
			"x-ms-lease-duration", "x-ms-file-attributes", "x-ms-file-creation-time", "x-ms-file-permission", "x-ms-file-permission-key",
			"x-ms-share-quota", "x-ms-copy-source", "x-ms-file-rename-source", "x-ms-handle-id", "x-ms-delete-snapshots", "If-Match", "x-ms-meta-a", "Content-MD5"}
		values := []string{"", "bytes=0-511", "bytes=10-5", "bytes=0-9223372036854775807", "update", "clear", "file", "-1", "0", "4096", "99999999999999999999",
			"acquire", "break", "change", "not-a-guid", "ReadOnly|Bogus", "now", "preserve", "2019-02-02T00:00:00.0000000Z", "(((", "1*2",
			"http://127.0.0.1:1/devstoreaccount1/x/y", "d/f", "*", "include", "\"0x1\"", "bad md5", strings.Repeat("z", 9000)}
		for i := 0; i < 1000; i++ {
			method, path, query := pick(methods), pick(paths), pick(queries)
			var body []byte
			if method == "PUT" && r.IntN(3) == 0 {
				body = bytes.Repeat([]byte{'x'}, r.IntN(2048))
			}
			url := tg.FileURL + "/" + path
			if query != "" {
				url += "?" + query
			}
			req, err := http.NewRequestWithContext(harness.Ctx(t), method, url, bytes.NewReader(body))
			must(t, err)
			req.ContentLength = int64(len(body))
			req.Header.Set("x-ms-version", "2025-11-05")
			for j := r.IntN(4); j > 0; j-- {
				req.Header.Set(pick(headers), pick(values))
			}
			must(t, sharedkey.Sign(req, tg.Account, tg.KeyBytes(), false))
			resp, err := tg.HTTP.Do(req)
			must(t, err)
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode >= 500 || (resp.StatusCode >= 400 && resp.Header.Get("x-ms-error-code") == "") {
				t.Fatalf("%s %s (%v): %d %q", method, url, req.Header, resp.StatusCode, resp.Header.Get("x-ms-error-code"))
			}
		}
	})
}

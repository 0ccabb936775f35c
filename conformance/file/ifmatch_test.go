package file_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/lazuli-storage/lazuli/conformance/harness"
)

// Get File and Get File Properties read If-Match with the rules Blob uses
// (one implementation): the ETag quoted or not, in a list, or "*"; an
// empty list is 400 InvalidHeaderValue; another ETag is 412.
func TestGetFileIfMatchRules(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		resp := raw(t, tg, http.MethodPut, e.name+"/f", map[string]string{"x-ms-type": "file", "x-ms-content-length": "1"}, nil)
		wantRaw(t, resp, 201, "")
		etag := resp.Header.Get("ETag")
		for _, c := range []struct {
			ifMatch, code string
			status        int
		}{
			{etag, "", 200},
			{strings.Trim(etag, `"`), "", 200},
			{`"0x1", ` + etag, "", 200},
			{"*", "", 200},
			{`"0x1"`, "ConditionNotMet", 412},
			{",", "InvalidHeaderValue", 400},
		} {
			for _, m := range []string{http.MethodGet, http.MethodHead} {
				resp := raw(t, tg, m, e.name+"/f", map[string]string{"If-Match": c.ifMatch}, nil)
				if resp.StatusCode != c.status || resp.Header.Get("x-ms-error-code") != c.code {
					t.Errorf("%s If-Match %q: %d %q, want %d %q", m, c.ifMatch, resp.StatusCode, resp.Header.Get("x-ms-error-code"), c.status, c.code)
				}
			}
		}
	})
}

package file_test

import (
	"net/http"
	"testing"

	"github.com/lazuli-storage/lazuli/conformance/harness"
)

// Lease Share and Lease File decode their headers with Blob's parser: a
// proposed lease id that is no GUID is 400 InvalidHeaderValue, as on
// Lease Blob, and stores no lease.
func TestLeaseHeadersShared(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		wantRaw(t, raw(t, tg, http.MethodPut, e.name+"/f", map[string]string{"x-ms-type": "file", "x-ms-content-length": "1"}, nil), 201, "")
		for _, path := range []string{e.name + "/f?comp=lease", e.name + "?restype=share&comp=lease"} {
			wantRaw(t, raw(t, tg, http.MethodPut, path, map[string]string{"x-ms-lease-action": "acquire", "x-ms-lease-duration": "-1",
				"x-ms-proposed-lease-id": "not-a-guid"}, nil), 400, "InvalidHeaderValue")
			wantRaw(t, raw(t, tg, http.MethodPut, path, map[string]string{"x-ms-lease-action": "acquire", "x-ms-lease-duration": " -1 ",
				"x-ms-proposed-lease-id": "{0f8fad5b-d9cb-469f-a165-70867728950e}"}, nil), 201, "")
			wantRaw(t, raw(t, tg, http.MethodPut, path, map[string]string{"x-ms-lease-action": "break"}, nil), 202, "")
		}
		// Files: no renew, only infinite leases, a break period ignored.
		f := e.name + "/f?comp=lease"
		wantRaw(t, raw(t, tg, http.MethodPut, f, map[string]string{"x-ms-lease-action": "renew", "x-ms-lease-id": "0f8fad5b-d9cb-469f-a165-70867728950e"}, nil), 400, "InvalidHeaderValue")
		wantRaw(t, raw(t, tg, http.MethodPut, f, map[string]string{"x-ms-lease-action": "acquire", "x-ms-lease-duration": "15"}, nil), 400, "InvalidHeaderValue")
		wantRaw(t, raw(t, tg, http.MethodPut, f, map[string]string{"x-ms-lease-action": "acquire"}, nil), 201, "")
		wantRaw(t, raw(t, tg, http.MethodPut, f, map[string]string{"x-ms-lease-action": "break", "x-ms-lease-break-period": "x"}, nil), 202, "")
		// Shares: the duration is required, and the break period read.
		s := e.name + "?restype=share&comp=lease"
		wantRaw(t, raw(t, tg, http.MethodPut, s, map[string]string{"x-ms-lease-action": "acquire"}, nil), 400, "MissingRequiredHeader")
		wantRaw(t, raw(t, tg, http.MethodPut, s, map[string]string{"x-ms-lease-action": "break", "x-ms-lease-break-period": "x"}, nil), 400, "InvalidHeaderValue")
	})
}

package httpx

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/auth"
	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/storage"
)

func serve(t *testing.T, svc auth.Service, h http.Handler, req *http.Request) *http.Response {
	t.Helper()
	rec := httptest.NewRecorder()
	Wrap(svc, h, Options{Now: func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }}).ServeHTTP(rec, req)
	return rec.Result()
}

func ok(w http.ResponseWriter, r *http.Request) {
	info := FromContext(r.Context())
	io.WriteString(w, info.Account+"|"+info.Path)
}

func TestCommonHeaders(t *testing.T) {
	req := httptest.NewRequest("GET", "http://127.0.0.1:10000/devstoreaccount1/c/a%2Fb?comp=list", nil)
	req.Header.Set("x-ms-version", "2021-08-06")
	req.Header.Set("x-ms-client-request-id", "abc-123")
	resp := serve(t, auth.Blob, http.HandlerFunc(ok), req)
	body, _ := io.ReadAll(resp.Body)
	if string(body) != "devstoreaccount1|c/a%2Fb" {
		t.Fatalf("account/path: %q", body)
	}
	if resp.Header.Get("x-ms-version") != "2021-08-06" {
		t.Errorf("version not echoed: %q", resp.Header.Get("x-ms-version"))
	}
	if resp.Header.Get("x-ms-client-request-id") != "abc-123" {
		t.Errorf("client request id not echoed")
	}
	if len(resp.Header.Get("x-ms-request-id")) != 36 {
		t.Errorf("request id %q", resp.Header.Get("x-ms-request-id"))
	}
	if resp.Header.Get("Date") != "Fri, 02 Jan 2026 03:04:05 GMT" {
		t.Errorf("Date %q", resp.Header.Get("Date"))
	}
}

func TestHostStyleAccount(t *testing.T) {
	req := httptest.NewRequest("GET", "http://myacct.blob.localhost:10000/c/b", nil)
	body, _ := io.ReadAll(serve(t, auth.Blob, http.HandlerFunc(ok), req).Body)
	if string(body) != "myacct|c/b" {
		t.Fatalf("got %q", body)
	}
	req = httptest.NewRequest("GET", "http://localhost:10000/devstoreaccount1-secondary/c", nil)
	body, _ = io.ReadAll(serve(t, auth.Blob, http.HandlerFunc(ok), req).Body)
	if string(body) != "devstoreaccount1|c" {
		t.Fatalf("secondary: got %q", body)
	}
}

func TestAnyWellFormedVersionAccepted(t *testing.T) {
	for _, v := range []string{"2009-09-19", "2031-01-01"} {
		req := httptest.NewRequest("GET", "http://127.0.0.1/devstoreaccount1/c", nil)
		req.Header.Set("x-ms-version", v)
		if resp := serve(t, auth.Blob, http.HandlerFunc(ok), req); resp.StatusCode != 200 {
			t.Errorf("version %s: status %d", v, resp.StatusCode)
		}
	}
}

func TestMalformedVersionRejected(t *testing.T) {
	req := httptest.NewRequest("GET", "http://127.0.0.1/devstoreaccount1/c", nil)
	req.Header.Set("x-ms-version", "latest")
	resp := serve(t, auth.Queue, http.HandlerFunc(ok), req)
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 400 || resp.Header.Get("x-ms-error-code") != "InvalidHeaderValue" {
		t.Fatalf("status %d code %q", resp.StatusCode, resp.Header.Get("x-ms-error-code"))
	}
	if !strings.Contains(string(body), "<HeaderName>x-ms-version</HeaderName>") {
		t.Fatalf("body %s", body)
	}
}

func TestStrictVersion(t *testing.T) {
	req := httptest.NewRequest("GET", "http://127.0.0.1/devstoreaccount1/c", nil)
	req.Header.Set("x-ms-version", "2099-01-01")
	rec := httptest.NewRecorder()
	Wrap(auth.Blob, http.HandlerFunc(ok), Options{StrictVersion: true}).ServeHTTP(rec, req)
	if rec.Code != 400 {
		t.Fatalf("strict: status %d", rec.Code)
	}
}

func TestPanicBecomesInternalError(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { panic("boom") })
	req := httptest.NewRequest("PUT", "http://127.0.0.1/devstoreaccount1/c", nil)
	resp := serve(t, auth.Blob, h, req)
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 500 || resp.Header.Get("x-ms-error-code") != "InternalError" {
		t.Fatalf("status %d code %q", resp.StatusCode, resp.Header.Get("x-ms-error-code"))
	}
	if strings.Contains(string(body), "boom") {
		t.Fatalf("panic value leaked to the client: %s", body)
	}
}

func TestErrorBodies(t *testing.T) {
	fail := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		WriteError(w, r, azerr.New(azerr.ContainerNotFound))
	})
	req := httptest.NewRequest("GET", "http://127.0.0.1/devstoreaccount1/c", nil)
	resp := serve(t, auth.Blob, fail, req)
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 404 || !strings.HasPrefix(string(body), `<?xml version="1.0" encoding="utf-8"?><Error><Code>ContainerNotFound</Code><Message>The specified container does not exist.`+"\nRequestId:") {
		t.Fatalf("xml error: %d %s", resp.StatusCode, body)
	}
	// HEAD: status and code, no body.
	req = httptest.NewRequest("HEAD", "http://127.0.0.1/devstoreaccount1/c", nil)
	resp = serve(t, auth.Blob, fail, req)
	body, _ = io.ReadAll(resp.Body)
	if resp.StatusCode != 404 || len(body) != 0 || resp.Header.Get("x-ms-error-code") != "ContainerNotFound" {
		t.Fatalf("head error: %d %q %q", resp.StatusCode, body, resp.Header.Get("x-ms-error-code"))
	}
	// Table: OData JSON.
	tfail := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		WriteError(w, r, azerr.New(azerr.TableNotFound))
	})
	req = httptest.NewRequest("GET", "http://127.0.0.1/devstoreaccount1/t()", nil)
	resp = serve(t, auth.Table, tfail, req)
	body, _ = io.ReadAll(resp.Body)
	if resp.StatusCode != 404 || !strings.HasPrefix(string(body), `{"odata.error":{"code":"TableNotFound","message":{"lang":"en-US","value":"The table specified does not exist.\nRequestId:`) {
		t.Fatalf("json error: %d %s", resp.StatusCode, body)
	}
}

func TestNonAzureErrorIsInternal(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		WriteError(w, r, io.ErrUnexpectedEOF)
	})
	resp := serve(t, auth.Blob, h, httptest.NewRequest("GET", "http://127.0.0.1/devstoreaccount1/c", nil))
	if resp.StatusCode != 500 || resp.Header.Get("x-ms-error-code") != "InternalError" {
		t.Fatalf("status %d", resp.StatusCode)
	}
}

func TestNotImplementedIsAzureError(t *testing.T) {
	resp := serve(t, auth.File, NotImplemented(), httptest.NewRequest("GET", "http://127.0.0.1/devstoreaccount1/share?restype=share", nil))
	if resp.StatusCode != 501 || resp.Header.Get("x-ms-error-code") != "NotImplemented" {
		t.Fatalf("status %d", resp.StatusCode)
	}
}

func TestMissingAccountIsInvalidURI(t *testing.T) {
	resp := serve(t, auth.Blob, http.HandlerFunc(ok), httptest.NewRequest("GET", "http://127.0.0.1/", nil))
	if resp.StatusCode != 400 || resp.Header.Get("x-ms-error-code") != "InvalidUri" {
		t.Fatalf("status %d code %q", resp.StatusCode, resp.Header.Get("x-ms-error-code"))
	}
}

func TestRepeatedSingleValuedHeaderIsRefused(t *testing.T) {
	req := httptest.NewRequest("PUT", "http://127.0.0.1/devstoreaccount1/c/b", nil)
	req.Header.Add("x-ms-blob-type", "BlockBlob")
	req.Header.Add("x-ms-blob-type", "PageBlob")
	resp := serve(t, auth.Blob, http.HandlerFunc(ok), req)
	if resp.StatusCode != 400 || resp.Header.Get("x-ms-error-code") != "InvalidHeaderValue" {
		t.Fatalf("status %d code %q", resp.StatusCode, resp.Header.Get("x-ms-error-code"))
	}
	// Repeated metadata values are joined, not refused.
	req = httptest.NewRequest("PUT", "http://127.0.0.1/devstoreaccount1/c/b", nil)
	req.Header.Add("x-ms-meta-a", "1")
	req.Header.Add("x-ms-meta-a", "2")
	if resp := serve(t, auth.Blob, http.HandlerFunc(ok), req); resp.StatusCode != 200 {
		t.Fatalf("repeated metadata: status %d", resp.StatusCode)
	}
}

// The debug log shows requests with every credential redacted: SAS
// signatures in the target and in copy sources, Authorization, copy source
// tokens and encryption keys.
func TestDebugLogRedactsCredentials(t *testing.T) {
	var log strings.Builder
	req := httptest.NewRequest("PUT", "http://127.0.0.1:10000/devstoreaccount1/c/b?sv=2025-11-05&sr=b&sp=w&sig=SECRET1%3D", nil)
	req.Header.Set("x-ms-version", "2025-11-05")
	req.Header.Set("Authorization", "SharedKey devstoreaccount1:SECRET2=")
	req.Header.Set("x-ms-copy-source", "http://127.0.0.1:10000/devstoreaccount1/c/src?sp=r&sig=SECRET3")
	req.Header.Set("x-ms-copy-source-authorization", "Bearer SECRET4")
	req.Header.Set("x-ms-encryption-key", "SECRET5")
	rec := httptest.NewRecorder()
	Wrap(auth.Blob, http.HandlerFunc(ok), Options{Debug: &log}).ServeHTTP(rec, req)
	out := log.String()
	if strings.Contains(out, "SECRET") || !strings.Contains(out, "sig=REDACTED") || !strings.Contains(out, "devstoreaccount1:REDACTED") {
		t.Fatalf("debug log leaks a credential:\n%s", out)
	}
}

// TestPathStyleOnly: with PathStyleOnly (--disableProductStyleUrl) the
// account is the first path segment even under an account-like host name.
func TestPathStyleOnly(t *testing.T) {
	req := httptest.NewRequest("GET", "http://myacct.blob.localhost:10000/devstoreaccount1/c/b", nil)
	rec := httptest.NewRecorder()
	Wrap(auth.Blob, http.HandlerFunc(ok), Options{PathStyleOnly: true}).ServeHTTP(rec, req)
	if body := rec.Body.String(); body != "devstoreaccount1|c/b" {
		t.Fatalf("got %q", body)
	}
}

// TestRefusedRequestsAreNamedInTheAccessLog: a request refused before any
// operation claims it still carries an operation in the access log.
func TestRefusedRequestsAreNamedInTheAccessLog(t *testing.T) {
	var buf strings.Builder
	log := slog.New(slog.NewTextHandler(&buf, nil))
	req := httptest.NewRequest("PUT", "http://127.0.0.1:10000/devstoreaccount1/c/b?comp=block&blockid=x", nil)
	req.Header.Set("x-ms-version", "not-a-version")
	Wrap(auth.Blob, http.HandlerFunc(ok), Options{Log: log}).ServeHTTP(httptest.NewRecorder(), req)
	if !strings.Contains(buf.String(), `op="PUT object?comp=block"`) {
		t.Fatalf("access log: %s", buf.String())
	}
}

// Every engine failure a client may retry is 503 ServerBusy on every
// service, through the one mapping (azerr.FromEngine).
func TestTransientEngineErrorIsServerBusy(t *testing.T) {
	for _, svc := range []auth.Service{auth.Blob, auth.Queue, auth.Table, auth.File} {
		for _, sentinel := range []error{storage.ErrConflict, storage.ErrClosed, storage.ErrUnavailable} {
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				WriteError(w, r, fmt.Errorf("commit: %w", sentinel))
			})
			resp := serve(t, svc, h, httptest.NewRequest("GET", "http://127.0.0.1/devstoreaccount1/c", nil))
			if resp.StatusCode != 503 || resp.Header.Get("x-ms-error-code") != "ServerBusy" {
				t.Errorf("%v on %v: %d %q, want 503 ServerBusy", sentinel, svc, resp.StatusCode, resp.Header.Get("x-ms-error-code"))
			}
		}
	}
}

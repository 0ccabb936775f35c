package auth

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/auth/sharedkey"
	"github.com/lazuli-storage/lazuli/internal/azerr"
)

var testNow = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func testKey2() []byte { return []byte("second-key-of-devstoreaccount1") }

// MustAuthenticator returns an Authenticator with a fixed clock, the
// development account (with a second key) and "other" (one key).
func MustAuthenticator(tb testing.TB, log *slog.Logger, debug bool) *Authenticator {
	tb.Helper()
	dev := DevelopmentAccount()
	dev.Keys = append(dev.Keys, testKey2())
	return New(Config{
		Accounts: []Account{dev, {Name: "other", Keys: [][]byte{[]byte("other-key")}}},
		Log:      log, Debug: debug,
		Now: func() time.Time { return testNow },
	})
}

func devKey() []byte { return DevelopmentAccount().Keys[0] }

func newReq(method, url string, body string) *http.Request {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	r := httptest.NewRequest(method, url, rd)
	r.Header.Set("x-ms-version", "2025-11-05")
	r.Header.Set("x-ms-date", testNow.Format(http.TimeFormat))
	return r
}

// wantCode asserts err is the Azure error code with status.
func wantCode(tb testing.TB, err error, code azerr.Code, status int) *azerr.Error {
	tb.Helper()
	e, ok := azerr.As(err)
	if !ok {
		tb.Fatalf("error = %v, want %s", err, code)
	}
	if e.Code != code || e.Status != status {
		tb.Fatalf("error = %s %d (%v), want %s %d", e.Code, e.Status, e.Details, code, status)
	}
	return e
}

func detail(e *azerr.Error) string {
	for _, d := range e.Details {
		if d.Name == "AuthenticationErrorDetail" {
			return d.Value
		}
	}
	return ""
}

func TestSharedKeyAccepted(t *testing.T) {
	a := MustAuthenticator(t, nil, false)
	tests := []struct {
		name    string
		svc     Service
		url     string
		account string
		key     []byte
		form    sharedkey.Form
		kind    Kind
	}{
		{"blob path-style", Blob, "http://127.0.0.1:10000/devstoreaccount1/c/b?comp=metadata", DevAccount, devKey(), sharedkey.Form{}, SharedKey},
		{"blob second key", Blob, "http://127.0.0.1:10000/devstoreaccount1/c/b", DevAccount, testKey2(), sharedkey.Form{}, SharedKey},
		{"queue lite", Queue, "http://127.0.0.1:10001/devstoreaccount1/q/messages?numofmessages=3", DevAccount, devKey(), sharedkey.Form{Lite: true}, SharedKeyLite},
		{"file host-style", File, "http://other.file.localhost:10003/share/dir/f.txt?comp=range", "other", []byte("other-key"), sharedkey.Form{}, SharedKey},
		{"table", Table, "http://127.0.0.1:10002/devstoreaccount1/t(PartitionKey='a',RowKey='b')", DevAccount, devKey(), sharedkey.Form{Table: true}, SharedKey},
		{"table lite", Table, "http://127.0.0.1:10002/devstoreaccount1/Tables", DevAccount, devKey(), sharedkey.Form{Table: true, Lite: true}, SharedKeyLite},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newReq("PUT", tt.url, "some body")
			r.Header.Set("Content-Type", "text/plain")
			r.Header.Set("x-ms-meta-Name", "value")
			if err := sharedkey.SignForm(r, tt.account, tt.key, tt.form); err != nil {
				t.Fatal(err)
			}
			id, err := a.Authenticate(r, tt.svc, tt.account)
			if err != nil {
				t.Fatalf("Authenticate: %v", err)
			}
			if id.Kind != tt.kind || id.Account != tt.account {
				t.Fatalf("identity = %+v", id)
			}
			if err := a.Authorize(id, r, Access{Service: tt.svc, Resource: ResObject, Perms: "w"}); err != nil {
				t.Fatalf("Authorize: %v", err)
			}
		})
	}
}

// A request signed with the exported signer travels over a real HTTP
// connection and verifies on the server: Content-Length, the encoded path
// and the headers Go's transport adds all agree.
func TestSignedRequestVerifiesOverTheWire(t *testing.T) {
	a := MustAuthenticator(t, nil, false)
	// The request is signed now; the server clock must agree.
	a.now = time.Now
	var got error
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		svc := Blob
		if strings.Contains(r.URL.Path, "tbl") {
			svc = Table
		}
		_, got = a.Authenticate(r, svc, DevAccount)
		// The documented form itself must match, not only a variant.
		_, _, sig, _ := sharedkey.ParseAuthorization(r.Header.Get("Authorization"))
		if got == nil && !sharedkey.SignatureMatches(devKey(), sharedkey.StringToSign(r, DevAccount, sharedkey.Form{Table: svc == Table}), sig) {
			got = errors.New("only a client variant matched: " + r.Method + " " + r.URL.String())
		}
	}))
	defer srv.Close()
	for _, c := range []struct {
		method, path, body string
		table              bool
		version            string
	}{
		{"PUT", "/devstoreaccount1/c/dir%2Fa%20b.txt?comp=block&blockid=AAA%3D", "payload", false, ""},
		{"PUT", "/devstoreaccount1/c?restype=container", "", false, ""},
		{"DELETE", "/devstoreaccount1/c?restype=container", "", false, ""},
		{"PUT", "/devstoreaccount1/c?restype=container", "", false, "2014-02-14"},
		{"POST", "/devstoreaccount1/tbl(PartitionKey='p',RowKey='r')", "{}", true, ""},
		{"GET", "/devstoreaccount1/c/b", "", false, ""},
	} {
		var body io.Reader
		if c.body != "" {
			body = bytes.NewBufferString(c.body)
		}
		r, _ := http.NewRequest(c.method, srv.URL+c.path, body)
		r.Header.Set("x-ms-version", "2025-11-05")
		if c.version != "" {
			r.Header.Set("x-ms-version", c.version)
		}
		if err := sharedkey.Sign(r, DevAccount, devKey(), c.table); err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got != nil {
			t.Errorf("%s %s: %v", c.method, c.path, got)
		}
	}
}

func TestSharedKeyRefused(t *testing.T) {
	a := MustAuthenticator(t, nil, false)
	signed := func(mut func(r *http.Request)) *http.Request {
		r := newReq("GET", "http://127.0.0.1:10000/devstoreaccount1/c/b", "")
		if mut != nil {
			mut(r)
		}
		if r.Header.Get("Authorization") == "" {
			sharedkey.Sign(r, DevAccount, devKey(), false)
		}
		return r
	}
	tests := []struct {
		name       string
		r          *http.Request
		account    string
		code       azerr.Code
		status     int
		detailPart string
	}{
		{"no colon", signed(func(r *http.Request) { r.Header.Set("Authorization", "SharedKey devstoreaccount1") }), DevAccount, azerr.InvalidAuthenticationInfo, 400, "form"},
		{"only scheme", signed(func(r *http.Request) { r.Header.Set("Authorization", "SharedKey") }), DevAccount, azerr.InvalidAuthenticationInfo, 400, ""},
		{"two headers", signed(func(r *http.Request) {
			r.Header.Add("Authorization", "SharedKey a:b")
			r.Header.Add("Authorization", "SharedKey a:b")
		}), DevAccount, azerr.InvalidAuthenticationInfo, 400, "more than once"},
		{"bearer", signed(func(r *http.Request) { r.Header.Set("Authorization", "Bearer eyJ0eXAiOiJKV1QiLCJhbGciOi.x.y") }), DevAccount, azerr.AuthenticationFailed, 403, "Bearer is not supported"},
		{"unknown scheme", signed(func(r *http.Request) { r.Header.Set("Authorization", "Basic dXNlcjpwYXNz") }), DevAccount, azerr.AuthenticationFailed, 403, "Basic is not supported"},
		{"scheme case matters", signed(func(r *http.Request) { r.Header.Set("Authorization", "sharedkey devstoreaccount1:abc=") }), DevAccount, azerr.AuthenticationFailed, 403, "not supported"},
		{"other account in header", signed(func(r *http.Request) { r.Header.Set("Authorization", "SharedKey other:abc=") }), DevAccount, azerr.AuthenticationFailed, 403, "does not match"},
		{"unknown account", signed(func(r *http.Request) { r.Header.Set("Authorization", "SharedKey nobody:abc=") }), "nobody", azerr.AuthenticationFailed, 403, "does not exist"},
		{"wrong key", signed(func(r *http.Request) {
			sharedkey.Sign(r, DevAccount, []byte("wrong"), false)
		}), DevAccount, azerr.AuthenticationFailed, 403, "Server used following string to sign: 'GET\n"},
		{"tampered after signing", func() *http.Request {
			r := signed(nil)
			r.Header.Set("x-ms-meta-x", "added")
			return r
		}(), DevAccount, azerr.AuthenticationFailed, 403, "is not the same as any computed signature"},
		{"signature not base64", signed(func(r *http.Request) { r.Header.Set("Authorization", "SharedKey devstoreaccount1:!!!") }), DevAccount, azerr.AuthenticationFailed, 403, "'!!!'"},
		{"no date", signed(func(r *http.Request) {
			r.Header.Del("x-ms-date")
			r.Header.Set("Authorization", "SharedKey devstoreaccount1:abc=")
		}), DevAccount, azerr.AuthenticationFailed, 403, "date header not specified"},
		{"bad date", signed(func(r *http.Request) { r.Header.Set("x-ms-date", "yesterday") }), DevAccount, azerr.AuthenticationFailed, 403, "not a valid"},
		{"16 minutes old", signed(func(r *http.Request) {
			r.Header.Set("x-ms-date", testNow.Add(-16*time.Minute).Format(http.TimeFormat))
		}), DevAccount, azerr.AuthenticationFailed, 403, "too old"},
		{"16 minutes ahead", signed(func(r *http.Request) {
			r.Header.Set("x-ms-date", testNow.Add(16*time.Minute).Format(http.TimeFormat))
		}), DevAccount, azerr.AuthenticationFailed, 403, "future"},
		{"Content-Type twice", signed(func(r *http.Request) {
			r.Header.Add("Content-Type", "text/plain")
			r.Header.Add("Content-Type", "text/html")
		}), DevAccount, azerr.InvalidHeaderValue, 400, ""},
		{"old Date header, no x-ms-date", signed(func(r *http.Request) {
			r.Header.Del("x-ms-date")
			r.Header.Set("Date", testNow.Add(-time.Hour).Format(http.TimeFormat))
		}), DevAccount, azerr.AuthenticationFailed, 403, "too old"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := a.Authenticate(tt.r, Blob, tt.account)
			e := wantCode(t, err, tt.code, tt.status)
			if !strings.Contains(detail(e), tt.detailPart) {
				t.Fatalf("detail %q lacks %q", detail(e), tt.detailPart)
			}
		})
	}
}

func TestBlankAuthorizationIsNone(t *testing.T) {
	a := MustAuthenticator(t, nil, false)
	r := newReq("GET", "http://127.0.0.1:10000/devstoreaccount1/c/b", "")
	r.Header.Set("Authorization", " ")
	id, err := a.Authenticate(r, Blob, DevAccount)
	if err != nil || id.Kind != Anonymous {
		t.Fatalf("%+v %v", id, err)
	}
}

func TestSharedKeyClockSkewBoundary(t *testing.T) {
	a := MustAuthenticator(t, nil, false)
	for _, off := range []time.Duration{-15 * time.Minute, 15 * time.Minute, -14 * time.Minute, time.Minute} {
		r := newReq("GET", "http://127.0.0.1:10000/devstoreaccount1/c", "")
		r.Header.Set("x-ms-date", testNow.Add(off).Format(http.TimeFormat))
		if off == time.Minute {
			r.Header.Set("x-ms-date", testNow.Add(off).Format(time.RFC1123Z))
		}
		sharedkey.Sign(r, DevAccount, devKey(), false)
		if _, err := a.Authenticate(r, Blob, DevAccount); err != nil {
			t.Errorf("offset %v refused: %v", off, err)
		}
	}
}

// Path-style clients sign /account/account/...; a client that signs the
// host-style form against a path-style URL is accepted too.
func TestSharedKeyPathStyleBothForms(t *testing.T) {
	a := MustAuthenticator(t, nil, false)
	r := newReq("GET", "http://127.0.0.1:10000/devstoreaccount1/c/b", "")
	sts := "GET\n\n\n\n\n\n\n\n\n\n\n\nx-ms-date:" + r.Header.Get("x-ms-date") + "\nx-ms-version:2025-11-05\n/devstoreaccount1/c/b"
	r.Header.Set("Authorization", "SharedKey devstoreaccount1:"+sharedkey.ComputeSignature(devKey(), sts))
	if _, err := a.Authenticate(r, Blob, DevAccount); err != nil {
		t.Fatal(err)
	}
}

func TestSharedKeyDebugLogsStringToSign(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	r := newReq("GET", "http://127.0.0.1:10000/devstoreaccount1/c/b", "")
	sharedkey.Sign(r, DevAccount, []byte("wrong"), false)
	if _, err := MustAuthenticator(t, log, true).Authenticate(r, Blob, DevAccount); err == nil {
		t.Fatal("accepted")
	}
	if !strings.Contains(buf.String(), "string_to_sign") || !strings.Contains(buf.String(), "/devstoreaccount1/devstoreaccount1/c/b") {
		t.Fatalf("log = %q", buf.String())
	}
	buf.Reset()
	if _, err := MustAuthenticator(t, log, false).Authenticate(r, Blob, DevAccount); err == nil {
		t.Fatal("accepted")
	}
	if buf.Len() != 0 {
		t.Fatalf("logged without Debug: %q", buf.String())
	}
}

func TestUnknownAccountRefused(t *testing.T) {
	a := MustAuthenticator(t, nil, false)
	r := httptest.NewRequest("GET", "http://127.0.0.1:10000/nobody/c/b", nil)
	_, err := a.Authenticate(r, Blob, "nobody")
	wantCode(t, err, azerr.AuthenticationFailed, 403)
	r = httptest.NewRequest("GET", "http://127.0.0.1:10000/nobody/c/b?sv=2025-11-05&sr=b&sp=r&se=2030-01-01&sig=abc", nil)
	_, err = a.Authenticate(r, Blob, "nobody")
	wantCode(t, err, azerr.AuthenticationFailed, 403)
}

func TestParseAccountsKeys(t *testing.T) {
	k1 := base64.StdEncoding.EncodeToString([]byte("k1"))
	k2 := base64.StdEncoding.EncodeToString([]byte("k2"))
	accs, _, err := ParseAccounts("a1:" + k1 + ":" + k2 + ";a2:" + k1)
	if err != nil || len(accs) != 2 || len(accs[0].Keys) != 2 || string(accs[0].Keys[1]) != "k2" {
		t.Fatalf("%v %v", accs, err)
	}
}

func detailOf(err error) string {
	if e, ok := azerr.As(err); ok {
		return detail(e)
	}
	return ""
}

// TestParseAccountsLenient pins the reading of keys that are not strict
// base64 against what Node.js's Buffer.from(key, "base64") gives (the
// reference emulator's reading), each with a warning.
func TestParseAccountsLenient(t *testing.T) {
	for key, want := range map[string]string{
		"YWJjZA":               "61626364",
		"YWJj ZA==":            "61626364",
		"YW-_ZA==":             "616fbf64",
		"YWJj$ZA==":            "61626364",
		"YWJjZA==YWJj":         "61626364",
		"YWJjZA=":              "61626364",
		"abc":                  "69b7",
		"key-that-isnt-base64": "91ecbeb616adfa2b27b7e6dab1eeb8",
		"password123":          "a5ab2cc28addd76d",
	} {
		accs, warns, err := ParseAccounts("acct:" + key)
		if err != nil {
			t.Fatalf("%q: %v", key, err)
		}
		if got := hex.EncodeToString(accs[0].Keys[0]); got != want {
			t.Errorf("%q: key %s, want %s", key, got, want)
		}
		if len(warns) != 1 {
			t.Errorf("%q: %d warnings", key, len(warns))
		}
	}
	if _, warns, err := ParseAccounts("acct:YWJjZA=="); err != nil || len(warns) != 0 {
		t.Fatalf("strict key: %v %v", warns, err)
	}
	if _, _, err := ParseAccounts("acct:!!!!"); err == nil {
		t.Fatal("a key with no bytes was accepted")
	}
}

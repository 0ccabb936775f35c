package sharedkey

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
)

const testDate = "Sun, 22 Nov 2026 00:00:00 GMT"

// newRequest builds a request the way the server receives it: the URL is
// parsed from the wire form, so RawPath keeps the client's encoding.
func newRequest(t *testing.T, method, rawURL string, headers ...string) *http.Request {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	r := &http.Request{Method: method, URL: u, Header: http.Header{}, Host: u.Host}
	for i := 0; i+1 < len(headers); i += 2 {
		r.Header.Add(headers[i], headers[i+1])
	}
	return r
}

// The expected strings below are written out by hand from the documented
// layouts, one field per line of Go source.
func TestStringToSignGolden(t *testing.T) {
	tests := []struct {
		name    string
		req     *http.Request
		account string
		form    Form
		want    string
	}{
		{
			name:    "list blobs, path-style, repeated query parameter",
			req:     newRequest(t, "GET", "http://127.0.0.1:10000/devstoreaccount1/c?restype=container&comp=list&include=snapshots&include=metadata", "x-ms-date", testDate, "x-ms-version", "2025-11-05"),
			account: "devstoreaccount1",
			want: "GET\n" + // VERB
				"\n" + // Content-Encoding
				"\n" + // Content-Language
				"\n" + // Content-Length
				"\n" + // Content-MD5
				"\n" + // Content-Type
				"\n" + // Date (x-ms-date is used)
				"\n" + // If-Modified-Since
				"\n" + // If-Match
				"\n" + // If-None-Match
				"\n" + // If-Unmodified-Since
				"\n" + // Range
				"x-ms-date:" + testDate + "\n" +
				"x-ms-version:2025-11-05\n" +
				"/devstoreaccount1/devstoreaccount1/c\n" +
				"comp:list\n" +
				"include:metadata,snapshots\n" +
				"restype:container",
		},
		{
			name: "put blob, host-style, all standard headers, folded header value",
			req: newRequest(t, "put", "http://myaccount.blob.core.windows.net/photos/dir%2Fcat.jpg?timeout=30",
				"Content-Encoding", "gzip", "Content-Language", "en-US", "Content-Length", "11",
				"Content-MD5", "XrY7u+Ae7tCTyyK7j1rNww==", "Content-Type", "image/jpeg",
				"If-Modified-Since", "Sat, 21 Nov 2026 00:00:00 GMT", "If-Match", `"0x8D"`,
				"If-None-Match", "*", "If-Unmodified-Since", "Mon, 23 Nov 2026 00:00:00 GMT", "Range", "bytes=0-10",
				"x-ms-blob-type", "BlockBlob", "X-MS-Meta-Name", "  a   b \t c  ", "x-ms-meta-quoted", `x "a   b"  y`,
				"x-ms-date", testDate, "x-ms-version", "2025-11-05"),
			account: "myaccount",
			want: "PUT\n" +
				"gzip\n" +
				"en-US\n" +
				"11\n" +
				"XrY7u+Ae7tCTyyK7j1rNww==\n" +
				"image/jpeg\n" +
				"\n" +
				"Sat, 21 Nov 2026 00:00:00 GMT\n" +
				"\"0x8D\"\n" +
				"*\n" +
				"Mon, 23 Nov 2026 00:00:00 GMT\n" +
				"bytes=0-10\n" +
				"x-ms-blob-type:BlockBlob\n" +
				"x-ms-date:" + testDate + "\n" +
				"x-ms-meta-name:a b c\n" +
				"x-ms-meta-quoted:x \"a   b\" y\n" +
				"x-ms-version:2025-11-05\n" +
				"/myaccount/photos/dir%2Fcat.jpg\n" +
				"timeout:30",
		},
		{
			name:    "zero Content-Length is empty from 2015-02-21, Date header used without x-ms-date, empty x-ms header kept",
			req:     newRequest(t, "DELETE", "http://127.0.0.1:10001/devstoreaccount1/q1/messages", "Content-Length", "0", "Date", testDate, "x-ms-version", "2015-02-21", "x-ms-client-request-id", ""),
			account: "devstoreaccount1",
			want:    "DELETE\n\n\n\n\n\n" + testDate + "\n\n\n\n\n\nx-ms-client-request-id:\nx-ms-version:2015-02-21\n/devstoreaccount1/devstoreaccount1/q1/messages",
		},
		{
			name:    "zero Content-Length is literal 0 up to 2014-02-14",
			req:     newRequest(t, "PUT", "http://127.0.0.1:10000/devstoreaccount1/c?restype=container", "Content-Length", "0", "x-ms-date", testDate, "x-ms-version", "2014-02-14"),
			account: "devstoreaccount1",
			want:    "PUT\n\n\n0\n\n\n\n\n\n\n\n\nx-ms-date:" + testDate + "\nx-ms-version:2014-02-14\n/devstoreaccount1/devstoreaccount1/c\nrestype:container",
		},
		{
			name:    "file service, root path gets a slash, query names lowercased",
			req:     newRequest(t, "GET", "https://acct.file.core.windows.net?COMP=list&Prefix=a%20b", "x-ms-date", testDate, "x-ms-version", "2025-11-05"),
			account: "acct",
			want:    "GET\n\n\n\n\n\n\n\n\n\n\n\nx-ms-date:" + testDate + "\nx-ms-version:2025-11-05\n/acct/\ncomp:list\nprefix:a b",
		},
		{
			name:    "blob SharedKeyLite",
			req:     newRequest(t, "PUT", "http://127.0.0.1:10000/devstoreaccount1/c/b?comp=metadata&timeout=5", "Content-MD5", "abc=", "Content-Type", "text/plain", "x-ms-meta-k", "v", "x-ms-date", testDate),
			account: "devstoreaccount1",
			form:    Form{Lite: true},
			want:    "PUT\nabc=\ntext/plain\n\nx-ms-date:" + testDate + "\nx-ms-meta-k:v\n/devstoreaccount1/devstoreaccount1/c/b?comp=metadata",
		},
		{
			name:    "table SharedKey, entity path kept as encoded, only comp kept",
			req:     newRequest(t, "GET", "http://127.0.0.1:10002/devstoreaccount1/mytable(PartitionKey='p',RowKey='r%20s')?$select=a&timeout=3", "Content-Type", "application/json", "x-ms-date", testDate, "x-ms-version", "2019-02-02"),
			account: "devstoreaccount1",
			form:    Form{Table: true},
			want:    "GET\n\napplication/json\n" + testDate + "\n/devstoreaccount1/devstoreaccount1/mytable(PartitionKey='p',RowKey='r%20s')",
		},
		{
			name:    "table SharedKey, Date header when no x-ms-date, comp kept",
			req:     newRequest(t, "PUT", "https://acct.table.core.windows.net/mytable?comp=acl", "Content-MD5", "m==", "Date", testDate),
			account: "acct",
			form:    Form{Table: true},
			want:    "PUT\nm==\n\n" + testDate + "\n/acct/mytable?comp=acl",
		},
		{
			name:    "table SharedKeyLite",
			req:     newRequest(t, "POST", "http://127.0.0.1:10002/devstoreaccount1/$batch", "Content-Type", "multipart/mixed", "x-ms-date", testDate),
			account: "devstoreaccount1",
			form:    Form{Table: true, Lite: true},
			want:    testDate + "\n/devstoreaccount1/devstoreaccount1/$batch",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := StringToSign(tt.req, tt.account, tt.form)
			if got != tt.want {
				t.Errorf("string to sign\n got: %q\nwant: %q", got, tt.want)
			}
			if c := Candidates(tt.req, tt.account, tt.form); len(c) == 0 || c[0] != tt.want {
				t.Errorf("Candidates()[0] is not the canonical form: %q", c)
			}
		})
	}
}

// A known-answer HMAC: the development key over a fixed string.
func TestComputeSignatureKnownAnswer(t *testing.T) {
	key := []byte("key")
	got := ComputeSignature(key, "The quick brown fox jumps over the lazy dog")
	// HMAC-SHA256("key", ...) = f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8
	if want := "97yD9DBThCSxMpjmqm+xQ+9NWaFJRhdZl0edvC0aPNg="; got != want {
		t.Fatalf("got %s want %s", got, want)
	}
	if !SignatureMatches(key, "The quick brown fox jumps over the lazy dog", got) {
		t.Fatal("SignatureMatches refused its own signature")
	}
	if SignatureMatches(key, "other", got) || SignatureMatches(key, "x", "not base64!") {
		t.Fatal("SignatureMatches accepted a wrong signature")
	}
}

func TestParseAuthorization(t *testing.T) {
	good := []struct{ in, scheme, account, sig string }{
		{"SharedKey devstoreaccount1:abc+/=", "SharedKey", "devstoreaccount1", "abc+/="},
		{"SharedKeyLite acct:sig", "SharedKeyLite", "acct", "sig"},
		{"  SharedKey   acct:sig  ", "SharedKey", "acct", "sig"},
		{"Bearer a:b", "Bearer", "a", "b"},
	}
	for _, g := range good {
		s, a, sig, err := ParseAuthorization(g.in)
		if err != nil || s != g.scheme || a != g.account || sig != g.sig {
			t.Errorf("ParseAuthorization(%q) = %q %q %q %v", g.in, s, a, sig, err)
		}
	}
	for _, bad := range []string{"", "SharedKey", "SharedKey ", "SharedKey acct", "SharedKey acct:", "SharedKey :sig", "SharedKey a b:sig", "SharedKey a:s g", " :"} {
		if _, _, _, err := ParseAuthorization(bad); err != ErrMalformed {
			t.Errorf("ParseAuthorization(%q) err = %v, want ErrMalformed", bad, err)
		}
	}
}

func TestCompareHeaderNames(t *testing.T) {
	// Ordered as the culture-aware comparison orders them.
	ordered := []string{
		"x-ms-meta-a_b", // '_' before digits
		"x-ms-meta-a1",
		"x-ms-meta-ab", // hyphens ignored at first: "ab" < "a-c" (as "ac")
		"x-ms-meta-a-c",
		"x-ms-meta-b",
	}
	for i := range ordered {
		for j := range ordered {
			got := CompareHeaderNames(ordered[i], ordered[j])
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got != want {
				t.Errorf("CompareHeaderNames(%q, %q) = %d, want %d", ordered[i], ordered[j], got, want)
			}
		}
	}
	// Names equal but for hyphens and apostrophes: at the first position
	// where they differ in kind, letter < end < apostrophe < hyphen.
	for _, p := range [][2]string{
		{"x-ms-meta-z", "x-ms-meta--z"},
		{"x-ms-ab", "x-ms-a-b"},
		{"x-ms-a", "x-ms-a-"},
		{"x-ms-a'b", "x-ms-a-b"},
		{"x-ms-ab", "x-ms-a'b"},
		{"x-ms-a-bc-", "x-ms-a-b-c"},
		{"x-ms-A", "x-ms-a"}, // ordinal as the last resort
	} {
		if CompareHeaderNames(p[0], p[1]) != -1 || CompareHeaderNames(p[1], p[0]) != 1 {
			t.Errorf("want %q before %q", p[0], p[1])
		}
	}
	// Typical headers sort the same in both orders.
	common := []string{"x-ms-blob-content-type", "x-ms-blob-type", "x-ms-client-request-id", "x-ms-date", "x-ms-lease-id", "x-ms-version"}
	if !sortedBy(common, CompareHeaderNames) || !sortedBy(common, strings.Compare) {
		t.Error("common headers do not sort alike")
	}
}

func TestCandidatesCoverClientSpellings(t *testing.T) {
	r := newRequest(t, "GET", "http://127.0.0.1:10000/devstoreaccount1/c/b", "x-ms-meta-a1", "1", "x-ms-meta-a_b", "2", "x-ms-date", testDate)
	c := Candidates(r, "devstoreaccount1", Form{})
	culture := "GET\n\n\n\n\n\n\n\n\n\n\n\nx-ms-date:" + testDate + "\nx-ms-meta-a_b:2\nx-ms-meta-a1:1\n/devstoreaccount1/devstoreaccount1/c/b"
	ordinal := "GET\n\n\n\n\n\n\n\n\n\n\n\nx-ms-date:" + testDate + "\nx-ms-meta-a1:1\nx-ms-meta-a_b:2\n/devstoreaccount1/devstoreaccount1/c/b"
	hostStyle := "GET\n\n\n\n\n\n\n\n\n\n\n\nx-ms-date:" + testDate + "\nx-ms-meta-a1:1\nx-ms-meta-a_b:2\n/devstoreaccount1/c/b"
	if c[0] != ordinal {
		t.Errorf("canonical = %q", c[0])
	}
	for _, want := range []string{culture, hostStyle} {
		if !slices.Contains(c, want) {
			t.Errorf("candidates lack %q", want)
		}
	}
	if len(c) != 4 {
		t.Errorf("got %d candidates, want 4 (2 orders x 2 paths)", len(c))
	}
	// A plain request has exactly one candidate plus the host-style path.
	r = newRequest(t, "GET", "http://acct.blob.core.windows.net/c", "x-ms-date", testDate)
	if c := Candidates(r, "acct", Form{}); len(c) != 1 {
		t.Errorf("plain request: %d candidates", len(c))
	}
}

func TestSignSetsDateAndAuthorization(t *testing.T) {
	key := []byte("secret")
	r, _ := http.NewRequest("PUT", "http://127.0.0.1:10000/devstoreaccount1/c/b", strings.NewReader("hello"))
	r.Header.Set("x-ms-version", "2025-11-05")
	if err := Sign(r, "devstoreaccount1", key, false); err != nil {
		t.Fatal(err)
	}
	if r.Header.Get("x-ms-date") == "" {
		t.Fatal("x-ms-date not set")
	}
	if r.Header.Get("Content-Length") != "5" {
		t.Fatalf("Content-Length = %q", r.Header.Get("Content-Length"))
	}
	auth := r.Header.Get("Authorization")
	scheme, account, sig, err := ParseAuthorization(auth)
	if err != nil || scheme != "SharedKey" || account != "devstoreaccount1" {
		t.Fatalf("Authorization = %q", auth)
	}
	if !SignatureMatches(key, StringToSign(r, "devstoreaccount1", Form{}), sig) {
		t.Fatal("signature does not verify")
	}
	// An existing date is kept.
	r2, _ := http.NewRequest("GET", "http://127.0.0.1:10002/devstoreaccount1/t()", nil)
	r2.Header.Set("Date", testDate)
	if err := SignForm(r2, "devstoreaccount1", key, Form{Table: true, Lite: true}); err != nil {
		t.Fatal(err)
	}
	if r2.Header.Get("x-ms-date") != "" || !strings.HasPrefix(r2.Header.Get("Authorization"), "SharedKeyLite devstoreaccount1:") {
		t.Fatalf("headers = %v", r2.Header)
	}
	if err := Sign(r2, "", key, false); err == nil {
		t.Fatal("empty account accepted")
	}
	if err := Sign(r2, "a", nil, false); err == nil {
		t.Fatal("empty key accepted")
	}
}

func FuzzParseAuthorizationHeader(f *testing.F) {
	for _, s := range []string{"SharedKey a:b", "SharedKeyLite devstoreaccount1:xyz==", "", " : ", "Bearer x", "SharedKey a:b:c", "\x00 \xff:\x01"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		scheme, account, sig, err := ParseAuthorization(s)
		if err != nil {
			return
		}
		if scheme == "" || account == "" || sig == "" || strings.Contains(sig, ":") {
			t.Fatalf("ParseAuthorization(%q) = %q %q %q", s, scheme, account, sig)
		}
	})
}

func FuzzCanonicalizedHeaders(f *testing.F) {
	f.Add("x-ms-meta-a_b", "v  w", "x-ms-meta-a1", `"q  q"`, "/acct/c/b", "comp=list&include=a&include=b")
	f.Add("X-Ms-Date", "", "content-type", "x", "", "%zz=1&a")
	f.Add("x-ms-", "\t", "x-ms--", "\"", "/%2F", ";=&=")
	f.Fuzz(func(t *testing.T, n1, v1, n2, v2, path, query string) {
		h := http.Header{}
		h[n1] = []string{v1}
		h[n2] = append(h[n2], v2)
		u := &url.URL{Path: path, RawQuery: query}
		r := &http.Request{Method: "GET", URL: u, Header: h}
		for _, f := range []Form{{}, {Lite: true}, {Table: true}, {Table: true, Lite: true}} {
			c := Candidates(r, "acct", f)
			if len(c) == 0 || c[0] != StringToSign(r, "acct", f) {
				t.Fatal("first candidate is not the canonical string")
			}
		}
		if a, b := CompareHeaderNames(n1, n2), CompareHeaderNames(n2, n1); a != -b {
			t.Fatalf("CompareHeaderNames not antisymmetric for %q %q: %d %d", n1, n2, a, b)
		}
		_ = CanonicalizedHeaders(h)
		_ = CanonicalizedResourceLite(u, "acct")
	})
}

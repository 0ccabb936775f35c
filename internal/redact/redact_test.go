package redact

import (
	"strings"
	"testing"
)

func TestString(t *testing.T) {
	for in, want := range map[string]string{
		"/devstoreaccount1/c/b?sv=2020-02-10&sig=abc%2Bdef%3D&sp=r": "/devstoreaccount1/c/b?sv=2020-02-10&sig=REDACTED&sp=r",
		"/c?SIG=abc": "/c?SIG=REDACTED",
		"http://h/a?x=1&sig=s1 and http://h/b?sig=s2": "http://h/a?x=1&sig=REDACTED and http://h/b?sig=REDACTED",
		"/c?design=1&signature=2":                     "/c?design=1&signature=2",
		"/c/b?sv=1&%73ig=secret&sp=r":                 "/c/b?sv=1&%73ig=REDACTED&sp=r",
		"/c/b?%53%49%47=secret":                       "/c/b?%53%49%47=REDACTED",
		"/c/b?si%67=secret#f":                         "/c/b?si%67=REDACTED#f",
		"/c/b?%73i=x&sig":                             "/c/b?%73i=x&sig",
		"GET\n\nx-ms-copy-source-authorization:Bearer tok\nx-ms-date:d\n/acct/c": "GET\n\nx-ms-copy-source-authorization:REDACTED\nx-ms-date:d\n/acct/c",
		"x-ms-copy-source:http://h/c/b?sig=zz\n":                                 "x-ms-copy-source:http://h/c/b?sig=REDACTED\n",
	} {
		if got := String(in); got != want {
			t.Errorf("String(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestHeader(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"Authorization", "SharedKey devstoreaccount1:c2lnbmF0dXJl", "SharedKey devstoreaccount1:REDACTED"},
		{"Authorization", "Bearer eyJhbGciOi.x.y", "Bearer REDACTED"},
		{"X-Ms-Copy-Source-Authorization", "Bearer eyJ", "REDACTED"},
		{"X-Ms-Encryption-Key", "a2V5", "REDACTED"},
		{"X-Ms-Copy-Source", "http://127.0.0.1:10000/a/c/b?sv=1&sig=secret", "http://127.0.0.1:10000/a/c/b?sv=1&sig=REDACTED"},
		{"X-Ms-Version", "2025-11-05", "2025-11-05"},
	} {
		if got := Header(tc.name, tc.in); got != tc.want || strings.Contains(got, "secret") {
			t.Errorf("Header(%s, %q) = %q, want %q", tc.name, tc.in, got, tc.want)
		}
	}
}

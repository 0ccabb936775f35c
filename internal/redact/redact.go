// Package redact hides credentials in what lazuli logs: SAS signatures
// (sig=) in URLs, request targets and copy sources, Authorization and the
// other headers whose values are secrets, and such headers quoted in a
// string-to-sign. It is a leaf, used by every place that logs a request.
package redact

import "strings"

const redacted = "REDACTED"

// secretHeaders are headers whose whole value is a credential (beyond the
// scheme and account Authorization keeps).
var secretHeaders = map[string]bool{
	"authorization":                   true,
	"proxy-authorization":             true,
	"x-ms-copy-source-authorization":  true,
	"x-ms-encryption-key":             true,
	"x-ms-source-encryption-key":      true,
	"x-ms-copy-source-encryption-key": true,
	"cookie":                          true,
}

// RedactHeader returns a header value fit for a log: credentials hidden,
// SAS signatures in URLs (copy sources) removed.
func Header(name, v string) string {
	if secretHeaders[strings.ToLower(name)] {
		if strings.EqualFold(name, "Authorization") {
			// "SharedKey account:signature": keep scheme and account.
			if i := strings.LastIndexByte(v, ':'); i >= 0 && !strings.HasPrefix(strings.ToLower(v), "bearer ") {
				return v[:i+1] + redacted
			}
			if scheme, _, ok := strings.Cut(v, " "); ok {
				return scheme + " " + redacted
			}
		}
		return redacted
	}
	return String(v)
}

// String replaces the value of every sig query parameter in s (a URL, a
// request target or a message quoting one) with REDACTED, and the value of
// every line of s that is a secret header as "name:value" (a
// string-to-sign's canonicalized headers).
func String(s string) string {
	if strings.IndexByte(s, '\n') >= 0 {
		lines := strings.Split(s, "\n")
		for i, l := range lines {
			if name, _, ok := strings.Cut(l, ":"); ok && secretHeaders[strings.ToLower(name)] {
				lines[i] = name + ":" + redacted
			}
		}
		s = strings.Join(lines, "\n")
	}
	return sigs(s)
}

// sigs replaces the value of every sig query parameter in s.
func sigs(s string) string {
	var b strings.Builder
	rest := s
	for {
		i := indexSig(rest)
		if i < 0 {
			if b.Len() == 0 {
				return s
			}
			b.WriteString(rest)
			return b.String()
		}
		b.WriteString(rest[:i+len("sig=")])
		b.WriteString(redacted)
		rest = rest[i+len("sig="):]
		end := strings.IndexAny(rest, "&# \"'\n")
		if end < 0 {
			end = len(rest)
		}
		rest = rest[end:]
	}
}

// indexSig finds a "sig=" that starts a query parameter (after '?' or '&'),
// in any case.
func indexSig(s string) int {
	for i := 1; i+4 <= len(s); i++ {
		if (s[i-1] == '?' || s[i-1] == '&') && strings.EqualFold(s[i:i+4], "sig=") {
			return i
		}
	}
	return -1
}

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
		i, n := indexSig(rest)
		if i < 0 {
			if b.Len() == 0 {
				return s
			}
			b.WriteString(rest)
			return b.String()
		}
		b.WriteString(rest[:i+n])
		b.WriteString(redacted)
		rest = rest[i+n:]
		end := strings.IndexAny(rest, "&# \"'\n")
		if end < 0 {
			end = len(rest)
		}
		rest = rest[end:]
	}
}

// indexSig finds a query parameter named sig (after '?' or '&'), in any
// case and with any of its letters percent-encoded, as a query parser
// reads it ("%73ig=" is sig to the server too); it returns where the
// parameter starts and the length of its name and '='.
func indexSig(s string) (int, int) {
	for i := 1; i+4 <= len(s); i++ {
		if s[i-1] != '?' && s[i-1] != '&' {
			continue
		}
		j, k := i, 0
		for ; k < 3 && j < len(s); k++ {
			c := s[j]
			if c == '%' && j+2 < len(s) && isHex(s[j+1]) && isHex(s[j+2]) {
				c = unhex(s[j+1])<<4 | unhex(s[j+2])
				j += 3
			} else {
				j++
			}
			if c|0x20 != "sig"[k] {
				break
			}
		}
		if k == 3 && j < len(s) && s[j] == '=' {
			return i, j + 1 - i
		}
	}
	return -1, 0
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c|0x20 && c|0x20 <= 'f' }

func unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c | 0x20 - 'a' + 10
}

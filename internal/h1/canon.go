package h1

// tokenByte marks the bytes of an RFC 9110 token (header names, methods).
var tokenByte = func() (t [256]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
		t[c-'a'+'A'] = true
	}
	for _, c := range "!#$%&'*+-.^_`|~" {
		t[c] = true
	}
	return t
}()

func allToken(b []byte) bool {
	for _, c := range b {
		if !tokenByte[c] {
			return false
		}
	}
	return true
}

func validFieldName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !tokenByte[s[i]] {
			return false
		}
	}
	return true
}

// canonicalKey validates a header name and returns it in the form
// textproto.CanonicalMIMEHeaderKey gives it (upper case at the start and
// after each '-', lower case elsewhere), sharing the strings of common
// names. It reports false for an empty name or one with a non-token byte.
func canonicalKey(b []byte) (string, bool) {
	if len(b) == 0 {
		return "", false
	}
	var small [96]byte
	var buf []byte
	if len(b) <= len(small) {
		buf = small[:len(b)]
	} else {
		buf = make([]byte, len(b))
	}
	upper := true
	for i, c := range b {
		if !tokenByte[c] {
			return "", false
		}
		if upper {
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
		} else if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
		upper = c == '-'
	}
	if s, ok := commonKeys[string(buf)]; ok {
		return s, true
	}
	return string(buf), true
}

var commonKeys = func() map[string]string {
	m := map[string]string{}
	for _, k := range []string{
		"Accept", "Accept-Charset", "Accept-Encoding", "Accept-Language", "Accept-Ranges",
		"Authorization", "Cache-Control", "Connection", "Content-Disposition",
		"Content-Encoding", "Content-Language", "Content-Length", "Content-Md5",
		"Content-Range", "Content-Type", "Cookie", "Date", "Dataserviceversion",
		"Maxdataserviceversion", "Etag", "Expect", "Expires", "From", "Host",
		"If-Match", "If-Modified-Since", "If-None-Match", "If-Range", "If-Unmodified-Since",
		"Last-Modified", "Origin", "Pragma", "Prefer", "Range", "Referer",
		"Transfer-Encoding", "Trailer", "Upgrade", "User-Agent", "Via",
		"X-Forwarded-For", "X-Forwarded-Proto", "X-Ms-Version", "X-Ms-Date",
		"X-Ms-Client-Request-Id", "X-Ms-Return-Client-Request-Id", "X-Ms-Blob-Type",
		"X-Ms-Range", "X-Ms-Lease-Id", "X-Ms-Lease-Action", "X-Ms-Lease-Duration",
		"X-Ms-Proposed-Lease-Id", "X-Ms-Blob-Content-Type", "X-Ms-Blob-Content-Md5",
		"X-Ms-Blob-Content-Encoding", "X-Ms-Blob-Content-Language",
		"X-Ms-Blob-Content-Disposition", "X-Ms-Blob-Cache-Control", "X-Ms-Access-Tier",
		"X-Ms-Copy-Source", "X-Ms-Range-Get-Content-Md5", "X-Ms-Content-Crc64",
		"X-Ms-Blob-Public-Access", "X-Ms-Page-Write", "X-Ms-Blob-Content-Length",
		"X-Ms-Blob-Sequence-Number", "X-Ms-Sequence-Number-Action", "X-Ms-Tags",
		"X-Ms-If-Tags", "X-Ms-Delete-Snapshots", "X-Ms-Encryption-Scope",
		"X-Ms-Meta-Key", "X-Ms-Type", "X-Ms-File-Attributes", "X-Ms-File-Creation-Time",
		"X-Ms-File-Last-Write-Time", "X-Ms-File-Permission", "X-Ms-Content-Length",
		"X-Ms-Write", "X-Ms-Share-Quota", "X-Ms-File-Request-Intent",
		"X-Ms-Allow-Trailing-Dot", "X-Ms-Source-Allow-Trailing-Dot",
	} {
		m[k] = k
	}
	return m
}()

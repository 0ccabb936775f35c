package httpx

import (
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"

	"github.com/lazuli-storage/lazuli/internal/azerr"
)

// Metadata collects the x-ms-meta-* headers of a request as name/value
// pairs. Go canonicalizes header names on the wire ("X-Ms-Meta-Foo"); a
// name in exactly that canonical shape is taken lower-cased, any other
// spelling is kept as sent (the plumbing restores what the client sent).
func Metadata[KV ~[2]string](h http.Header) []KV {
	var out []KV
	for k, vs := range h {
		if len(k) < len("x-ms-meta-") || !strings.EqualFold(k[:len("x-ms-meta-")], "x-ms-meta-") {
			continue
		}
		name := k[len("x-ms-meta-"):]
		if k[:len("x-ms-meta-")] == "X-Ms-Meta-" && isCanonicalWord(name) {
			name = strings.ToLower(name)
		}
		out = append(out, KV{name, strings.TrimSpace(strings.Join(vs, ","))})
	}
	return out
}

func isCanonicalWord(s string) bool {
	if s == "" || !(s[0] >= 'A' && s[0] <= 'Z') {
		return false
	}
	for i := 1; i < len(s); i++ {
		if s[i] >= 'A' && s[i] <= 'Z' {
			return false
		}
	}
	return true
}

// WriteMetadata sends metadata as x-ms-meta-* headers spelled with the
// case the names were stored with, as Azure does.
func WriteMetadata[KV ~[2]string](h http.Header, meta []KV) {
	for _, kv := range meta {
		h["x-ms-meta-"+kv[0]] = []string{kv[1]}
	}
}

// DecodeMD5 reads a base64 MD5 header value ("" gives nil); anything but
// 16 bytes is 400 InvalidMd5 naming the header.
func DecodeMD5(name, v string) ([]byte, error) {
	if v == "" {
		return nil, nil
	}
	b, err := base64.StdEncoding.DecodeString(v)
	if err != nil || len(b) != 16 {
		return nil, azerr.New(azerr.InvalidMd5).WithDetail("HeaderName", name).WithDetail("HeaderValue", v)
	}
	return b, nil
}

// ParseInt reads an integer header value in [min, max] (400
// InvalidHeaderValue naming the header otherwise).
func ParseInt(name, v string, min, max int64) (int64, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n < min || n > max {
		return 0, azerr.InvalidHeader(name, v)
	}
	return n, nil
}

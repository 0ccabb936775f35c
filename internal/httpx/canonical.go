package httpx

import (
	"net/http"
	"strings"
)

// CanonicalizeHeaders gives r the header keys a network server would
// produce, so that in-process callers that build header maps by hand are
// treated like remote ones. Metadata headers keep the spelling the client
// sent (httpx restores it), since Azure keeps the case of metadata names.
func CanonicalizeHeaders(r *http.Request) {
	for k := range r.Header {
		if http.CanonicalHeaderKey(k) != k && !isMetaHeader(k) {
			out := make(http.Header, len(r.Header))
			for k, vs := range r.Header {
				ck := k
				if !isMetaHeader(k) {
					ck = http.CanonicalHeaderKey(k)
				}
				out[ck] = append(out[ck], vs...)
			}
			r.Header = out
			return
		}
	}
}

func isMetaHeader(k string) bool {
	return len(k) > len("x-ms-meta-") && strings.EqualFold(k[:len("x-ms-meta-")], "x-ms-meta-")
}

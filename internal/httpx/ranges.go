package httpx

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/lazuli-storage/lazuli/internal/azerr"
)

// ParseRange parses a byte range header value, "bytes=start-end", for the
// Range and x-ms-range headers of every service. With open set the end
// may be left out ("bytes=start-"), and end is then -1. Suffix ranges
// ("bytes=-n"), several ranges and a start past the end are refused.
func ParseRange(v string, open bool) (start, end int64, ok bool) {
	spec, found := strings.CutPrefix(strings.TrimSpace(v), "bytes=")
	if !found {
		return 0, 0, false
	}
	a, b, found := strings.Cut(spec, "-")
	if !found || a == "" {
		return 0, 0, false
	}
	s, err := strconv.ParseInt(a, 10, 64)
	if err != nil || s < 0 {
		return 0, 0, false
	}
	if b == "" {
		if !open {
			return 0, 0, false
		}
		return s, -1, true
	}
	e, err := strconv.ParseInt(b, 10, 64)
	if err != nil || e < s {
		return 0, 0, false
	}
	return s, e, true
}

// ReadRange returns the range a read (Get Blob, Get File, Get Page Ranges,
// List Ranges) asks for: x-ms-range when present, else Range. Every
// service answers the same way: an unparsable x-ms-range is 400
// InvalidHeaderValue; an x-ms-range with a negative start (what the SDKs
// write for a negative offset, "bytes=-2-497") or a suffix range is
// ignored, as Azure does, and so is an unparsable Range, as HTTP allows.
// Without a range has is false.
func ReadRange(h http.Header) (start, end int64, has bool, err error) {
	if v := h.Get("X-Ms-Range"); v != "" {
		if strings.HasPrefix(strings.TrimSpace(v), "bytes=-") {
			return 0, 0, false, nil
		}
		s, e, ok := ParseRange(v, true)
		if !ok {
			return 0, 0, false, azerr.InvalidHeader("x-ms-range", v)
		}
		return s, e, true, nil
	}
	if v := h.Get("Range"); v != "" {
		s, e, ok := ParseRange(v, true)
		return s, e, ok, nil
	}
	return 0, 0, false, nil
}

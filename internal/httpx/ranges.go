package httpx

import (
	"strconv"
	"strings"
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

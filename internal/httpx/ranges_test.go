package httpx

import (
	"strconv"
	"testing"
)

func TestParseRange(t *testing.T) {
	for _, c := range []struct {
		in         string
		open       bool
		start, end int64
		ok         bool
	}{
		{"bytes=0-511", false, 0, 511, true},
		{" bytes=5-5 ", false, 5, 5, true},
		{"bytes=5-", true, 5, -1, true},
		{"bytes=5-", false, 0, 0, false},
		{"bytes=5-4", false, 0, 0, false},
		{"bytes=-5", true, 0, 0, false},
		{"5-6", false, 0, 0, false},
		{"bytes=a-b", false, 0, 0, false},
		{"bytes=1-2-3", false, 0, 0, false},
		{"bytes=99999999999999999999-1", false, 0, 0, false},
		{"items=0-1", true, 0, 0, false},
		{"bytes=7-3", true, 0, 0, false},
		{" bytes=1-2 ", true, 1, 2, true},
	} {
		s, e, ok := ParseRange(c.in, c.open)
		if ok != c.ok || (ok && (s != c.start || e != c.end)) {
			t.Errorf("%q: %d %d %v", c.in, s, e, ok)
		}
	}
}

// FuzzParseRange: an accepted range is non-negative and ordered, and
// formatting it back parses to the same range.
func FuzzParseRange(f *testing.F) {
	for _, s := range []string{"bytes=0-0", "bytes=0-", "bytes=-1", "bytes=1-0", "bytes=", "bytes=9223372036854775807-9223372036854775807", "x"} {
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, s string, open bool) {
		start, end, ok := ParseRange(s, open)
		if !ok {
			return
		}
		if start < 0 || (end != -1 && end < start) || (end == -1 && !open) {
			t.Fatalf("%q accepted as %d-%d", s, start, end)
		}
		back := "bytes=" + strconv.FormatInt(start, 10) + "-"
		if end >= 0 {
			back += strconv.FormatInt(end, 10)
		}
		s2, e2, ok2 := ParseRange(back, open)
		if !ok2 || s2 != start || e2 != end {
			t.Fatalf("%q round trip %q", s, back)
		}
	})
}

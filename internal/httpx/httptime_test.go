package httpx

import (
	"net/http"
	"testing"
	"time"
)

func TestHTTPTimeCache(t *testing.T) {
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, d := range []time.Duration{0, 999 * time.Millisecond, time.Second, 256 * time.Second, -256 * time.Second, 0} {
		for _, loc := range []*time.Location{time.UTC, time.FixedZone("x", 3600)} {
			tm := base.Add(d).In(loc)
			if got, want := FormatHTTPTime(tm), tm.UTC().Format(http.TimeFormat); got != want {
				t.Fatalf("FormatHTTPTime(%v) = %q, want %q", tm, got, want)
			}
		}
	}
}

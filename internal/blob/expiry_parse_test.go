package blob

import (
	"testing"
	"time"
)

// FuzzParseExpiry: x-ms-expiry-option and x-ms-expiry-time as a client
// sends them never panic, and what is accepted is one of the options with
// the time it needs: a relative time not negative, an absolute one after
// now, none for NeverExpire.
func FuzzParseExpiry(f *testing.F) {
	for _, s := range [][2]string{
		{"NeverExpire", ""}, {"RelativeToNow", "1000"}, {"RelativeToCreation", "0"},
		{"Absolute", "Fri, 01 Jan 2100 00:00:00 GMT"}, {"Absolute", "yesterday"}, {"RelativeToNow", "-1"},
		{"RelativeToNow", "99999999999999999999"}, {"", ""}, {"neverexpire", ""},
	} {
		f.Add(s[0], s[1])
	}
	now := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, opt, tv string) {
		req, err := ParseExpiry(opt, tv, now)
		if err != nil {
			return
		}
		switch opt {
		case ExpiryNever:
			if tv != "" {
				t.Fatalf("NeverExpire took a time %q", tv)
			}
		case ExpiryRelativeToNow, ExpiryRelativeToCreation:
			if req.After < 0 {
				t.Fatalf("%s %q: negative %v", opt, tv, req.After)
			}
		case ExpiryAbsolute:
			if !req.At.After(now) {
				t.Fatalf("Absolute %q: %v is not after now", tv, req.At)
			}
		default:
			t.Fatalf("option %q accepted", opt)
		}
	})
}

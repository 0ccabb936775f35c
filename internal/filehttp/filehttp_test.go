package filehttp

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/file"
)

// code is the Azure code of err, or "" when it is none.
func code(err error) string {
	if e, ok := azerr.As(err); ok {
		return e.Code.String()
	}
	return ""
}

func TestCopyModes(t *testing.T) {
	for _, c := range []struct {
		hdr  map[string]string
		want file.CopySMB
		code string
	}{
		{nil, file.CopySMB{Permission: true}, ""},
		{map[string]string{"X-Ms-File-Permission-Copy-Mode": "Source", "X-Ms-File-Attributes": "source", "X-Ms-File-Creation-Time": "SOURCE",
			"X-Ms-File-Last-Write-Time": "source", "X-Ms-File-Change-Time": "source"},
			file.CopySMB{Permission: true, Attributes: true, Creation: true, LastWrite: true, Change: true}, ""},
		{map[string]string{"X-Ms-File-Permission-Copy-Mode": "override", "X-Ms-File-Permission": "inherit"}, file.CopySMB{}, ""},
		{map[string]string{"X-Ms-File-Permission-Copy-Mode": "override", "X-Ms-File-Permission-Key": "k"}, file.CopySMB{}, ""},
		{map[string]string{"X-Ms-File-Permission-Copy-Mode": "override"}, file.CopySMB{}, "MissingRequiredHeader"},
		{map[string]string{"X-Ms-File-Permission-Copy-Mode": "copy"}, file.CopySMB{}, "InvalidHeaderValue"},
		{map[string]string{"X-Ms-File-Copy-Set-Archive": "TRUE", "X-Ms-File-Copy-Ignore-Readonly": "false"},
			file.CopySMB{Permission: true, SetArchive: true}, ""},
		{map[string]string{"X-Ms-File-Copy-Ignore-Readonly": "yes"}, file.CopySMB{}, "InvalidHeaderValue"},
	} {
		hd := http.Header{}
		for k, v := range c.hdr {
			hd.Set(k, v)
		}
		got, err := copyModes(hd)
		if code(err) != c.code || c.code == "" && (err != nil || got != c.want) {
			t.Errorf("%v: got %+v %v, want %+v %q", c.hdr, got, err, c.want, c.code)
		}
	}
}

func TestParseQuotaAndTier(t *testing.T) {
	if q, err := parseQuota(""); q != nil || err != nil {
		t.Errorf("no quota: %v %v", q, err)
	}
	if q, err := parseQuota("100"); err != nil || *q != 100 {
		t.Errorf("100: %v %v", q, err)
	}
	for _, v := range []string{"0", "-1", "x", "1.5"} {
		if _, err := parseQuota(v); code(err) != "InvalidHeaderValue" && code(err) != "OutOfRangeInput" {
			t.Errorf("quota %q: %v", v, err)
		}
	}
	for v, want := range map[string]string{"hot": "Hot", "COOL": "Cool", "TransactionOptimized": "TransactionOptimized", "premium": "Premium"} {
		if got, err := parseTier(v); err != nil || *got != want {
			t.Errorf("tier %q: %v %v", v, got, err)
		}
	}
	if got, err := parseTier(""); got != nil || err != nil {
		t.Errorf("no tier: %v %v", got, err)
	}
	if _, err := parseTier("archive"); code(err) != "InvalidHeaderValue" {
		t.Errorf("archive: %v", err)
	}
}

// List markers carry any name, one XML cannot carry included, intact.
func TestListMarkerRoundTrip(t *testing.T) {
	for _, name := range []string{"", "a", "dir/file", "\x00\x01 <&>", "é✓"} {
		got, err := decodeListMarker(encodeListMarker(name))
		if err != nil || got != name {
			t.Errorf("%q: %q %v", name, got, err)
		}
	}
	if _, err := decodeListMarker("!!"); code(err) != "InvalidQueryParameterValue" {
		t.Errorf("bad marker: %v", err)
	}
}

func TestOtherEndpoint(t *testing.T) {
	for _, c := range []struct {
		u, host string
		other   bool
	}{
		{"http://127.0.0.1:10003/a/s/f", "127.0.0.1:10003", false},
		{"http://127.0.0.1:10000/a/c/b", "127.0.0.1:10003", true},
		{"http://127.0.0.1/a/c/b", "127.0.0.1:10003", true},
		{"https://acct.file.core.windows.net/s/f", "acct.file.core.windows.net", false},
		{"https://acct.blob.core.windows.net/c/b", "acct.file.core.windows.net", true},
		{"https://ACCT.file.core.windows.net/s/f", "acct.file.core.windows.net", false},
	} {
		u, err := url.Parse(c.u)
		if err != nil {
			t.Fatal(err)
		}
		if got := otherEndpoint(u, c.host); got != c.other {
			t.Errorf("%s from %s: %v", c.u, c.host, got)
		}
	}
}

// A permission round-trips between SDDL and the binary format; a binary
// permission that does not decode is 400 FileInvalidPermission.
func TestPermissionFormats(t *testing.T) {
	const s = "O:SYG:SYD:(A;;FA;;;SY)(A;;FA;;;BA)"
	bin, err := binaryFromSDDL(s)
	if err != nil {
		t.Fatal(err)
	}
	// What is stored is the decoded form: SIDs and access masks spelled out.
	const stored = "O:S-1-5-18G:S-1-5-18D:(A;;0x1f01ff;;;S-1-5-18)(A;;0x1f01ff;;;S-1-5-32-544)"
	back, err := sddlFromBinary(bin)
	if err != nil || back != stored {
		t.Fatalf("round trip: %q %v", back, err)
	}
	if bin2, err := binaryFromSDDL(back); err != nil || bin2 != bin {
		t.Fatalf("the stored form encodes differently: %v", err)
	}
	for _, v := range []string{"not base64!", "AAAA"} {
		if _, err := sddlFromBinary(v); code(err) != "FileInvalidPermission" {
			t.Errorf("%q: %v", v, err)
		}
	}
}

func TestBadRouteAndHandleErrors(t *testing.T) {
	if code(badRoute(http.MethodPost, "")) != "UnsupportedHttpVerb" {
		t.Error("POST")
	}
	if err := badRoute(http.MethodGet, "nope"); code(err) != "InvalidQueryParameterValue" {
		t.Errorf("unknown comp: %v", err)
	}
	if code(handleError(file.ErrHandleClosed)) != "ResourceNotFound" || code(handleError(file.ErrAccessDenied)) != "AuthorizationPermissionMismatch" {
		t.Error("handle errors")
	}
	other := errors.New("x")
	if handleError(other) != other {
		t.Error("other errors pass through")
	}
}

// The File service refuses every conditional header but If-Match on Get
// File and Get File Properties.
func TestCheckConditions(t *testing.T) {
	for _, c := range []struct {
		name, value string
		ifMatchOK   bool
		code        string
	}{
		{"", "", false, ""},
		{"If-Match", `"0x1"`, true, ""},
		{"If-Match", `"0x1"`, false, "ConditionHeadersNotSupported"},
		{"If-None-Match", "*", true, "ConditionHeadersNotSupported"},
		{"If-Modified-Since", "Mon, 02 Jan 2006 15:04:05 GMT", true, "ConditionHeadersNotSupported"},
		{"If-Unmodified-Since", "Mon, 02 Jan 2006 15:04:05 GMT", true, "ConditionHeadersNotSupported"},
	} {
		r := httptest.NewRequest(http.MethodGet, "http://127.0.0.1/a/s/f", nil)
		if c.name != "" {
			r.Header.Set(c.name, c.value)
		}
		rq := &req{r: r}
		if got := code(rq.checkConditions(c.ifMatchOK)); got != c.code {
			t.Errorf("%s (If-Match allowed: %v): %q, want %q", c.name, c.ifMatchOK, got, c.code)
		}
	}
}

func TestIfMatchOfGetFile(t *testing.T) {
	n := &file.Node{ETag: 0x8D000000000ABCD}
	etag := file.ETagString(n.ETag)
	for v, want := range map[string]string{"": "", "*": "", etag: "", etag[1 : len(etag)-1]: "", `"0x1", ` + etag: "",
		`"0x1"`: "ConditionNotMet", ",": "InvalidHeaderValue"} {
		r := httptest.NewRequest(http.MethodGet, "http://127.0.0.1/a/s/f", nil)
		if v != "" {
			r.Header.Set("If-Match", v)
		}
		if got := code((&req{r: r}).ifMatch(n)); got != want {
			t.Errorf("If-Match %q: %q, want %q", v, got, want)
		}
	}
}

package sas

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/auth/sharedkey"
)

func mustParse(t *testing.T, q string) *Values {
	t.Helper()
	vals, err := url.ParseQuery(q)
	if err != nil {
		t.Fatal(err)
	}
	v, err := Parse(vals)
	if err != nil {
		t.Fatalf("Parse(%q): %v", q, err)
	}
	return v
}

func TestParseFields(t *testing.T) {
	v := mustParse(t, "sv=2025-11-05&ss=bf&srt=sco&sp=rwdlac&st=2026-01-01T00%3A00%3A00Z&se=2027-01-01&sip=10.0.0.1-10.0.0.9&spr=https&ses=sc&sig=a+b%2Fc%3D")
	if !v.IsAccount() || v.Services != "bf" || v.ResourceTypes != "sco" || v.Permissions != "rwdlac" || v.IP != "10.0.0.1-10.0.0.9" || v.Protocol != "https" || v.EncryptionScope != "sc" {
		t.Fatalf("%+v", v)
	}
	if v.Signature != "a+b/c=" {
		t.Fatalf("unencoded '+' not restored: %q", v.Signature)
	}
	if v.Start != "2026-01-01T00:00:00Z" || !v.StartTime.Equal(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("start %q %v", v.Start, v.StartTime)
	}
	if !v.ExpiryTime.Equal(time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("expiry %v", v.ExpiryTime)
	}
	v = mustParse(t, "sv=2019-02-02&tn=MyTable&spk=a&srk=b&epk=c&erk=d&sp=raud&se=2027-01-01T10:00Z&sig=x&rscc=no-cache&rsct=text%2Fplain&si=pol")
	if v.IsAccount() || v.TableName != "MyTable" || v.StartPK != "a" || v.StartRK != "b" || v.EndPK != "c" || v.EndRK != "d" || v.CacheControl != "no-cache" || v.ContentType != "text/plain" || v.Identifier != "pol" {
		t.Fatalf("%+v", v)
	}
}

func TestParseTimeForms(t *testing.T) {
	want := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	for s, w := range map[string]time.Time{
		"2026-03-04":                   time.Date(2026, 3, 4, 0, 0, 0, 0, time.UTC),
		"2026-03-04T05:06Z":            time.Date(2026, 3, 4, 5, 6, 0, 0, time.UTC),
		"2026-03-04T05:06:07Z":         want,
		"2026-03-04T05:06:07.5Z":       want.Add(500 * time.Millisecond),
		"2026-03-04T05:06:07.0000000Z": want,
	} {
		got, err := ParseTime(s)
		if err != nil || !got.Equal(w) {
			t.Errorf("ParseTime(%q) = %v %v", s, got, err)
		}
	}
	for _, s := range []string{"", "2026-3-4", "2026-03-04T05:06:07", "2026-03-04 05:06:07Z", "2026-03-04T05:06:07+01:00", "tomorrow"} {
		if _, err := ParseTime(s); err == nil {
			t.Errorf("ParseTime(%q) accepted", s)
		}
	}
}

func TestParseRefusals(t *testing.T) {
	for q, part := range map[string]string{
		"sv=2025-11-05&sp=r&se=2027-01-01":                              "sig is mandatory",
		"sp=r&se=2027-01-01&sig=x":                                      "sv is mandatory",
		"sv=2025&sig=x":                                                 "sv '2025'",
		"sv=2025-11-05&se=next-week&sig=x":                              "se 'next-week'",
		"sv=2025-11-05&st=never&sig=x":                                  "st 'never'",
		"sv=2025-11-05&st=2027-01-01&se=2026-01-01&sig=x":               "has to be after signed start time",
		"sv=2025-11-05&st=2027-01-01&se=2027-01-01&sig=x":               "has to be after signed start time",
		"sv=2025-11-05&sip=300.1.1.1&sig=x":                             "sip",
		"sv=2025-11-05&sip=10.0.0.9-10.0.0.1&sig=x":                     "sip",
		"sv=2025-11-05&sip=10.0.0.1-::1&sig=x":                          "sip",
		"sv=2025-11-05&spr=http&sig=x":                                  "spr 'http'",
		"sv=2025-11-05&ss=b&sig=x":                                      "ss and srt are mandatory",
		"sv=2025-11-05&ss=bx&srt=s&sig=x":                               "ss 'bx'",
		"sv=2025-11-05&ss=b&srt=sz&sig=x":                               "srt 'sz'",
		"sv=2025-11-05&ss=b&srt=s&sig=x&st=2026-01-01T00:00:00.12345Zx": "st",
		"sv=2019-02-02&tn=t&srk=5&epk=d&sig=x":                          "srk requires spk",
		"sv=2019-02-02&tn=t&spk=b&erk=5&sig=x":                          "erk requires epk",
	} {
		vals, _ := url.ParseQuery(q)
		_, err := Parse(vals)
		e, ok := err.(*Error)
		if !ok || !strings.Contains(e.Detail, part) {
			t.Errorf("Parse(%q) = %v, want detail containing %q", q, err, part)
		}
	}
}

func TestIPAllowed(t *testing.T) {
	for _, c := range []struct {
		sip, ip string
		ok      bool
	}{
		{"", "1.2.3.4", true},
		{"1.2.3.4", "1.2.3.4", true},
		{"1.2.3.4", "1.2.3.5", false},
		{"10.0.0.1-10.0.0.9", "10.0.0.1", true},
		{"10.0.0.1-10.0.0.9", "10.0.0.9", true},
		{"10.0.0.1-10.0.0.9", "10.0.0.10", false},
		{"10.0.0.1-10.0.0.9", "::ffff:10.0.0.5", true},
		{"10.0.0.1-10.0.0.9", "::1", false},
		{"::1", "::1", true},
		{"10.0.0.1", "not-an-ip", false},
		{"bad", "10.0.0.1", false},
	} {
		if got := IPAllowed(c.sip, c.ip); got != c.ok {
			t.Errorf("IPAllowed(%q, %q) = %v", c.sip, c.ip, got)
		}
	}
	for spr, ok := range map[string]bool{"": true, "https": false, "https,http": true, "http,https": true} {
		if HTTPAllowed(spr) != ok {
			t.Errorf("HTTPAllowed(%q) = %v", spr, !ok)
		}
	}
}

// The vectors are written out field by field from the documented layouts
// and from what the Azure SDK for Go signs for each sv.
func TestAccountStringToSign(t *testing.T) {
	old := mustParse(t, "sv=2019-02-02&ss=bqt&srt=sco&sp=rl&se=2030-01-01T00:00:00Z&spr=https,http&sig=x")
	want := "devstoreaccount1\n" + // account
		"rl\n" + // sp
		"bqt\n" + // ss
		"sco\n" + // srt
		"\n" + // st
		"2030-01-01T00:00:00Z\n" + // se
		"\n" + // sip
		"https,http\n" + // spr
		"2019-02-02\n" // sv, then the terminating newline
	if got := AccountStringToSign("devstoreaccount1", old); got != want {
		t.Errorf("sv 2019-02-02\n got %q\nwant %q", got, want)
	}
	newer := mustParse(t, "sv=2020-12-06&ss=f&srt=o&sp=r&st=2026-01-01&se=2030-01-01&sip=1.2.3.4&ses=scope1&sig=x")
	want = "acct\nr\nf\no\n2026-01-01\n2030-01-01\n1.2.3.4\n\n2020-12-06\nscope1\n"
	if got := AccountStringToSign("acct", newer); got != want {
		t.Errorf("sv 2020-12-06\n got %q\nwant %q", got, want)
	}
	noScope := mustParse(t, "sv=2026-12-06&ss=b&srt=c&sp=rwdlac&se=2030-01-01T00:00:00Z&sig=x")
	want = "acct\nrwdlac\nb\nc\n\n2030-01-01T00:00:00Z\n\n\n2026-12-06\n\n"
	if got := AccountStringToSign("acct", noScope); got != want {
		t.Errorf("sv 2026-12-06\n got %q\nwant %q", got, want)
	}
}

func TestServiceStringToSign(t *testing.T) {
	const q = "sp=rw&st=2026-01-01T00:00:00Z&se=2027-01-01T00:00:00Z&si=pol&sip=1.2.3.4&spr=https&ses=sc" +
		"&rscc=cc&rscd=cd&rsce=ce&rscl=cl&rsct=ct&spk=p1&srk=r1&epk=p2&erk=r2&sig=x"
	tests := []struct {
		name      string
		svc       Service
		sv, sr    string
		container string
		object    string
		ts        string
		want      string
	}{
		{"blob 2026-12-06 blob", Blob, "2026-12-06", "b", "c", `dir\a b.txt`, "",
			"rw\n2026-01-01T00:00:00Z\n2027-01-01T00:00:00Z\n/blob/acct/c/dir/a b.txt\npol\n1.2.3.4\nhttps\n2026-12-06\n" +
				"b\n" + // sr
				"\n" + // signed timestamp
				"sc\n" + // ses
				"cc\ncd\nce\ncl\nct"},
		{"blob 2020-12-06 snapshot", Blob, "2020-12-06", "bs", "c", "b", "2026-01-01T00:00:00.0000000Z",
			"rw\n2026-01-01T00:00:00Z\n2027-01-01T00:00:00Z\n/blob/acct/c/b\npol\n1.2.3.4\nhttps\n2020-12-06\nbs\n2026-01-01T00:00:00.0000000Z\nsc\ncc\ncd\nce\ncl\nct"},
		{"blob 2019-12-12 container (no ses)", Blob, "2019-12-12", "c", "c", "", "",
			"rw\n2026-01-01T00:00:00Z\n2027-01-01T00:00:00Z\n/blob/acct/c\npol\n1.2.3.4\nhttps\n2019-12-12\nc\n\ncc\ncd\nce\ncl\nct"},
		{"blob 2018-03-28 (no sr, no timestamp)", Blob, "2018-03-28", "b", "c", "b", "",
			"rw\n2026-01-01T00:00:00Z\n2027-01-01T00:00:00Z\n/blob/acct/c/b\npol\n1.2.3.4\nhttps\n2018-03-28\ncc\ncd\nce\ncl\nct"},
		{"blob 2015-02-21 (no sip/spr)", Blob, "2015-02-21", "b", "c", "b", "",
			"rw\n2026-01-01T00:00:00Z\n2027-01-01T00:00:00Z\n/blob/acct/c/b\npol\n2015-02-21\ncc\ncd\nce\ncl\nct"},
		{"blob 2013-08-15 (no service prefix)", Blob, "2013-08-15", "b", "c", "b", "",
			"rw\n2026-01-01T00:00:00Z\n2027-01-01T00:00:00Z\n/acct/c/b\npol\n2013-08-15\ncc\ncd\nce\ncl\nct"},
		{"blob 2012-02-12 (no overrides)", Blob, "2012-02-12", "b", "c", "b", "",
			"rw\n2026-01-01T00:00:00Z\n2027-01-01T00:00:00Z\n/acct/c/b\npol\n2012-02-12"},
		{"file 2026-06-06", File, "2026-06-06", "f", "share", `/dir\f.txt`, "",
			"rw\n2026-01-01T00:00:00Z\n2027-01-01T00:00:00Z\n/file/acct/share/dir/f.txt\npol\n1.2.3.4\nhttps\n2026-06-06\ncc\ncd\nce\ncl\nct"},
		{"file share", File, "2025-11-05", "s", "share", "", "",
			"rw\n2026-01-01T00:00:00Z\n2027-01-01T00:00:00Z\n/file/acct/share\npol\n1.2.3.4\nhttps\n2025-11-05\ncc\ncd\nce\ncl\nct"},
		{"queue 2020-02-10", Queue, "2020-02-10", "", "q1", "", "",
			"rw\n2026-01-01T00:00:00Z\n2027-01-01T00:00:00Z\n/queue/acct/q1\npol\n1.2.3.4\nhttps\n2020-02-10"},
		{"queue 2013-08-15", Queue, "2013-08-15", "", "q1", "", "",
			"rw\n2026-01-01T00:00:00Z\n2027-01-01T00:00:00Z\n/acct/q1\npol\n2013-08-15"},
		{"table 2019-02-02, name lowercased", Table, "2019-02-02", "", "MyTable", "", "",
			"rw\n2026-01-01T00:00:00Z\n2027-01-01T00:00:00Z\n/table/acct/mytable\npol\n1.2.3.4\nhttps\n2019-02-02\np1\nr1\np2\nr2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := mustParse(t, q+"&sv="+tt.sv+"&sr="+tt.sr)
			canon := CanonicalizedResource(tt.svc, tt.sv, "acct", tt.container, tt.object)
			if got := ServiceStringToSign(tt.svc, canon, v, tt.ts); got != tt.want {
				t.Errorf("\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestSignatureKnownAnswer(t *testing.T) {
	sig := sharedkey.ComputeSignature([]byte("key"), "The quick brown fox jumps over the lazy dog")
	if sig != "97yD9DBThCSxMpjmqm+xQ+9NWaFJRhdZl0edvC0aPNg=" {
		t.Fatal(sig)
	}
	if !sharedkey.SignatureMatches([]byte("key"), "The quick brown fox jumps over the lazy dog", sig) || sharedkey.SignatureMatches([]byte("key2"), "The quick brown fox jumps over the lazy dog", sig) {
		t.Fatal("SignatureMatches wrong")
	}
}

func FuzzParseSAS(f *testing.F) {
	for _, s := range []string{
		"sv=2025-11-05&ss=b&srt=sco&sp=rwdlac&se=2027-01-01&sig=abc",
		"sv=2019-02-02&tn=t&spk=a&epk=b&sp=r&se=2027-01-01T00:00Z&sig=x&sip=1.1.1.1-2.2.2.2&spr=https,http",
		"sig=%zz&sv=%",
		"sv=2025-11-05&sig=x&st=2026-01-01T00:00:00.1234567Z&se=2026-01-01T00:00:01Z&sip=::1-::2",
		"",
	} {
		f.Add(s, "10.0.0.1")
	}
	f.Fuzz(func(t *testing.T, q, ip string) {
		vals, _ := url.ParseQuery(q)
		v, err := Parse(vals)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error of type %T", err)
			}
			return
		}
		if v.Signature == "" || v.Version == "" {
			t.Fatal("accepted without sig or sv")
		}
		_ = AccountStringToSign("acct", v)
		for _, s := range []Service{Blob, File, Queue, Table} {
			_ = ServiceStringToSign(s, CanonicalizedResource(s, v.Version, "acct", v.TableName, v.ContentType), v, v.Start)
		}
		_ = IPAllowed(v.IP, ip)
		_ = sharedkey.SignatureMatches([]byte("k"), q, v.Signature)
	})
}

// SDKs sign one layout whatever sv they are given; the alternates accept
// those tokens. With an encryption scope there is no ambiguity to allow.
func TestStringsToSignAlternates(t *testing.T) {
	v := mustParse(t, "sv=2019-02-02&ss=b&srt=o&sp=r&se=2030-01-01&sig=x")
	got := AccountStringsToSign("a", v)
	if len(got) != 2 || got[0] != "a\nr\nb\no\n\n2030-01-01\n\n\n2019-02-02\n" || got[1] != "a\nr\nb\no\n\n2030-01-01\n\n\n2019-02-02\n\n" {
		t.Errorf("account: %q", got)
	}
	v = mustParse(t, "sv=2026-12-06&ss=q&srt=o&sp=r&se=2030-01-01&sig=x")
	got = AccountStringsToSign("a", v)
	if len(got) != 2 || got[1] != "a\nr\nq\no\n\n2030-01-01\n\n\n2026-12-06\n" {
		t.Errorf("account new: %q", got)
	}
	v = mustParse(t, "sv=2026-12-06&ss=q&srt=o&sp=r&se=2030-01-01&ses=s&sig=x")
	if got = AccountStringsToSign("a", v); len(got) != 1 {
		t.Errorf("account with ses: %q", got)
	}
	v = mustParse(t, "sv=2019-02-02&sr=b&sp=r&se=2030-01-01&sig=x")
	got = ServiceStringsToSign(Blob, "/blob/a/c/b", v, "")
	if len(got) != 2 || got[0] != "r\n\n2030-01-01\n/blob/a/c/b\n\n\n\n2019-02-02\nb\n\n\n\n\n\n" || got[1] != "r\n\n2030-01-01\n/blob/a/c/b\n\n\n\n2019-02-02\nb\n\n\n\n\n\n\n" {
		t.Errorf("blob: %q", got)
	}
	got = ServiceStringsToSign(Blob, "/blob/a/c/b", mustParse(t, "sv=2018-03-28&sr=b&sp=r&sig=x"), "")
	if len(got) != 2 || got[1] != "r\n\n\n/blob/a/c/b\n\n\n\n2018-03-28\nb\n\n\n\n\n\n\n" {
		t.Errorf("blob 2018-03-28: %q", got)
	}
	for _, q := range []string{"sv=2015-02-21&sr=b&sp=r&sig=x", "sv=2026-12-06&sr=b&sp=r&sig=x"} {
		if got := ServiceStringsToSign(Blob, "/blob/a/c/b", mustParse(t, q), ""); len(got) != 1 {
			t.Errorf("%s: %q", q, got)
		}
	}
	if got := ServiceStringsToSign(Queue, "/queue/a/q", mustParse(t, "sv=2019-02-02&sp=r&sig=x"), ""); len(got) != 1 {
		t.Errorf("queue: %q", got)
	}
}

func TestSignRoundTrip(t *testing.T) {
	key := []byte("key")
	v := &Values{Version: "2026-12-06", Services: "bq", ResourceTypes: "sco", Permissions: "rl", Expiry: "2030-01-01T00:00:00Z", IP: "1.2.3.4", Protocol: "https,http"}
	q := SignAccount("acct", key, v)
	p := mustParse(t, q)
	if !sharedkey.SignatureMatches(key, AccountStringToSign("acct", p), p.Signature) {
		t.Fatalf("account SAS %q does not verify", q)
	}
	v = &Values{Version: "2026-12-06", Resource: "b", Permissions: "r", Expiry: "2030-01-01", ContentType: "text/plain", EncryptionScope: "s"}
	q = SignService(Blob, "acct", key, "c", "dir/b", "", v)
	p = mustParse(t, q)
	if !sharedkey.SignatureMatches(key, ServiceStringToSign(Blob, "/blob/acct/c/dir/b", p, ""), p.Signature) {
		t.Fatalf("service SAS %q does not verify", q)
	}
	if p.ContentType != "text/plain" || p.EncryptionScope != "s" || p.Resource != "b" {
		t.Fatalf("fields lost: %+v", p)
	}
	v = &Values{Version: "2019-02-02", Permissions: "r", Expiry: "2030-01-01", TableName: "t", StartPK: "a", EndPK: "b", StartRK: "1", EndRK: "2"}
	p = mustParse(t, SignService(Table, "acct", key, "T", "", "", v))
	if p.StartPK != "a" || p.StartRK != "1" || p.EndPK != "b" || p.EndRK != "2" || !sharedkey.SignatureMatches(key, ServiceStringToSign(Table, "/table/acct/t", p, ""), p.Signature) {
		t.Fatalf("table SAS: %+v", p)
	}
}

package robustness_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/lazuli-storage/lazuli/conformance/harness"
)

// TestMalformedCredentials: broken SAS query values, Authorization headers
// and dates are refused with a well-formed Azure error on every service,
// and a refused write writes nothing.
func TestMalformedCredentials(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		randomFixture(t, tg)
		get := func(s svc, path string) call { return call{Svc: s, Method: http.MethodGet, Path: path} }
		reads := []call{get(blobSvc, "rc1/rb1"), get(blobSvc, "rc1?restype=container&comp=list"),
			get(queueSvc, "rq1/messages?peekonly=true&numofmessages=32"), get(tableSvc, "rt1()")}
		before := capture(t, tg, reads)

		sas := "sv=2021-08-06&ss=bqt&srt=sco&sp=rwdlacup&se=2099-01-01T00:00:00Z&st=2000-01-01T00:00:00Z&spr=https,http&sig=AAAA"
		sasVariants := []string{
			sas,
			strings.Replace(sas, "se=2099-01-01T00:00:00Z", "se=garbage", 1),
			strings.Replace(sas, "sig=AAAA", "sig=%21%21%21", 1),
			strings.Replace(sas, "sv=2021-08-06", "sv=bogus", 1),
			strings.Replace(sas, "sp=rwdlacup", "sp=zzz", 1),
			strings.Replace(sas, "spr=https,http", "spr=ftp", 1),
			sas + "&sip=999.1.1.1",
			sas + "&sip=1.1.1.1-garbage",
			"sv=2021-08-06&sig=AAAA",
			"sv=2021-08-06&sr=zz&sp=r&se=2099-01-01&sig=AAAA",
			"sv=2021-08-06&si=nosuchpolicy&sr=c&sig=AAAA",
			"sv=2021-08-06&skoid=x&sktid=y&skt=garbage&ske=garbage&sks=b&skv=2021-08-06&sr=b&sp=rw&se=2099-01-01&sig=AAAA",
		}
		var cases []call
		for _, q := range sasVariants {
			cases = append(cases,
				call{Svc: blobSvc, Method: http.MethodGet, Path: "rc1/rb1?" + q, Unsigned: true},
				call{Svc: blobSvc, Method: http.MethodPut, Path: "rc1/rb1?" + q, Header: map[string]string{"x-ms-blob-type": "BlockBlob"}, Body: []byte("sas write"), Unsigned: true},
				call{Svc: queueSvc, Method: http.MethodGet, Path: "rq1/messages?" + q, Unsigned: true},
				call{Svc: queueSvc, Method: http.MethodPost, Path: "rq1/messages?" + q, Body: msgBody("sas write"), Unsigned: true},
				call{Svc: tableSvc, Method: http.MethodGet, Path: "rt1()?" + q, Unsigned: true},
				call{Svc: tableSvc, Method: http.MethodPost, Path: "rt1?" + q, Body: []byte(`{"PartitionKey":"p","RowKey":"sas"}`), Unsigned: true},
			)
		}
		const when = "Sun, 01 Jan 2000 00:00:00 GMT"
		for _, a := range []string{
			"SharedKey devstoreaccount1", "SharedKey :AAAA", "SharedKey devstoreaccount1:%%%", "SharedKeyLite devstoreaccount1:AAAA",
			"SharedKey otheraccount:AAAA", "SharedKey " + strings.Repeat("a", 10000) + ":AAAA", "Bearer x", "Basic eDp5",
			"SharedKey devstoreaccount1:AAAA extra", "SharedKey devstoreaccount1:" + strings.Repeat("A", 100000),
		} {
			for _, s := range []svc{blobSvc, queueSvc, tableSvc} {
				cases = append(cases, call{Svc: s, Method: http.MethodDelete, Path: map[svc]string{blobSvc: "rc1/rb1", queueSvc: "rq1/messages", tableSvc: "rt1(PartitionKey='p',RowKey='r')"}[s],
					Header: map[string]string{"Authorization": a, "x-ms-date": when, "If-Match": "*"}, Unsigned: true})
			}
		}
		for _, d := range []string{"garbage", "Sun, 22 Nov 2020 01:00:00 GMT", "Sun, 22 Nov 2099 01:00:00 GMT", "Sun, 99 Nov 2026 99:00:00 GMT"} {
			cases = append(cases,
				call{Svc: blobSvc, Method: http.MethodDelete, Path: "rc1/rb1", Header: map[string]string{"x-ms-date": d}},
				call{Svc: queueSvc, Method: http.MethodDelete, Path: "rq1/messages", Header: map[string]string{"x-ms-date": d}},
				call{Svc: tableSvc, Method: http.MethodDelete, Path: "rt1(PartitionKey='p',RowKey='r')", Header: map[string]string{"x-ms-date": d, "If-Match": "*"}},
			)
		}
		for _, c := range cases {
			r := send(t, tg, c)
			if msg := errorShape(c.Svc, c.Method, r); msg != "" {
				t.Errorf("%s\n%s: %s", describe(tg, c), msg, r)
			} else if r.Status != 400 && r.Status != 401 && r.Status != 403 && r.Status != 404 {
				t.Errorf("%s\nnot an authentication refusal: %s", describe(tg, c), r)
			}
		}
		same(t, "refused credentials", before, capture(t, tg, reads))
	})
}

// TestPathTricks: dot segments, doubled and encoded slashes never reach
// another resource by accident, crash or hang, and answer well-formed.
func TestPathTricks(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		randomFixture(t, tg)
		for _, p := range []string{"../devstoreaccount1/rc1/rb1", "rc1//rb1", "rc1/./rb1", "rc1%2Frb1", "/rc1/rb1", "rc1/rb1/",
			"%2E%2E/rc1", "rc1/%2E%2E/rc2/rb1", "rc1/rb1%00", "rc1/rb1%2F%2E%2E%2F%2E%2E", "rc1/" + strings.Repeat("a/", 300) + "b"} {
			for _, c := range []call{
				{Svc: blobSvc, Method: http.MethodGet, Path: p},
				{Svc: blobSvc, Method: http.MethodDelete, Path: p},
				{Svc: queueSvc, Method: http.MethodGet, Path: strings.ReplaceAll(strings.ReplaceAll(p, "rc1", "rq1"), "rb1", "messages")},
				{Svc: queueSvc, Method: http.MethodDelete, Path: strings.ReplaceAll(strings.ReplaceAll(p, "rc1", "rq1"), "rb1", "messages")},
				{Svc: tableSvc, Method: http.MethodGet, Path: strings.ReplaceAll(strings.ReplaceAll(p, "rc1", "rt1"), "rb1", "")},
			} {
				if msg := checkRandom(tg, c); msg != "" {
					t.Errorf("%s\n%s", describe(tg, c), msg)
				}
			}
		}
		// The fixture's blob is where it was; the dot segments reached
		// nothing else.
		if r := send(t, tg, call{Svc: blobSvc, Method: http.MethodGet, Path: "rc1/rb1"}); r.Status != 200 || string(r.Body) != "blob one" {
			t.Errorf("rc1/rb1 after the path tricks: %s", r)
		}
	})
}

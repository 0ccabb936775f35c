package queuehttp

import (
	"context"
	"github.com/lazuli-storage/lazuli/internal/queue"
	"github.com/lazuli-storage/lazuli/storage"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/auth"
	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/engine/memstore"
	"github.com/lazuli-storage/lazuli/internal/httpx"
)

type wire struct {
	t *testing.T
	h http.Handler
}

func newWire(t *testing.T) *wire {
	e := memstore.New()
	t.Cleanup(func() { e.Close() })
	d := httpx.Deps{Now: time.Now, BaseURL: func(a string) string { return "http://127.0.0.1:10001/" + a }}
	return &wire{t: t, h: httpx.Wrap(auth.Queue, New(d, runningQueues(t, e)), httpx.Options{Silent: true})}
}

// runningQueues returns the Queue service over e with its purges running
// until the test ends, as the server runs them.
func runningQueues(tb testing.TB, e storage.Engine) *queue.Service {
	svc := queue.New(e, time.Now)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { svc.Run(ctx); close(done) }()
	tb.Cleanup(func() { cancel(); <-done })
	return svc
}

type resp struct {
	status int
	header http.Header
	body   string
}

func (w *wire) do(method, path, body string, hdr ...string) resp {
	w.t.Helper()
	req := httptest.NewRequest(method, "http://127.0.0.1:10001/devstoreaccount1/"+path, strings.NewReader(body))
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	w.h.ServeHTTP(rec, req)
	b, _ := io.ReadAll(rec.Result().Body)
	return resp{rec.Code, rec.Result().Header, string(b)}
}

func (r resp) want(t *testing.T, status int, code string) {
	t.Helper()
	if r.status != status || r.header.Get("x-ms-error-code") != code {
		t.Fatalf("status %d code %q, want %d %q; body %s", r.status, r.header.Get("x-ms-error-code"), status, code, r.body)
	}
}

func msgBody(text string) string {
	return "<QueueMessage><MessageText>" + text + "</MessageText></QueueMessage>"
}

var receiptRE = regexp.MustCompile(`<PopReceipt>([^<]*)</PopReceipt>`)
var idRE = regexp.MustCompile(`<MessageId>([^<]*)</MessageId>`)

func TestCreateQueueStatuses(t *testing.T) {
	w := newWire(t)
	w.do("PUT", "qq1", "", "x-ms-meta-Color", "blue").want(t, 201, "")
	w.do("PUT", "qq1", "", "x-ms-meta-color", "blue").want(t, 204, "")
	w.do("PUT", "qq1", "", "x-ms-meta-color", "red").want(t, 409, "QueueAlreadyExists")
	w.do("PUT", "ab", "").want(t, 400, "OutOfRangeInput")
	w.do("PUT", strings.Repeat("a", 64), "").want(t, 400, "OutOfRangeInput")
	for _, bad := range []string{"Upper", "a--b", "-ab", "ab-", "a_b"} {
		w.do("PUT", bad, "").want(t, 400, "InvalidResourceName")
	}
	w.do("PUT", "qq2", "", "x-ms-meta-1bad", "x").want(t, 400, "InvalidMetadata")
	r := w.do("GET", "qq1?comp=metadata", "")
	r.want(t, 200, "")
	if r.header.Get("x-ms-approximate-messages-count") != "0" || r.header.Get("x-ms-meta-color") != "blue" {
		t.Fatalf("headers %v", r.header)
	}
	r = w.do("HEAD", "qq1?comp=metadata", "")
	if r.status != 200 || r.body != "" {
		t.Fatalf("HEAD %d %q", r.status, r.body)
	}
	w.do("GET", "nosuch?comp=metadata", "").want(t, 404, "QueueNotFound")
	w.do("HEAD", "nosuch?comp=metadata", "").want(t, 404, "QueueNotFound")
	w.do("DELETE", "qq1", "").want(t, 204, "")
	w.do("DELETE", "qq1", "").want(t, 404, "QueueNotFound")
}

func TestMessageXMLShapes(t *testing.T) {
	w := newWire(t)
	w.do("PUT", "que", "").want(t, 201, "")
	r := w.do("POST", "que/messages?messagettl=-1", msgBody("a &amp; b"))
	r.want(t, 201, "")
	put := regexp.MustCompile(`^<\?xml version="1.0" encoding="utf-8"\?><QueueMessagesList><QueueMessage><MessageId>[0-9a-f-]{36}</MessageId><InsertionTime>[A-Z][a-z]{2}, \d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d GMT</InsertionTime><ExpirationTime>Fri, 31 Dec 9999 23:59:59 GMT</ExpirationTime><PopReceipt>[A-Za-z0-9+/]{24}</PopReceipt><TimeNextVisible>[^<]+ GMT</TimeNextVisible></QueueMessage></QueueMessagesList>$`)
	if !put.MatchString(r.body) {
		t.Fatalf("put body %s", r.body)
	}
	if r.header.Get("Content-Type") != "application/xml" {
		t.Fatalf("content type %q", r.header.Get("Content-Type"))
	}
	r = w.do("GET", "que/messages?peekonly=true", "")
	peek := regexp.MustCompile(`^<\?xml version="1.0" encoding="utf-8"\?><QueueMessagesList><QueueMessage><MessageId>[^<]+</MessageId><InsertionTime>[^<]+</InsertionTime><ExpirationTime>[^<]+</ExpirationTime><DequeueCount>0</DequeueCount><MessageText>a &amp; b</MessageText></QueueMessage></QueueMessagesList>$`)
	if r.status != 200 || !peek.MatchString(r.body) {
		t.Fatalf("peek %d %s", r.status, r.body)
	}
	r = w.do("GET", "que/messages?numofmessages=32&visibilitytimeout=5", "")
	get := regexp.MustCompile(`^<\?xml version="1.0" encoding="utf-8"\?><QueueMessagesList><QueueMessage><MessageId>[^<]+</MessageId><InsertionTime>[^<]+</InsertionTime><ExpirationTime>[^<]+</ExpirationTime><PopReceipt>[^<]+</PopReceipt><TimeNextVisible>[^<]+</TimeNextVisible><DequeueCount>1</DequeueCount><MessageText>a &amp; b</MessageText></QueueMessage></QueueMessagesList>$`)
	if r.status != 200 || !get.MatchString(r.body) {
		t.Fatalf("get %d %s", r.status, r.body)
	}
	r = w.do("GET", "que/messages", "")
	if r.status != 200 || r.body != `<?xml version="1.0" encoding="utf-8"?><QueueMessagesList />` {
		t.Fatalf("empty get %d %s", r.status, r.body)
	}
}

func TestPopReceiptWire(t *testing.T) {
	w := newWire(t)
	w.do("PUT", "que", "").want(t, 201, "")
	w.do("POST", "que/messages", msgBody("x")).want(t, 201, "")
	r := w.do("GET", "que/messages?visibilitytimeout=1", "")
	id, rc := idRE.FindStringSubmatch(r.body)[1], receiptRE.FindStringSubmatch(r.body)[1]
	esc := strings.NewReplacer("+", "%2B", "/", "%2F", "=", "%3D").Replace
	w.do("DELETE", "que/messages/"+id, "").want(t, 400, "MissingRequiredQueryParameter")
	w.do("DELETE", "que/messages/"+id+"?popreceipt=garbage!", "").want(t, 400, "InvalidQueryParameterValue")
	w.do("PUT", "que/messages/"+id+"?popreceipt="+esc(rc), "").want(t, 400, "MissingRequiredQueryParameter")
	w.do("PUT", "que/messages/"+id+"?popreceipt="+esc(rc)+"&visibilitytimeout=604801", "").want(t, 400, "OutOfRangeQueryParameterValue")
	r = w.do("PUT", "que/messages/"+id+"?popreceipt="+esc(rc)+"&visibilitytimeout=0", msgBody("new"))
	r.want(t, 204, "")
	nrc := r.header.Get("x-ms-popreceipt")
	if nrc == "" || nrc == rc || r.header.Get("x-ms-time-next-visible") == "" {
		t.Fatalf("update headers %v", r.header)
	}
	// The old receipt is stale now.
	w.do("DELETE", "que/messages/"+id+"?popreceipt="+esc(rc), "").want(t, 404, "MessageNotFound")
	w.do("DELETE", "que/messages/not-a-guid?popreceipt="+esc(nrc), "").want(t, 404, "MessageNotFound")
	w.do("DELETE", "nosuch/messages/"+id+"?popreceipt="+esc(nrc), "").want(t, 404, "QueueNotFound")
	w.do("DELETE", "que/messages/"+id+"?popreceipt="+esc(nrc), "").want(t, 204, "")
}

func TestParameterRanges(t *testing.T) {
	w := newWire(t)
	w.do("PUT", "que", "").want(t, 201, "")
	r := w.do("GET", "que/messages?numofmessages=33", "")
	r.want(t, 400, "OutOfRangeQueryParameterValue")
	for _, part := range []string{"<QueryParameterName>numofmessages</QueryParameterName>", "<QueryParameterValue>33</QueryParameterValue>", "<MinimumAllowed>1</MinimumAllowed>", "<MaximumAllowed>32</MaximumAllowed>"} {
		if !strings.Contains(r.body, part) {
			t.Fatalf("body lacks %s: %s", part, r.body)
		}
	}
	w.do("GET", "que/messages?numofmessages=0", "").want(t, 400, "OutOfRangeQueryParameterValue")
	w.do("GET", "que/messages?numofmessages=abc", "").want(t, 400, "InvalidQueryParameterValue")
	w.do("GET", "que/messages?visibilitytimeout=0", "").want(t, 400, "OutOfRangeQueryParameterValue")
	w.do("GET", "que/messages?visibilitytimeout=604801", "").want(t, 400, "OutOfRangeQueryParameterValue")
	w.do("GET", "que/messages?peekonly=true&numofmessages=40", "").want(t, 400, "OutOfRangeQueryParameterValue")
	w.do("GET", "que/messages?peekonly=maybe", "").want(t, 400, "InvalidQueryParameterValue")
	w.do("POST", "que/messages?visibilitytimeout=-1", msgBody("x")).want(t, 400, "OutOfRangeQueryParameterValue")
	w.do("POST", "que/messages?visibilitytimeout=604801", msgBody("x")).want(t, 400, "OutOfRangeQueryParameterValue")
	w.do("POST", "que/messages?messagettl=0", msgBody("x")).want(t, 400, "InvalidQueryParameterValue")
	w.do("POST", "que/messages?messagettl=-2", msgBody("x")).want(t, 400, "InvalidQueryParameterValue")
	w.do("POST", "que/messages?messagettl=10&visibilitytimeout=10", msgBody("x")).want(t, 400, "InvalidQueryParameterValue")
	w.do("POST", "que/messages?messagettl=-1&visibilitytimeout=604800", msgBody("x")).want(t, 201, "")
	w.do("POST", "que/messages?visibilitytimeout=604800", msgBody("x")).want(t, 201, "")
	w.do("POST", "que/messages?messagettl=999999999999", msgBody("x")).want(t, 201, "")
	w.do("POST", "que/messages?messagettl=-1", msgBody("x"), "x-ms-version", "2017-04-17").want(t, 400, "OutOfRangeQueryParameterValue")
	w.do("GET", "?comp=list&maxresults=0", "").want(t, 400, "OutOfRangeQueryParameterValue")
	if r := w.do("POST", "que/messages", msgBody("old"), "x-ms-version", "2015-12-11"); r.status != 201 || r.body != "" {
		t.Fatalf("pre-2016-05-31 put: %d %q", r.status, r.body)
	}
}

// TestUpdateBeyondExpiry: Update Message cannot make a message visible
// later than it expires (400 InvalidQueryParameterValue); Get Messages
// may.
func TestUpdateBeyondExpiry(t *testing.T) {
	w := newWire(t)
	w.do("PUT", "que", "").want(t, 201, "")
	w.do("POST", "que/messages?messagettl=100", msgBody("x")).want(t, 201, "")
	r := w.do("GET", "que/messages?visibilitytimeout=200", "")
	r.want(t, 200, "")
	id, rc := idRE.FindStringSubmatch(r.body)[1], receiptRE.FindStringSubmatch(r.body)[1]
	esc := strings.NewReplacer("+", "%2B", "/", "%2F", "=", "%3D").Replace
	w.do("PUT", "que/messages/"+id+"?popreceipt="+esc(rc)+"&visibilitytimeout=200", "").want(t, 400, "InvalidQueryParameterValue")
	w.do("PUT", "que/messages/"+id+"?popreceipt="+esc(rc)+"&visibilitytimeout=50", "").want(t, 204, "")
}

func TestBadBodies(t *testing.T) {
	w := newWire(t)
	w.do("PUT", "que", "").want(t, 201, "")
	for _, b := range []string{"", "not xml", "<QueueMessage>", "<Other><MessageText>x</MessageText></Other>",
		"<QueueMessage></QueueMessage>", "<QueueMessage><MessageText>a</MessageText><MessageText>b</MessageText></QueueMessage>",
		"<QueueMessage><MessageText>\x01</MessageText></QueueMessage>"} {
		w.do("POST", "que/messages", b).want(t, 400, "InvalidXmlDocument")
	}
	w.do("POST", "que/messages", msgBody("<b>bold</b>")).want(t, 400, "InvalidXmlNodeValue")
	w.do("PUT", "que?comp=acl", "<SignedIdentifiers><SignedIdentifier>").want(t, 400, "InvalidXmlDocument")
	w.do("PUT", "?restype=service&comp=properties", "<StorageServiceProperties><Logging>").want(t, 400, "InvalidXmlDocument")
}

// TestOversizedMessageIsRequestBodyTooLarge pins the answer to a message
// text over 64 KiB as sent: 413 RequestBodyTooLarge with MaxLimit 65536,
// which is what the reference emulator and the service send (the
// MessageTooLarge code of the error list is not used).
func TestOversizedMessageIsRequestBodyTooLarge(t *testing.T) {
	w := newWire(t)
	w.do("PUT", "que", "").want(t, 201, "")
	w.do("POST", "que/messages", msgBody(strings.Repeat("a", 64*1024))).want(t, 201, "")
	r := w.do("POST", "que/messages", msgBody(strings.Repeat("a", 64*1024+1)))
	r.want(t, 413, "RequestBodyTooLarge")
	if !strings.Contains(r.body, "<MaxLimit>65536</MaxLimit>") {
		t.Fatalf("body %s", r.body)
	}
	// Counted as sent: 13,108 "&amp;" entities are 65,540 bytes on the wire.
	w.do("POST", "que/messages", msgBody(strings.Repeat("&amp;", 13108))).want(t, 413, "RequestBodyTooLarge")
	w.do("POST", "que/messages", msgBody(strings.Repeat("a", 2<<20))).want(t, 413, "RequestBodyTooLarge")
	// Before 2011-08-18 the limit was 8 KiB.
	w.do("POST", "que/messages", msgBody(strings.Repeat("a", 8*1024)), "x-ms-version", "2011-08-17").want(t, 201, "")
	r = w.do("POST", "que/messages", msgBody(strings.Repeat("a", 8*1024+1)), "x-ms-version", "2011-08-17")
	r.want(t, 413, "RequestBodyTooLarge")
	if !strings.Contains(r.body, "<MaxLimit>8192</MaxLimit>") {
		t.Fatalf("body %s", r.body)
	}
}

func TestACLRoundTrip(t *testing.T) {
	w := newWire(t)
	w.do("PUT", "que", "").want(t, 201, "")
	r := w.do("GET", "que?comp=acl", "")
	if r.status != 200 || r.body != `<?xml version="1.0" encoding="utf-8"?><SignedIdentifiers />` {
		t.Fatalf("empty acl %d %s", r.status, r.body)
	}
	in := `<?xml version="1.0" encoding="utf-8"?><SignedIdentifiers><SignedIdentifier><Id>p1</Id><AccessPolicy><Start>2026-01-01T00:00:00Z</Start><Expiry>2026-02-01T00:00:00.5Z</Expiry><Permission>raup</Permission></AccessPolicy></SignedIdentifier></SignedIdentifiers>`
	w.do("PUT", "que?comp=acl", in).want(t, 204, "")
	r = w.do("GET", "que?comp=acl", "")
	want := `<?xml version="1.0" encoding="utf-8"?><SignedIdentifiers><SignedIdentifier><Id>p1</Id><AccessPolicy><Start>2026-01-01T00:00:00.0000000Z</Start><Expiry>2026-02-01T00:00:00.5000000Z</Expiry><Permission>raup</Permission></AccessPolicy></SignedIdentifier></SignedIdentifiers>`
	if r.body != want {
		t.Fatalf("acl\n%s\nwant\n%s", r.body, want)
	}
	six := "<SignedIdentifiers>" + strings.Repeat("<SignedIdentifier><Id>x</Id></SignedIdentifier>", 6) + "</SignedIdentifiers>"
	w.do("PUT", "que?comp=acl", six).want(t, 400, "InvalidXmlDocument")
	bad := `<SignedIdentifiers><SignedIdentifier><Id>p</Id><AccessPolicy><Permission>rwx</Permission></AccessPolicy></SignedIdentifier></SignedIdentifiers>`
	w.do("PUT", "que?comp=acl", bad).want(t, 400, "InvalidXmlDocument")
	w.do("PUT", "que?comp=acl", "").want(t, 204, "")
	if r := w.do("GET", "que?comp=acl", ""); !strings.Contains(r.body, "<SignedIdentifiers />") {
		t.Fatalf("cleared acl %s", r.body)
	}
	w.do("GET", "nosuch?comp=acl", "").want(t, 404, "QueueNotFound")
}

func TestServicePropertiesAndCORS(t *testing.T) {
	w := newWire(t)
	r := w.do("GET", "?restype=service&comp=properties", "")
	want := `<?xml version="1.0" encoding="utf-8"?><StorageServiceProperties><Logging><Version>1.0</Version><Delete>false</Delete><Read>false</Read><Write>false</Write><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></Logging><HourMetrics><Version>1.0</Version><Enabled>false</Enabled><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></HourMetrics><MinuteMetrics><Version>1.0</Version><Enabled>false</Enabled><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></MinuteMetrics><Cors /></StorageServiceProperties>`
	if r.status != 200 || r.body != want {
		t.Fatalf("default props %d\n%s", r.status, r.body)
	}
	w.do("OPTIONS", "que/messages", "", "Origin", "http://example.com", "Access-Control-Request-Method", "GET").want(t, 403, "CorsPreflightFailure")
	set := `<StorageServiceProperties><Cors><CorsRule><AllowedOrigins>http://example.com</AllowedOrigins><AllowedMethods>GET,PUT</AllowedMethods><MaxAgeInSeconds>60</MaxAgeInSeconds><ExposedHeaders>x-ms-meta-*</ExposedHeaders><AllowedHeaders>x-ms-meta-*,content-type</AllowedHeaders></CorsRule></Cors></StorageServiceProperties>`
	w.do("PUT", "?restype=service&comp=properties", set).want(t, 202, "")
	r = w.do("GET", "?restype=service&comp=properties", "")
	if !strings.Contains(r.body, "<Cors><CorsRule><AllowedOrigins>http://example.com</AllowedOrigins><AllowedMethods>GET,PUT</AllowedMethods><MaxAgeInSeconds>60</MaxAgeInSeconds><ExposedHeaders>x-ms-meta-*</ExposedHeaders><AllowedHeaders>x-ms-meta-*,content-type</AllowedHeaders></CorsRule></Cors>") ||
		!strings.Contains(r.body, "<Logging><Version>1.0</Version>") {
		t.Fatalf("props after set %s", r.body)
	}
	r = w.do("OPTIONS", "que/messages", "", "Origin", "http://example.com", "Access-Control-Request-Method", "PUT", "Access-Control-Request-Headers", "x-ms-meta-abc")
	r.want(t, 200, "")
	if r.header.Get("Access-Control-Allow-Origin") != "http://example.com" || r.header.Get("Access-Control-Max-Age") != "60" ||
		r.header.Get("Access-Control-Allow-Methods") != "PUT" || r.header.Get("Access-Control-Allow-Headers") != "x-ms-meta-abc" {
		t.Fatalf("preflight headers %v", r.header)
	}
	w.do("OPTIONS", "que/messages", "", "Origin", "http://evil.com", "Access-Control-Request-Method", "PUT").want(t, 403, "CorsPreflightFailure")
	w.do("OPTIONS", "que/messages", "", "Origin", "http://example.com", "Access-Control-Request-Method", "DELETE").want(t, 403, "CorsPreflightFailure")
	w.do("OPTIONS", "que/messages", "", "Origin", "http://example.com", "Access-Control-Request-Method", "GET", "Access-Control-Request-Headers", "x-other").want(t, 403, "CorsPreflightFailure")
	w.do("OPTIONS", "que/messages", "", "Access-Control-Request-Method", "GET").want(t, 400, "InvalidHeaderValue")
	r = w.do("GET", "?comp=list", "", "Origin", "http://example.com")
	if r.header.Get("Access-Control-Allow-Origin") != "http://example.com" || r.header.Get("Access-Control-Expose-Headers") != "x-ms-meta-*" {
		t.Fatalf("cors response headers %v", r.header)
	}
	// Logging-only update keeps the CORS rules.
	logging := `<StorageServiceProperties><Logging><Version>1.0</Version><Delete>true</Delete><Read>false</Read><Write>true</Write><RetentionPolicy><Enabled>true</Enabled><Days>7</Days></RetentionPolicy></Logging></StorageServiceProperties>`
	w.do("PUT", "?restype=service&comp=properties", logging).want(t, 202, "")
	r = w.do("GET", "?restype=service&comp=properties", "")
	if !strings.Contains(r.body, "<Logging><Version>1.0</Version><Delete>true</Delete><Read>false</Read><Write>true</Write><RetentionPolicy><Enabled>true</Enabled><Days>7</Days></RetentionPolicy></Logging>") || !strings.Contains(r.body, "<CorsRule>") {
		t.Fatalf("after logging update %s", r.body)
	}
	tooMany := "<StorageServiceProperties><Cors>" + strings.Repeat("<CorsRule><AllowedOrigins>*</AllowedOrigins><AllowedMethods>GET</AllowedMethods><MaxAgeInSeconds>1</MaxAgeInSeconds><ExposedHeaders></ExposedHeaders><AllowedHeaders></AllowedHeaders></CorsRule>", 6) + "</Cors></StorageServiceProperties>"
	w.do("PUT", "?restype=service&comp=properties", tooMany).want(t, 400, "InvalidXmlDocument")
}

func TestListQueuesXML(t *testing.T) {
	w := newWire(t)
	w.do("PUT", "aaa", "", "x-ms-meta-k", "v").want(t, 201, "")
	w.do("PUT", "bbb", "").want(t, 201, "")
	w.do("PUT", "bbc", "").want(t, 201, "")
	r := w.do("GET", "?comp=list&prefix=bb&maxresults=1&include=metadata", "")
	want := `<?xml version="1.0" encoding="utf-8"?><EnumerationResults ServiceEndpoint="http://127.0.0.1:10001/devstoreaccount1/"><Prefix>bb</Prefix><MaxResults>1</MaxResults><Queues><Queue><Name>bbb</Name><Metadata /></Queue></Queues><NextMarker>/devstoreaccount1/bbc</NextMarker></EnumerationResults>`
	if r.status != 200 || r.body != want {
		t.Fatalf("list\n%s\nwant\n%s", r.body, want)
	}
	r = w.do("GET", "?comp=list&prefix=bb&marker=/devstoreaccount1/bbc", "")
	want = `<?xml version="1.0" encoding="utf-8"?><EnumerationResults ServiceEndpoint="http://127.0.0.1:10001/devstoreaccount1/"><Prefix>bb</Prefix><Marker>/devstoreaccount1/bbc</Marker><Queues><Queue><Name>bbc</Name></Queue></Queues><NextMarker /></EnumerationResults>`
	if r.body != want {
		t.Fatalf("list page 2\n%s\nwant\n%s", r.body, want)
	}
	r = w.do("GET", "?comp=list&include=metadata", "")
	if !strings.Contains(r.body, "<Queue><Name>aaa</Name><Metadata><k>v</k></Metadata></Queue>") {
		t.Fatalf("metadata listing %s", r.body)
	}
}

func TestUnknownRoutes(t *testing.T) {
	w := newWire(t)
	w.do("GET", "nosuchthing/x?comp=bogus", "").want(t, 400, "InvalidUri")
	w.do("GET", "?comp=bogus", "").want(t, 400, "InvalidQueryParameterValue")
	w.do("POST", "que", "").want(t, 405, "UnsupportedHttpVerb")
	w.do("PUT", "que", "").want(t, 201, "")
	w.do("PATCH", "que/messages", "").want(t, 405, "UnsupportedHttpVerb")
}

func TestMessageTextRoundTrip(t *testing.T) {
	w := newWire(t)
	w.do("PUT", "que", "").want(t, 201, "")
	text := "line1\r\nline2\t<tag> & 'quotes' \"dq\" ünïcödé"
	w.do("POST", "que/messages", msgBody(esc(text))).want(t, 201, "")
	r := w.do("GET", "que/messages", "")
	got := regexp.MustCompile(`(?s)<MessageText>(.*)</MessageText>`).FindStringSubmatch(r.body)[1]
	back, _, err := parseMessage([]byte(msgBody(got)))
	if err != nil || back.Text != text {
		t.Fatalf("round trip %q -> %q (%v)", text, back.Text, err)
	}
}

// FuzzParseMessage: the message parser never panics, accepts every text
// it rendered itself and gives it back unchanged.
func FuzzParseMessage(f *testing.F) {
	f.Add([]byte(msgBody("hello")))
	f.Add([]byte("<QueueMessage><MessageText><![CDATA[x]]></MessageText></QueueMessage>"))
	f.Add([]byte("<?xml version=\"1.0\"?><QueueMessage>\n<MessageText/></QueueMessage>"))
	f.Add([]byte("<QueueMessage><MessageText>&#x1F600;&lt;</MessageText><Extra/></QueueMessage>"))
	f.Fuzz(func(t *testing.T, body []byte) {
		pm, ok, err := parseMessage(body)
		if err != nil {
			if _, isAz := azerr.As(err); !isAz {
				t.Fatalf("non-Azure error %v", err)
			}
			return
		}
		if !ok {
			return
		}
		again, ok, err := parseMessage([]byte(msgBody(esc(pm.Text))))
		if err != nil || !ok || again.Text != pm.Text {
			t.Fatalf("re-rendered text %q does not round-trip: %q %v", pm.Text, again.Text, err)
		}
	})
}

// FuzzParseBodies: the ACL and service properties parsers never panic and
// fail only with Azure errors; an accepted ACL renders and parses back to
// the same identifiers.
func FuzzParseBodies(f *testing.F) {
	f.Add([]byte(`<SignedIdentifiers><SignedIdentifier><Id>a</Id><AccessPolicy><Start>2026-01-01T00:00:00Z</Start><Permission>r</Permission></AccessPolicy></SignedIdentifier></SignedIdentifiers>`))
	f.Add([]byte(`<SignedIdentifiers><SignedIdentifier><Id>b</Id><AccessPolicy><Expiry>2026-01-01T00:00:00.123456789Z</Expiry></AccessPolicy></SignedIdentifier></SignedIdentifiers>`))
	f.Add([]byte(`<StorageServiceProperties><Cors><CorsRule><AllowedOrigins>*</AllowedOrigins><AllowedMethods>GET</AllowedMethods><MaxAgeInSeconds>5</MaxAgeInSeconds></CorsRule></Cors></StorageServiceProperties>`))
	f.Fuzz(func(t *testing.T, body []byte) {
		acl, err := parseACL(body)
		if err != nil {
			if _, ok := azerr.As(err); !ok {
				t.Fatalf("non-Azure error %v", err)
			}
		} else {
			back, err := parseACL([]byte(renderACL(acl)))
			if err != nil || len(back) != len(acl) {
				t.Fatalf("rendered ACL does not parse back: %v", err)
			}
			for i := range acl {
				if back[i].ID != acl[i].ID || !back[i].Start.Equal(acl[i].Start) || !back[i].Expiry.Equal(acl[i].Expiry) || back[i].Permission != acl[i].Permission {
					t.Fatalf("identifier %d: %+v became %+v", i, acl[i], back[i])
				}
			}
		}
		if _, _, err := parseServiceProperties(body); err != nil {
			if _, ok := azerr.As(err); !ok {
				t.Fatalf("non-Azure error %v", err)
			}
		}
	})
}

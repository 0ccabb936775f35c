package robustness_test

import (
	"encoding/xml"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/lazuli-storage/lazuli/conformance/harness"
)

const rq = "robustq"

func msgBody(text string) []byte {
	return []byte("<QueueMessage><MessageText>" + text + "</MessageText></QueueMessage>")
}

// queueFixture creates a queue with metadata holding two messages, the
// first of which is dequeued for an hour, and returns the reads that
// describe the queue plus the dequeued message's id and pop receipt.
func queueFixture(t *testing.T, tg *harness.Target) (reads []call, id, receipt string) {
	t.Helper()
	do := func(method, path string, hdr map[string]string, body []byte) *reply {
		t.Helper()
		r := send(t, tg, call{Svc: queueSvc, Method: method, Path: path, Header: hdr, Body: body})
		mustOK(t, r, "setup "+method+" "+path)
		return r
	}
	do(http.MethodPut, rq, map[string]string{"x-ms-meta-owner": "robust"}, nil)
	do(http.MethodPost, rq+"/messages", nil, msgBody("first"))
	do(http.MethodPost, rq+"/messages", nil, msgBody("second"))
	r := do(http.MethodGet, rq+"/messages?visibilitytimeout=3600", nil, nil)
	var list struct {
		Messages []struct {
			ID      string `xml:"MessageId"`
			Receipt string `xml:"PopReceipt"`
			Text    string `xml:"MessageText"`
		} `xml:"QueueMessage"`
	}
	if err := xml.Unmarshal(r.Body, &list); err != nil || len(list.Messages) != 1 || list.Messages[0].Text != "first" {
		t.Fatalf("setup dequeue: %v %s", err, r)
	}
	get := func(path string) call { return call{Svc: queueSvc, Method: http.MethodGet, Path: path} }
	reads = []call{
		get("?comp=list&include=metadata"),
		get(rq + "?comp=metadata"),
		get(rq + "?comp=acl"),
		get(rq + "/messages?peekonly=true&numofmessages=32"),
		get("?restype=service&comp=properties"),
	}
	return reads, list.Messages[0].ID, list.Messages[0].Receipt
}

func queueCases(id, receipt string) []bad {
	const (
		get, put, del, head, post = http.MethodGet, http.MethodPut, http.MethodDelete, http.MethodHead, http.MethodPost
	)
	var cs []bad
	add := func(name, method, path string, hdr map[string]string, body string, status int, codes ...string) {
		var b []byte
		if body != "" {
			b = []byte(body)
		}
		cs = append(cs, bad{Name: name, call: call{Svc: queueSvc, Method: method, Path: path, Header: hdr, Body: b}, Status: status, Codes: codes})
	}
	huge := "99999999999999999999999"
	rng := []string{"OutOfRangeQueryParameterValue", "InvalidQueryParameterValue"}
	msgs := rq + "/messages"
	one := string(msgBody("x"))
	pr := url.QueryEscape(receipt)
	msg := msgs + "/" + id

	for _, v := range []string{"0", "33", "-1", "x", huge, "1.5"} {
		add("get numofmessages="+v, get, msgs+"?numofmessages="+v, nil, "", 400, rng...)
		add("peek numofmessages="+v, get, msgs+"?peekonly=true&numofmessages="+v, nil, "", 400, rng...)
	}
	for _, v := range []string{"-5", "0", "604801", "999999999", "abc", huge} {
		add("get visibilitytimeout="+v, get, msgs+"?visibilitytimeout="+v, nil, "", 400, rng...)
	}
	for _, v := range []string{"-5", "604801", "999999999", "abc", huge} {
		add("put visibilitytimeout="+v, post, msgs+"?visibilitytimeout="+v, nil, one, 400, rng...)
		add("update visibilitytimeout="+v, put, msg+"?popreceipt="+pr+"&visibilitytimeout="+v, nil, one, 400, rng...)
	}
	for _, v := range []string{"-2", "0", "abc", huge} {
		add("put messagettl="+v, post, msgs+"?messagettl="+v, nil, one, 400, rng...)
	}
	add("put visibility beyond ttl", post, msgs+"?visibilitytimeout=100&messagettl=50", nil, one, 400, rng...)
	add("update popreceipt garbage", put, msg+"?popreceipt=garbage&visibilitytimeout=0", nil, one, 400, "InvalidQueryParameterValue")
	add("update popreceipt missing", put, msg+"?visibilitytimeout=0", nil, one, 400, "MissingRequiredQueryParameter")
	add("update visibilitytimeout missing", put, msg+"?popreceipt="+pr, nil, one, 400, "MissingRequiredQueryParameter")
	add("update body not xml", put, msg+"?popreceipt="+pr+"&visibilitytimeout=0", nil, "not xml", 400, "InvalidXmlDocument")
	add("update body truncated", put, msg+"?popreceipt="+pr+"&visibilitytimeout=0", nil, "<QueueMessage><MessageText>x", 400, "InvalidXmlDocument")
	add("update message too large", put, msg+"?popreceipt="+pr+"&visibilitytimeout=0", nil, string(msgBody(strings.Repeat("m", 65*1024))), 0, "MessageTooLarge", "RequestBodyTooLarge")
	add("update id not a message", put, msgs+"/not-a-guid?popreceipt="+pr+"&visibilitytimeout=0", nil, one, 0)
	add("delete popreceipt garbage", del, msg+"?popreceipt=garbage", nil, "", 400, "InvalidQueryParameterValue")
	add("delete popreceipt empty", del, msg+"?popreceipt=", nil, "", 400)
	add("delete popreceipt missing", del, msg, nil, "", 400, "MissingRequiredQueryParameter")
	add("delete popreceipt huge", del, msg+"?popreceipt="+strings.Repeat("A", 100000), nil, "", 400)
	add("delete unknown id", del, msgs+"/00000000-0000-0000-0000-000000000000?popreceipt="+pr, nil, "", 0)
	add("delete id not a message", del, msgs+"/%00%01?popreceipt="+pr, nil, "", 0)
	add("message id with a slash", del, msgs+"/a/b?popreceipt="+pr, nil, "", 0)
	for _, v := range []string{"-1", "0", "abc", huge} {
		add("list queues maxresults="+v, get, "?comp=list&maxresults="+v, nil, "", 400, rng...)
	}
	add("list include bogus", get, "?comp=list&include=everything", nil, "", 400, "InvalidQueryParameterValue")
	add("queue comp=unknown", get, rq+"?comp=unknown", nil, "", 0)
	add("queue comp=unknown on write", put, rq+"?comp=unknown", nil, "", 0)
	add("service restype=bogus", get, "?restype=bogus&comp=properties", nil, "", 0)
	add("service comp=unknown", get, "?restype=service&comp=unknown", nil, "", 0)
	add("service comp=unknown on write", put, "?restype=service&comp=unknown", nil, "<x/>", 0)

	// Put Message bodies.
	add("message body not xml", post, msgs, nil, "hello", 400, "InvalidXmlDocument")
	add("message wrong root", post, msgs, nil, "<Message><MessageText>x</MessageText></Message>", 400)
	add("message truncated", post, msgs, nil, "<QueueMessage><MessageText>x</Mess", 400, "InvalidXmlDocument")
	add("message without text element", post, msgs, nil, "<QueueMessage></QueueMessage>", 400)
	add("message empty body", post, msgs, nil, "", 400)
	add("message too large", post, msgs, nil, string(msgBody(strings.Repeat("m", 65*1024))), 0, "MessageTooLarge", "RequestBodyTooLarge")
	add("message 10 MB", post, msgs, nil, string(msgBody(strings.Repeat("m", 10<<20))), 0, "MessageTooLarge", "RequestBodyTooLarge")
	add("message 10 MB nesting", post, msgs, nil, "<QueueMessage>"+strings.Repeat("<a>", (10<<20)/6)+strings.Repeat("</a>", (10<<20)/6)+"</QueueMessage>", 0)
	add("message entity expansion", post, msgs, nil, `<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaaaaaa"><!ENTITY b "&a;&a;&a;&a;">]><QueueMessage><MessageText>&b;</MessageText></QueueMessage>`, 400)
	add("message control character", post, msgs, nil, "<QueueMessage><MessageText>a&#1;b</MessageText></QueueMessage>", 400)
	add("message invalid utf-8", post, msgs, nil, "<QueueMessage><MessageText>a\xff\xfeb</MessageText></QueueMessage>", 400)

	// ACL and service properties.
	si := func(id, perm string) string {
		return "<SignedIdentifier><Id>" + id + "</Id><AccessPolicy><Start>2020-01-01T00:00:00Z</Start><Expiry>2030-01-01T00:00:00Z</Expiry><Permission>" + perm + "</Permission></AccessPolicy></SignedIdentifier>"
	}
	acl := rq + "?comp=acl"
	add("acl not xml", put, acl, nil, "{}", 400, "InvalidXmlDocument")
	add("acl wrong root", put, acl, nil, "<Ids>"+si("a", "r")+"</Ids>", 400)
	add("acl truncated", put, acl, nil, "<SignedIdentifiers>"+si("a", "r")[:30], 400, "InvalidXmlDocument")
	add("acl six identifiers", put, acl, nil, "<SignedIdentifiers>"+si("a", "r")+si("b", "r")+si("c", "r")+si("d", "r")+si("e", "r")+si("f", "r")+"</SignedIdentifiers>", 400)
	add("acl bad permission", put, acl, nil, "<SignedIdentifiers>"+si("a", "rz")+"</SignedIdentifiers>", 400)
	add("acl id too long", put, acl, nil, "<SignedIdentifiers>"+si(strings.Repeat("i", 65), "r")+"</SignedIdentifiers>", 400)
	add("acl bad date", put, acl, nil, "<SignedIdentifiers><SignedIdentifier><Id>a</Id><AccessPolicy><Start>soon</Start><Expiry>later</Expiry><Permission>r</Permission></AccessPolicy></SignedIdentifier></SignedIdentifiers>", 400)
	props := "?restype=service&comp=properties"
	add("service properties not xml", put, props, nil, "nope", 400, "InvalidXmlDocument")
	add("service properties truncated", put, props, nil, "<StorageServiceProperties><Logging>", 400, "InvalidXmlDocument")
	add("service properties bad retention", put, props, nil, "<StorageServiceProperties><HourMetrics><Version>1.0</Version><Enabled>true</Enabled><IncludeAPIs>false</IncludeAPIs><RetentionPolicy><Enabled>true</Enabled><Days>-4</Days></RetentionPolicy></HourMetrics></StorageServiceProperties>", 400)
	add("service properties bad cors method", put, props, nil, "<StorageServiceProperties><Cors><CorsRule><AllowedOrigins>*</AllowedOrigins><AllowedMethods>FLY</AllowedMethods><AllowedHeaders>*</AllowedHeaders><ExposedHeaders>*</ExposedHeaders><MaxAgeInSeconds>5</MaxAgeInSeconds></CorsRule></Cors></StorageServiceProperties>", 400)
	add("service properties boolean garbage", put, props, nil, "<StorageServiceProperties><MinuteMetrics><Version>1.0</Version><Enabled>perhaps</Enabled></MinuteMetrics></StorageServiceProperties>", 400)

	// Metadata and names.
	add("metadata bad name", put, rq+"?comp=metadata", map[string]string{"x-ms-meta-a-b": "v"}, "", 400, "InvalidMetadata")
	add("metadata too large", put, rq+"?comp=metadata", map[string]string{"x-ms-meta-big": strings.Repeat("m", 9000)}, "", 400, "MetadataTooLarge")
	add("create existing with other metadata", put, rq, map[string]string{"x-ms-meta-owner": "someone else"}, "", 409, "QueueAlreadyExists")
	for _, n := range []string{"A", "ab", "a--b", "Upper", "-abc", "abc-", "q_q", strings.Repeat("q", 64), "%C3%A9t%C3%A9"} {
		add("queue name "+n, put, n, nil, "", 400, "InvalidResourceName", "OutOfRangeInput")
	}
	add("messages of bad queue name", post, "Upper/messages", nil, one, 400, "InvalidResourceName", "OutOfRangeInput")
	add("missing queue", post, "nosuchqueue/messages", nil, one, 404, "QueueNotFound")
	add("missing queue HEAD", head, "nosuchqueue?comp=metadata", nil, "", 404, "QueueNotFound")

	// Methods a resource does not support.
	for _, m := range []string{http.MethodPatch, "MERGE", "FROB"} {
		add("method "+m+" on queue", m, rq, nil, "x", 0)
		add("method "+m+" on messages", m, msgs, nil, "x", 0)
		add("method "+m+" on message", m, msg+"?popreceipt="+pr, nil, "x", 0)
		add("method "+m+" on service", m, props, nil, "x", 0)
	}
	add("POST on queue", post, rq, nil, one, 0)
	add("GET on one message", get, msg+"?popreceipt="+pr, nil, "", 0)
	add("POST on one message", post, msg+"?popreceipt="+pr, nil, one, 0)
	add("PUT on messages", put, msgs, nil, one, 0)
	add("DELETE on acl", del, acl, nil, "", 0)
	add("DELETE on metadata", del, rq+"?comp=metadata", nil, "", 0)
	add("DELETE on service", del, props, nil, "", 0)
	add("DELETE on list", del, "?comp=list", nil, "", 0)
	add("PUT on list", put, "?comp=list", nil, "", 0)
	add("POST on service", post, props, nil, "x", 0)
	add("unsigned put", post, msgs, nil, one, 0)
	cs[len(cs)-1].Unsigned = true
	add("x-ms-version garbage", post, msgs, map[string]string{"x-ms-version": "v2"}, one, 400, "InvalidHeaderValue")
	return cs
}

// TestQueueMalformed sends every malformed Queue request and checks the
// refusal and that the queue, its messages and its settings are unchanged;
// at the end the dequeued message's receipt still works and its text is
// intact.
func TestQueueMalformed(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		reads, id, receipt := queueFixture(t, tg)
		runBad(t, tg, queueCases(id, receipt), reads)
		r := send(t, tg, call{Svc: queueSvc, Method: http.MethodPut, Path: rq + "/messages/" + id + "?popreceipt=" + url.QueryEscape(receipt) + "&visibilitytimeout=0"})
		if r.Status != http.StatusNoContent {
			t.Fatalf("update with the original receipt after the bad requests: %s", r)
		}
		r = send(t, tg, call{Svc: queueSvc, Method: http.MethodGet, Path: rq + "/messages?peekonly=true&numofmessages=32"})
		if n := strings.Count(string(r.Body), "<QueueMessage>"); n != 2 || !strings.Contains(string(r.Body), "<MessageText>first</MessageText>") || !strings.Contains(string(r.Body), "<MessageText>second</MessageText>") {
			t.Fatalf("messages after the bad requests: %s", r)
		}
	})
}

// TestQueueBodiesOnBodilessRequests: a body on a request that takes none
// does not disturb the operation or the connection it came on.
func TestQueueBodiesOnBodilessRequests(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		reads, _, _ := queueFixture(t, tg)
		before := capture(t, tg, reads)
		junk := []byte(strings.Repeat("junk ", 40000))
		for _, c := range []call{
			{Svc: queueSvc, Method: http.MethodGet, Path: rq + "/messages?peekonly=true"},
			{Svc: queueSvc, Method: http.MethodGet, Path: rq + "?comp=metadata"},
			{Svc: queueSvc, Method: http.MethodHead, Path: rq + "?comp=metadata"},
			{Svc: queueSvc, Method: http.MethodGet, Path: "?comp=list"},
			{Svc: queueSvc, Method: http.MethodDelete, Path: "nosuchqueue"},
		} {
			c.Body = junk
			r := send(t, tg, c)
			if r.Status >= 500 {
				t.Errorf("%s %s with a body: %s", c.Method, c.Path, r)
			}
			if r.Status >= 400 {
				if msg := errorShape(c.Svc, c.Method, r); msg != "" {
					t.Errorf("%s %s with a body: %s: %s", c.Method, c.Path, msg, r)
				}
			}
			if r := send(t, tg, call{Svc: queueSvc, Method: http.MethodGet, Path: rq + "?comp=metadata"}); r.Status != 200 {
				t.Errorf("read after %s %s with a body: %s", c.Method, c.Path, r)
			}
		}
		same(t, "bodies on bodiless requests", before, capture(t, tg, reads))
	})
}

package robustness_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/conformance/harness"
)

// source is where the request generator takes its choices from: a seeded
// PRNG for the randomized test, the fuzzer's bytes for FuzzRequests.
type source interface {
	// intn returns a value in [0, n).
	intn(n int) int
}

type prng struct{ r *rand.Rand }

func (p prng) intn(n int) int { return p.r.IntN(n) }

// bytesSource reads choices from fuzz input; once it runs dry every choice
// is 0.
type bytesSource struct {
	b []byte
	i int
}

func (s *bytesSource) intn(n int) int {
	if n <= 1 {
		return 0
	}
	v := 0
	for range 2 {
		v <<= 8
		if s.i < len(s.b) {
			v |= int(s.b[s.i])
			s.i++
		}
	}
	return v % n
}

func pick[T any](s source, xs []T) T { return xs[s.intn(len(xs))] }

// Names of the resources the fixture creates, so that many generated
// requests reach real state.
var (
	rContainers = []string{"rc1", "rc2", "A", "ab", "a--b", "$root", "nosuch", strings.Repeat("c", 64)}
	rBlobs      = []string{"rb1", "rb2", "dir/rb3", "rb1/", "%2F", "%00", "a%3Fb", "%E2%82%AC", strings.Repeat("n", 1025), ".."}
	rQueues     = []string{"rq1", "rq2", "Upper", "ab", "a--b", "nosuch", strings.Repeat("q", 64)}
	rTables     = []string{"rt1", "rt2", "1abc", "ab", "Tables", "nosuch", strings.Repeat("t", 64)}
	rKeys       = []string{"p", "r", "", "''", "a''b", "a/b", "a%23b", "a%3Fb", "%01", "%7F", strings.Repeat("k", 1025)}
)

var methods = []string{
	http.MethodGet, http.MethodGet, http.MethodPut, http.MethodPut, http.MethodPost, http.MethodDelete,
	http.MethodHead, http.MethodOptions, http.MethodPatch, "MERGE", "FROB", "TRACE",
}

// queryNames are real query parameter names of the three services.
var queryNames = []string{
	"comp", "comp", "restype", "restype", "timeout", "maxresults", "marker", "prefix", "delimiter", "include",
	"snapshot", "versionid", "blockid", "blocklisttype", "prevsnapshot", "copyid", "where", "tier",
	"numofmessages", "visibilitytimeout", "messagettl", "popreceipt", "peekonly",
	"$filter", "$top", "$select", "$format", "NextPartitionKey", "NextRowKey", "NextTableName",
	"sv", "sig", "se", "sp", "sr", "ss", "srt", "st", "spr", "si",
}

// queryValues mixes valid values with broken ones.
var queryValues = []string{
	"", "0", "1", "-1", "-5", "32", "33", "5000", "5001", "abc", "99999999999999999999", "1.5", "1e9",
	"list", "container", "service", "properties", "metadata", "acl", "lease", "block", "blocklist", "page",
	"pagelist", "appendblock", "snapshot", "copy", "tags", "tier", "blobs", "stats", "userdelegationkey",
	"batch", "query", "expiry", "undelete", "account", "directory", "bogus",
	"true", "false", "maybe", "all", "committed", "uncommitted", "metadata,snapshots,uncommittedblobs",
	"QUFBQQ==", "QkJCQkJCQkI=", "!!!", strings.Repeat("QUFB", 30), "AgAAAAMAAAAAAAAA", "garbage",
	"2020-01-01T00:00:00.0000000Z", "yesterday", "PartitionKey eq 'p'", "((((", "n gt 1 and", "\"k\"='v'",
	"application/json;odata=nometadata", "application/potato", "%00", "\x01\x02", "a&b=c", "2099-01-01",
}

// headerNames are real request header names of the three services.
var headerNames = []string{
	"x-ms-blob-type", "x-ms-blob-type", "x-ms-range", "Range", "Content-MD5", "x-ms-blob-content-md5",
	"x-ms-blob-content-length", "x-ms-blob-sequence-number", "x-ms-sequence-number-action", "x-ms-page-write",
	"x-ms-lease-action", "x-ms-lease-duration", "x-ms-lease-id", "x-ms-proposed-lease-id", "x-ms-lease-break-period",
	"If-Match", "If-None-Match", "If-Modified-Since", "If-Unmodified-Since", "x-ms-if-tags",
	"x-ms-if-sequence-number-le", "x-ms-if-sequence-number-lt", "x-ms-if-sequence-number-eq",
	"x-ms-blob-condition-appendpos", "x-ms-blob-condition-maxsize", "x-ms-copy-source", "x-ms-copy-action",
	"x-ms-access-tier", "x-ms-tags", "x-ms-meta-k", "x-ms-meta-1bad", "x-ms-meta-", "x-ms-blob-public-access",
	"x-ms-delete-snapshots", "x-ms-range-get-content-md5", "x-ms-blob-content-type", "x-ms-version",
	"x-ms-client-request-id", "x-ms-date", "Content-Type", "Accept", "Prefer", "DataServiceVersion",
	"MaxDataServiceVersion", "X-HTTP-Method", "Origin", "Access-Control-Request-Method",
	"Access-Control-Request-Headers", "x-ms-source-range", "x-ms-encryption-scope", "x-ms-immutability-policy-mode",
}

var headerValues = []string{
	"", "0", "1", "-1", "15", "60", "61", "-2", "abc", "99999999999999999999", "512", "513", "1024",
	"BlockBlob", "PageBlob", "AppendBlob", "JellyBlob", "acquire", "renew", "change", "release", "break", "borrow",
	"update", "clear", "max", "increment", "include", "only", "Hot", "Cool", "Archive", "Molten", "container", "blob",
	"bytes=0-511", "bytes=9-1", "bytes=abc", "bytes=-5", "bytes=0-", "bytes=99999999999999999999-", "items=0-1",
	"*", "\"0x8D000000000000\"", "W/\"datetime'2000-01-01T00%3A00%3A00Z'\"", ",", "garbage",
	"Sat, 01 Jan 2000 00:00:00 GMT", "Fri, 31 Dec 9999 23:59:59 GMT", "the day after tomorrow",
	"6d3b3a5e-5a9e-4f55-9d5b-3b7d6f1e2c10", "not-a-guid", "1B2M2Y8AsgTpgAmY7PhCfg==", "AAAA", "%%%",
	"application/json", "application/xml", "multipart/mixed; boundary=batch_r", "multipart/mixed", "text/plain",
	"application/json;odata=fullmetadata", "return-no-content", "return-content", "3.0", "MERGE", "DELETE", "PUT",
	"2019-02-02", "2025-01-05", "2009-09-19", "1999-01-01", "v2", "http://example.com", "GET", "x-ms-meta-k",
	"k=v", "k=v&k2", "\"k\"='v'", "http://127.0.0.1:10000/devstoreaccount1/rc1/rb1", strings.Repeat("h", 2000),
}

// bodies are request body templates; the generator may cut them short.
var bodies = []string{
	"<BlockList><Latest>QUFBQQ==</Latest></BlockList>",
	"<BlockList><Committed>QUFBQQ==</Committed><Uncommitted>QkJCQg==</Uncommitted></BlockList>",
	"<QueueMessage><MessageText>hello</MessageText></QueueMessage>",
	"<SignedIdentifiers><SignedIdentifier><Id>a</Id><AccessPolicy><Start>2020-01-01T00:00:00Z</Start><Expiry>2030-01-01T00:00:00Z</Expiry><Permission>rw</Permission></AccessPolicy></SignedIdentifier></SignedIdentifiers>",
	"<StorageServiceProperties><Cors><CorsRule><AllowedOrigins>*</AllowedOrigins><AllowedMethods>GET</AllowedMethods><AllowedHeaders>*</AllowedHeaders><ExposedHeaders>*</ExposedHeaders><MaxAgeInSeconds>5</MaxAgeInSeconds></CorsRule></Cors></StorageServiceProperties>",
	"<Tags><TagSet><Tag><Key>k</Key><Value>v</Value></Tag></TagSet></Tags>",
	"<KeyInfo><Start>2020-01-01T00:00:00Z</Start><Expiry>2030-01-01T00:00:00Z</Expiry></KeyInfo>",
	`{"PartitionKey":"p","RowKey":"r","n":1,"s":"x","b@odata.type":"Edm.Binary","b":"AAAA"}`,
	`{"PartitionKey":"p","RowKey":"r2","big@odata.type":"Edm.Int64","big":"99999999999999999999"}`,
	`{"TableName":"rt3"}`,
	`{"TableName":5}`,
	"--batch_r\r\nContent-Type: multipart/mixed; boundary=changeset_r\r\n\r\n--changeset_r\r\nContent-Type: application/http\r\n\r\nPOST http://127.0.0.1:10002/devstoreaccount1/rt1 HTTP/1.1\r\nContent-Type: application/json\r\n\r\n{\"PartitionKey\":\"p\",\"RowKey\":\"z\"}\r\n--changeset_r--\r\n--batch_r--\r\n",
	"--batch_r\r\nContent-Type: multipart/mixed; boundary=changeset_r\r\n\r\n--changeset_r\r\n\r\nGARBAGE\r\n--batch_r--\r\n",
	"<?xml version=\"1.0\"?><!DOCTYPE x [<!ENTITY a \"aaaa\">]><BlockList><Latest>&a;</Latest></BlockList>",
	"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
	"null", "{}", "[]", "<", "<a>", "\x00\x01\x02\xff\xfe",
}

// genRequest builds one request from s: mostly a valid request of some
// operation with a few mutations, sometimes one built from scratch.
func genRequest(s source) call {
	if s.intn(4) == 0 {
		return genFree(s)
	}
	tp := pick(s, templates)
	r := mreq{svc: tp.svc, method: tp.method, hdr: map[string]string{}, body: tp.body}
	path, rawq, _ := strings.Cut(tp.path, "?")
	if path != "" {
		r.segs = strings.Split(path, "/")
	}
	if rawq != "" {
		for _, kv := range strings.Split(rawq, "&") {
			k, v, _ := strings.Cut(kv, "=")
			r.query = append(r.query, [2]string{k, v})
		}
	}
	for i := 0; i+1 < len(tp.hdr); i += 2 {
		r.hdr[tp.hdr[i]] = tp.hdr[i+1]
	}
	for range 1 + s.intn(3) {
		r.mutate(s)
	}
	c := call{Svc: r.svc, Method: r.method, Path: strings.Join(r.segs, "/"), Header: r.hdr, Unsigned: s.intn(20) == 0}
	if len(r.query) > 0 {
		var q []string
		for _, kv := range r.query {
			q = append(q, url.QueryEscape(kv[0])+"="+url.QueryEscape(kv[1]))
		}
		c.Path += "?" + strings.Join(q, "&")
	}
	if r.body != "" {
		c.Body = []byte(r.body)
	}
	return c
}

// template is a valid request of one operation; hdr holds name, value
// pairs; path may carry a query whose values are not escaped.
type template struct {
	svc    svc
	method string
	path   string
	hdr    []string
	body   string
}

var (
	entityBody = `{"PartitionKey":"p","RowKey":"r","n":2,"s":"y","d@odata.type":"Edm.DateTime","d":"2020-01-01T00:00:00Z"}`
	batchBody  = "--batch_r\r\nContent-Type: multipart/mixed; boundary=changeset_r\r\n\r\n" +
		"--changeset_r\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n" +
		"PUT {tablebase}/rt1(PartitionKey='p',RowKey='b1') HTTP/1.1\r\nContent-Type: application/json\r\n\r\n{\"n\":1}\r\n" +
		"--changeset_r\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n" +
		"DELETE {tablebase}/rt1(PartitionKey='p',RowKey='b2') HTTP/1.1\r\nIf-Match: *\r\n\r\n\r\n" +
		"--changeset_r--\r\n--batch_r--\r\n"
	page = strings.Repeat("p", 512)
)

var templates = []template{
	{blobSvc, "PUT", "rc3?restype=container", []string{"x-ms-meta-k", "v"}, ""},
	{blobSvc, "GET", "?comp=list&include=metadata&maxresults=2", nil, ""},
	{blobSvc, "GET", "rc1?restype=container&comp=list&include=metadata,snapshots,uncommittedblobs&prefix=r&delimiter=/", nil, ""},
	{blobSvc, "HEAD", "rc1?restype=container", nil, ""},
	{blobSvc, "PUT", "rc1?restype=container&comp=metadata", []string{"x-ms-meta-k", "v"}, ""},
	{blobSvc, "PUT", "rc1?restype=container&comp=acl", []string{"x-ms-blob-public-access", "blob"}, bodies[3]},
	{blobSvc, "PUT", "rc1?restype=container&comp=lease", []string{"x-ms-lease-action", "acquire", "x-ms-lease-duration", "15"}, ""},
	{blobSvc, "PUT", "rc1/rb1", []string{"x-ms-blob-type", "BlockBlob", "x-ms-meta-k", "v", "Content-MD5", "1B2M2Y8AsgTpgAmY7PhCfg=="}, ""},
	{blobSvc, "PUT", "rc1/rb1", []string{"x-ms-blob-type", "BlockBlob", "If-Match", "*"}, "new content"},
	{blobSvc, "GET", "rc1/rb1", []string{"x-ms-range", "bytes=0-3", "If-Modified-Since", "Sat, 01 Jan 2000 00:00:00 GMT"}, ""},
	{blobSvc, "HEAD", "rc1/rb1", nil, ""},
	{blobSvc, "PUT", "rc1/rb1?comp=block&blockid=QUFBQQ==", nil, "block"},
	{blobSvc, "PUT", "rc1/rb1?comp=blocklist", []string{"x-ms-blob-content-type", "text/plain"}, bodies[0]},
	{blobSvc, "GET", "rc1/rb1?comp=blocklist&blocklisttype=all", nil, ""},
	{blobSvc, "PUT", "rc1/rb2", []string{"x-ms-blob-type", "PageBlob", "x-ms-blob-content-length", "1024"}, ""},
	{blobSvc, "PUT", "rc1/rb2?comp=page", []string{"x-ms-page-write", "update", "x-ms-range", "bytes=0-511"}, page},
	{blobSvc, "PUT", "rc1/rb2?comp=page", []string{"x-ms-page-write", "clear", "x-ms-range", "bytes=512-1023"}, ""},
	{blobSvc, "GET", "rc1/rb2?comp=pagelist", []string{"x-ms-range", "bytes=0-1023"}, ""},
	{blobSvc, "PUT", "rc1/rb2?comp=properties", []string{"x-ms-blob-content-length", "2048", "x-ms-sequence-number-action", "increment"}, ""},
	{blobSvc, "PUT", "rc2/rb1?comp=appendblock", []string{"x-ms-blob-condition-maxsize", "100000"}, "append"},
	{blobSvc, "PUT", "rc1/rb1?comp=lease", []string{"x-ms-lease-action", "acquire", "x-ms-lease-duration", "-1"}, ""},
	{blobSvc, "PUT", "rc1/rb1?comp=lease", []string{"x-ms-lease-action", "break", "x-ms-lease-break-period", "0"}, ""},
	{blobSvc, "PUT", "rc1/rb1?comp=metadata", []string{"x-ms-meta-a", "b"}, ""},
	{blobSvc, "PUT", "rc1/rb1?comp=properties", []string{"x-ms-blob-content-type", "text/html"}, ""},
	{blobSvc, "PUT", "rc1/rb1?comp=snapshot", nil, ""},
	{blobSvc, "PUT", "rc1/rb1?comp=tags", nil, bodies[5]},
	{blobSvc, "GET", "?comp=blobs&where=\"k\"='v'", nil, ""},
	{blobSvc, "PUT", "rc1/rb1?comp=tier", []string{"x-ms-access-tier", "Cool"}, ""},
	{blobSvc, "PUT", "rc2/rb5", []string{"x-ms-copy-source", "{blobbase}/rc1/rb1"}, ""},
	{blobSvc, "DELETE", "rc1/rb3", []string{"x-ms-delete-snapshots", "include"}, ""},
	{blobSvc, "PUT", "?restype=service&comp=properties", nil, bodies[4]},
	{blobSvc, "GET", "?restype=account&comp=properties", nil, ""},
	{blobSvc, "OPTIONS", "rc1/rb1", []string{"Origin", "http://example.com", "Access-Control-Request-Method", "GET"}, ""},
	{queueSvc, "PUT", "rq3", []string{"x-ms-meta-k", "v"}, ""},
	{queueSvc, "GET", "?comp=list&include=metadata&maxresults=1", nil, ""},
	{queueSvc, "GET", "rq1?comp=metadata", nil, ""},
	{queueSvc, "PUT", "rq1?comp=metadata", []string{"x-ms-meta-k", "v"}, ""},
	{queueSvc, "POST", "rq1/messages?visibilitytimeout=0&messagettl=60", nil, bodies[2]},
	{queueSvc, "GET", "rq1/messages?numofmessages=2&visibilitytimeout=1", nil, ""},
	{queueSvc, "GET", "rq1/messages?peekonly=true&numofmessages=32", nil, ""},
	{queueSvc, "PUT", "rq1/messages/00000000-0000-0000-0000-000000000000?popreceipt=AgAAAAMAAAAAAAAA&visibilitytimeout=0", nil, bodies[2]},
	{queueSvc, "DELETE", "rq1/messages/00000000-0000-0000-0000-000000000000?popreceipt=AgAAAAMAAAAAAAAA", nil, ""},
	{queueSvc, "DELETE", "rq2/messages", nil, ""},
	{queueSvc, "PUT", "rq1?comp=acl", nil, strings.Replace(bodies[3], "rw", "raup", 1)},
	{queueSvc, "GET", "rq1?comp=acl", nil, ""},
	{queueSvc, "PUT", "?restype=service&comp=properties", nil, bodies[4]},
	{queueSvc, "OPTIONS", "rq1", []string{"Origin", "http://example.com", "Access-Control-Request-Method", "GET"}, ""},
	{tableSvc, "POST", "Tables", []string{"Prefer", "return-no-content"}, bodies[9]},
	{tableSvc, "GET", "Tables?$filter=TableName ge 'r'&$top=1", nil, ""},
	{tableSvc, "DELETE", "Tables('rt3')", nil, ""},
	{tableSvc, "POST", "rt1", []string{"Prefer", "return-content"}, strings.Replace(entityBody, `"r"`, `"r9"`, 1)},
	{tableSvc, "GET", "rt1()?$filter=PartitionKey eq 'p' and n ge 1&$top=5&$select=n,s", nil, ""},
	{tableSvc, "GET", "rt1(PartitionKey='p',RowKey='r')", nil, ""},
	{tableSvc, "PUT", "rt1(PartitionKey='p',RowKey='r')", []string{"If-Match", "*"}, entityBody},
	{tableSvc, "PATCH", "rt1(PartitionKey='p',RowKey='r')", nil, `{"m":true}`},
	{tableSvc, "MERGE", "rt1(PartitionKey='p',RowKey='r')", []string{"If-Match", "*"}, `{"m":false}`},
	{tableSvc, "POST", "rt1(PartitionKey='p',RowKey='r')", []string{"X-HTTP-Method", "MERGE", "If-Match", "*"}, `{"m":1}`},
	{tableSvc, "DELETE", "rt1(PartitionKey='p',RowKey='r2')", []string{"If-Match", "*"}, ""},
	{tableSvc, "POST", "$batch", []string{"Content-Type", "multipart/mixed; boundary=batch_r"}, batchBody},
	{tableSvc, "PUT", "rt1?comp=acl", []string{"Content-Type", "application/xml"}, strings.Replace(bodies[3], "rw", "raud", 1)},
	{tableSvc, "GET", "rt1?comp=acl", nil, ""},
	{tableSvc, "PUT", "?restype=service&comp=properties", []string{"Content-Type", "application/xml"}, bodies[4]},
	{tableSvc, "OPTIONS", "rt1", []string{"Origin", "http://example.com", "Access-Control-Request-Method", "GET"}, ""},
}

// mreq is a request being mutated.
type mreq struct {
	svc    svc
	method string
	segs   []string
	query  [][2]string
	hdr    map[string]string
	body   string
}

// mutate applies one random change.
func (r *mreq) mutate(s source) {
	switch s.intn(10) {
	case 0:
		r.method = pick(s, methods)
	case 1: // change the value of a parameter the request has
		if len(r.query) > 0 {
			r.query[s.intn(len(r.query))][1] = pick(s, queryValues)
			return
		}
		fallthrough
	case 2:
		r.query = append(r.query, [2]string{pick(s, queryNames), pick(s, queryValues)})
	case 3:
		if len(r.query) > 0 {
			i := s.intn(len(r.query))
			r.query = append(r.query[:i], r.query[i+1:]...)
		}
	case 4: // change the value of a header the request has
		if len(r.hdr) > 0 {
			for _, k := range sortedKeys(r.hdr)[s.intn(len(r.hdr)):] {
				r.hdr[k] = pick(s, headerValues)
				return
			}
		}
		fallthrough
	case 5:
		r.hdr[pick(s, headerNames)] = pick(s, headerValues)
	case 6:
		if len(r.hdr) > 0 {
			delete(r.hdr, sortedKeys(r.hdr)[s.intn(len(r.hdr))])
		}
	case 7:
		switch s.intn(4) {
		case 0:
			r.body = r.body[:s.intn(len(r.body)+1)]
		case 1:
			b := make([]byte, s.intn(64))
			for i := range b {
				b[i] = byte(s.intn(256))
			}
			r.body = string(b)
		case 2:
			r.body = pick(s, bodies)
		default:
			if r.body != "" {
				i := s.intn(len(r.body))
				r.body = r.body[:i] + pick(s, []string{"<", ">", "\"", "{", "}", "&", "\x00", "--", "\r\n", "]]>", "'", "9999999999999999999999"}) + r.body[i:]
			}
		}
	case 8:
		if len(r.segs) > 0 {
			i := s.intn(len(r.segs))
			var pool []string
			switch r.svc {
			case blobSvc:
				pool = append(rContainers, rBlobs...)
			case queueSvc:
				pool = append(rQueues, "messages")
			default:
				pool = append(rTables, "Tables", "$batch", "rt1(PartitionKey='"+pick(s, rKeys)+"',RowKey='"+pick(s, rKeys)+"')")
			}
			r.segs[i] = pick(s, pool)
			return
		}
		fallthrough
	default:
		r.segs = append(r.segs, pick(s, []string{"x", "", "messages", "%2F", "Tables"}))
	}
}

func sortedKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// genFree builds a request from scratch: a service, a method, a path of
// real and broken resource names, query parameters and headers with real
// names and random values, and a small body.
func genFree(s source) call {
	c := call{Svc: svc(s.intn(3)), Method: pick(s, methods), Header: map[string]string{}}
	var segs []string
	switch c.Svc {
	case blobSvc:
		switch s.intn(4) {
		case 0:
		case 1:
			segs = []string{pick(s, rContainers)}
		default:
			segs = []string{pick(s, rContainers), pick(s, rBlobs)}
		}
	case queueSvc:
		switch s.intn(5) {
		case 0:
		case 1:
			segs = []string{pick(s, rQueues)}
		case 2:
			segs = []string{pick(s, rQueues), "messages"}
		default:
			segs = []string{pick(s, rQueues), "messages", pick(s, []string{"00000000-0000-0000-0000-000000000000", "not-a-guid", "%00", ""})}
		}
	case tableSvc:
		switch s.intn(6) {
		case 0:
			segs = []string{"Tables"}
		case 1:
			segs = []string{"Tables('" + pick(s, rTables) + "')"}
		case 2:
			segs = []string{pick(s, rTables)}
		case 3:
			segs = []string{pick(s, rTables) + "()"}
		case 4:
			segs = []string{"$batch"}
		default:
			segs = []string{pick(s, rTables) + "(PartitionKey='" + pick(s, rKeys) + "',RowKey='" + pick(s, rKeys) + "')"}
		}
	}
	// Sometimes one more segment, or one cut short.
	switch s.intn(10) {
	case 0:
		segs = append(segs, pick(s, []string{"x", "", "..", "%2e%2e", "messages", "Tables"}))
	case 1:
		if len(segs) > 0 {
			last := segs[len(segs)-1]
			last = last[:s.intn(len(last)+1)]
			// Do not leave half a percent escape behind.
			if i := strings.LastIndexByte(last, '%'); i >= 0 && i > len(last)-3 {
				last = last[:i]
			}
			segs[len(segs)-1] = last
		}
	}
	var q []string
	for range s.intn(5) {
		q = append(q, url.QueryEscape(pick(s, queryNames))+"="+url.QueryEscape(pick(s, queryValues)))
	}
	c.Path = strings.Join(segs, "/")
	if len(q) > 0 {
		c.Path += "?" + strings.Join(q, "&")
	}
	for range s.intn(6) {
		c.Header[pick(s, headerNames)] = pick(s, headerValues)
	}
	switch s.intn(4) {
	case 0:
	case 1:
		b := make([]byte, s.intn(64))
		for i := range b {
			b[i] = byte(s.intn(256))
		}
		c.Body = b
	default:
		body := pick(s, bodies)
		if s.intn(3) == 0 {
			body = body[:s.intn(len(body)+1)]
		}
		c.Body = []byte(body)
	}
	if len(c.Body) == 0 {
		c.Body = nil
	}
	c.Unsigned = s.intn(12) == 0
	return c
}

// describe renders a generated request for a failure message, enough to
// replay it.
func describe(tg *harness.Target, c call) string {
	c = resolve(tg, c)
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s/%s", c.Method, c.Svc.base(tg), c.Path)
	for k, v := range c.Header {
		fmt.Fprintf(&b, "\n  %s: %q", k, v)
	}
	if c.Unsigned {
		b.WriteString("\n  (unsigned)")
	}
	if c.Body != nil {
		fmt.Fprintf(&b, "\n  body (%d bytes, base64): %s", len(c.Body), base64.StdEncoding.EncodeToString(c.Body))
	}
	return b.String()
}

// fixtureCalls create the resources the generator names.
var fixtureCalls = []call{
	{Svc: blobSvc, Method: http.MethodPut, Path: "rc1?restype=container"},
	{Svc: blobSvc, Method: http.MethodPut, Path: "rc2?restype=container"},
	{Svc: blobSvc, Method: http.MethodPut, Path: "rc1/rb1", Header: map[string]string{"x-ms-blob-type": "BlockBlob"}, Body: []byte("blob one")},
	{Svc: blobSvc, Method: http.MethodPut, Path: "rc1/rb2", Header: map[string]string{"x-ms-blob-type": "PageBlob", "x-ms-blob-content-length": "1024"}},
	{Svc: blobSvc, Method: http.MethodPut, Path: "rc2/rb1", Header: map[string]string{"x-ms-blob-type": "AppendBlob"}},
	{Svc: queueSvc, Method: http.MethodPut, Path: "rq1"},
	{Svc: queueSvc, Method: http.MethodPut, Path: "rq2"},
	{Svc: queueSvc, Method: http.MethodPost, Path: "rq1/messages", Body: msgBody("m")},
	{Svc: tableSvc, Method: http.MethodPost, Path: "Tables", Body: []byte(`{"TableName":"rt1"}`)},
	{Svc: tableSvc, Method: http.MethodPost, Path: "Tables", Body: []byte(`{"TableName":"rt2"}`)},
	{Svc: tableSvc, Method: http.MethodPut, Path: "rt1(PartitionKey='p',RowKey='r')", Body: []byte(`{"n":1}`)},
	{Svc: tableSvc, Method: http.MethodPut, Path: "rt1(PartitionKey='p',RowKey='r2')", Body: []byte(`{"n":2}`)},
}

// randomFixture creates the resources the generator names.
func randomFixture(t testing.TB, tg *harness.Target) {
	t.Helper()
	for _, c := range fixtureCalls {
		mustOK(t, send(t, tg, c), "setup "+c.Method+" "+c.Path)
	}
}

// refresh recreates what random requests may have deleted; the answers
// are held to the same rules as the random requests.
func refresh(tg *harness.Target) string {
	for _, c := range fixtureCalls {
		if msg := checkRandom(tg, c); msg != "" {
			return describe(tg, c) + "\n" + msg
		}
	}
	return ""
}

// resolve fills in the target's endpoints where a generated request names
// them ({blobbase} in headers, {tablebase} in batch bodies).
func resolve(tg *harness.Target, c call) call {
	h := make(map[string]string, len(c.Header))
	for k, v := range c.Header {
		h[k] = strings.ReplaceAll(v, "{blobbase}", tg.BlobURL)
	}
	c.Header = h
	if c.Body != nil {
		c.Body = []byte(strings.ReplaceAll(string(c.Body), "{tablebase}", tg.TableURL))
	}
	return c
}

// checkRandom sends c and returns what is wrong with the answer: a
// transport error (a hang counts), a 5xx, or a 4xx that is not a
// well-formed Azure error.
func checkRandom(tg *harness.Target, c call) string {
	r, err := try(tg, resolve(tg, c))
	if err != nil {
		return "transport error: " + err.Error()
	}
	if r.Status >= 500 {
		return "server error: " + r.String()
	}
	if r.Status >= 400 {
		if msg := errorShape(c.Svc, c.Method, r); msg != "" {
			return msg + ": " + r.String()
		}
	}
	if c.Method == http.MethodHead && len(r.Body) != 0 {
		return "HEAD answered with a body: " + r.String()
	}
	if r.Status < 300 && !isBlobContent(c) {
		if msg := wellFormed(r); msg != "" {
			return msg + ": " + r.String()
		}
	}
	return ""
}

// isBlobContent reports whether c reads a blob's own bytes, whose format
// is the uploader's business.
func isBlobContent(c call) bool {
	path, q, _ := strings.Cut(c.Path, "?")
	return c.Svc == blobSvc && strings.Contains(path, "/") && !strings.Contains(q, "comp=")
}

// wellFormed checks that a body lazuli wrote parses: XML when it starts
// with an XML declaration or the Content-Type says XML, JSON when the
// Content-Type says JSON.
func wellFormed(r *reply) string {
	ct := r.Header.Get("Content-Type")
	body := bytes.TrimSpace(r.Body)
	switch {
	case len(body) == 0:
		return ""
	case strings.HasPrefix(ct, "application/json"):
		if !json.Valid(body) {
			return "response body is not valid JSON"
		}
	case bytes.HasPrefix(body, []byte("<?xml")) || strings.Contains(ct, "xml"):
		d := xml.NewDecoder(bytes.NewReader(body))
		for {
			_, err := d.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				return "response body is not well-formed XML: " + err.Error()
			}
		}
	}
	return ""
}

// TestRandomRequests sends a few thousand mutated requests (fixed seed)
// to every service of every target: none may fail in transport (a request
// unanswered after requestTimeout counts as a hang), answer 5xx, or answer
// a 4xx that is not a proper Azure error.
func TestRandomRequests(t *testing.T) {
	const perTarget = 4000
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		randomFixture(t, tg)
		s := prng{rand.New(rand.NewPCG(20261122, 7))}
		start := time.Now()
		failures := 0
		for i := range perTarget {
			if i%250 == 249 {
				if msg := refresh(tg); msg != "" {
					t.Errorf("refreshing the fixture: %s", msg)
				}
			}
			c := genRequest(s)
			if msg := checkRandom(tg, c); msg != "" {
				t.Errorf("request %d: %s\n%s", i, describe(tg, c), msg)
				if failures++; failures == 10 {
					t.Fatal("stopping after 10 failures")
				}
			}
		}
		t.Logf("%d requests in %v", perTarget, time.Since(start).Round(time.Millisecond))
	})
}

// FuzzRequests drives the same request generator from fuzz input against
// an in-memory lazuli: go test -fuzz FuzzRequests ./robustness/
func FuzzRequests(f *testing.F) {
	tg := harness.Start(f, "mem-inproc")
	randomFixture(f, tg)
	for i := range 16 {
		seed := make([]byte, 48)
		r := rand.New(rand.NewPCG(uint64(i), 1))
		for j := range seed {
			seed[j] = byte(r.IntN(256))
		}
		f.Add(seed)
	}
	f.Add([]byte(strconv.Itoa(0)))
	f.Fuzz(func(t *testing.T, data []byte) {
		c := genRequest(&bytesSource{b: data})
		if msg := checkRandom(tg, c); msg != "" {
			t.Fatalf("%s\n%s", describe(tg, c), msg)
		}
	})
}

// TestRandomRequestsConcurrent sends mutated requests from several
// goroutines at once: concurrency must not turn bad input into a 5xx, a
// hang or a malformed answer either.
func TestRandomRequestsConcurrent(t *testing.T) {
	const workers, perWorker = 4, 400
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		randomFixture(t, tg)
		var wg sync.WaitGroup
		var mu sync.Mutex
		failures := 0
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s := prng{rand.New(rand.NewPCG(20261122, uint64(100+w)))}
				for range perWorker {
					c := genRequest(s)
					if msg := checkRandom(tg, c); msg != "" {
						mu.Lock()
						if failures++; failures <= 10 {
							t.Errorf("%s\n%s", describe(tg, c), msg)
						}
						mu.Unlock()
					}
				}
			}()
		}
		wg.Wait()
	})
}

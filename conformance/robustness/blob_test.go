package robustness_test

import (
	"bytes"
	"crypto/md5"
	"encoding/base64"
	"net/http"
	"strings"
	"testing"

	"github.com/lazuli-storage/lazuli/conformance/harness"
)

const (
	ctr      = "robust"
	original = "original content"
)

// blobFixture creates a container holding a block blob "b", a block blob
// "blk" built from one committed block, a blob "unc" with one uncommitted
// block, a page blob "pg" with one written page and an append blob "ap",
// and returns the reads that describe them.
func blobFixture(t *testing.T, tg *harness.Target) []call {
	t.Helper()
	put := func(path string, hdr map[string]string, body string) {
		t.Helper()
		var b []byte
		if body != "" {
			b = []byte(body)
		}
		mustOK(t, send(t, tg, call{Svc: blobSvc, Method: http.MethodPut, Path: path, Header: hdr, Body: b}), "setup "+path)
	}
	put(ctr+"?restype=container", map[string]string{"x-ms-meta-owner": "robust"}, "")
	put(ctr+"/b", map[string]string{"x-ms-blob-type": "BlockBlob", "x-ms-meta-k": "v"}, original)
	put(ctr+"/blk?comp=block&blockid=QUFBQQ%3D%3D", nil, "blockA")
	put(ctr+"/blk?comp=blocklist", nil, "<BlockList><Latest>QUFBQQ==</Latest></BlockList>")
	put(ctr+"/unc?comp=block&blockid=QUFBQQ%3D%3D", nil, "blockA")
	put(ctr+"/pg", map[string]string{"x-ms-blob-type": "PageBlob", "x-ms-blob-content-length": "1024"}, "")
	put(ctr+"/pg?comp=page", map[string]string{"x-ms-page-write": "update", "x-ms-range": "bytes=0-511"}, strings.Repeat("p", 512))
	put(ctr+"/ap", map[string]string{"x-ms-blob-type": "AppendBlob"}, "")
	put(ctr+"/ap?comp=appendblock", nil, "append-one")
	put(ctr+"/b?comp=tags", nil, `<?xml version="1.0" encoding="utf-8"?><Tags><TagSet><Tag><Key>k</Key><Value>v</Value></Tag></TagSet></Tags>`)

	get := func(path string) call { return call{Svc: blobSvc, Method: http.MethodGet, Path: path} }
	return []call{
		get("?comp=list&include=metadata"),
		get(ctr + "?restype=container&comp=list&include=metadata,uncommittedblobs,snapshots,tags"),
		{Svc: blobSvc, Method: http.MethodHead, Path: ctr + "?restype=container"},
		get(ctr + "?restype=container&comp=acl"),
		get(ctr + "/b"),
		get(ctr + "/b?comp=tags"),
		get(ctr + "/blk"),
		get(ctr + "/blk?comp=blocklist&blocklisttype=all"),
		get(ctr + "/unc?comp=blocklist&blocklisttype=all"),
		get(ctr + "/pg"),
		get(ctr + "/pg?comp=pagelist"),
		get(ctr + "/ap"),
		get("?restype=service&comp=properties"),
	}
}

func md5b64(s string) string {
	h := md5.Sum([]byte(s))
	return base64.StdEncoding.EncodeToString(h[:])
}

// blobCases are the malformed Blob requests; every one must be refused
// without changing what blobFixture stored.
func blobCases() []bad {
	const (
		get, put, del, head, post = http.MethodGet, http.MethodPut, http.MethodDelete, http.MethodHead, http.MethodPost
	)
	var cs []bad
	add := func(name, method, path string, hdr map[string]string, body string, status int, codes ...string) {
		var b []byte
		if body != "" {
			b = []byte(body)
		}
		cs = append(cs, bad{Name: name, call: call{Svc: blobSvc, Method: method, Path: path, Header: hdr, Body: b}, Status: status, Codes: codes})
	}
	h := func(kv ...string) map[string]string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	b, pg, ap, blk := ctr+"/b", ctr+"/pg", ctr+"/ap", ctr+"/blk"
	huge := "99999999999999999999999"

	// Ranges on reads (x-ms-range is strict; a bad Range is ignored, see
	// TestBlobIgnoredHeaders).
	add("x-ms-range reversed", get, b, h("x-ms-range", "bytes=9-1"), "", 0, "InvalidHeaderValue", "InvalidRange")
	add("x-ms-range letters", get, b, h("x-ms-range", "bytes=abc"), "", 400, "InvalidHeaderValue")
	add("x-ms-range huge numbers", get, b, h("x-ms-range", "bytes="+huge+"-"+huge), "", 0, "InvalidHeaderValue", "InvalidRange")
	// A negative start ("bytes=-1-5") is no error: Azure ignores it on reads
	// (blob.TestNegativeRangeIgnoredOnReads).
	add("x-ms-range wrong unit", get, b, h("x-ms-range", "items=0-1"), "", 400, "InvalidHeaderValue")
	add("x-ms-range past end", get, b, h("x-ms-range", "bytes=1000000-2000000"), "", 416, "InvalidRange")
	add("x-ms-range on HEAD letters", head, b, h("x-ms-range", "bytes=x-y"), "", 400, "InvalidHeaderValue")

	// Put Page.
	page := strings.Repeat("q", 512)
	add("put page reversed range", put, pg+"?comp=page", h("x-ms-page-write", "update", "x-ms-range", "bytes=511-0"), page, 0)
	add("put page unaligned range", put, pg+"?comp=page", h("x-ms-page-write", "update", "x-ms-range", "bytes=1-512"), page, 0)
	add("put page body shorter than range", put, pg+"?comp=page", h("x-ms-page-write", "update", "x-ms-range", "bytes=0-1023"), page, 0)
	add("put page range past size", put, pg+"?comp=page", h("x-ms-page-write", "update", "x-ms-range", "bytes=2048-2559"), page, 416, "InvalidPageRange")
	add("put page huge range", put, pg+"?comp=page", h("x-ms-page-write", "update", "x-ms-range", "bytes="+huge+"-"+huge), page, 0)
	add("put page bogus write", put, pg+"?comp=page", h("x-ms-page-write", "scribble", "x-ms-range", "bytes=0-511"), page, 400, "InvalidHeaderValue")
	add("put page missing write", put, pg+"?comp=page", h("x-ms-range", "bytes=0-511"), page, 400, "MissingRequiredHeader")
	add("put page missing range", put, pg+"?comp=page", h("x-ms-page-write", "update"), page, 0)
	add("clear page with body", put, pg+"?comp=page", h("x-ms-page-write", "clear", "x-ms-range", "bytes=0-511"), page, 0)
	add("put page on block blob", put, b+"?comp=page", h("x-ms-page-write", "update", "x-ms-range", "bytes=0-511"), page, 0)
	add("put page bad sequence condition", put, pg+"?comp=page", h("x-ms-page-write", "update", "x-ms-range", "bytes=0-511", "x-ms-if-sequence-number-eq", "abc"), page, 400)

	// Put Blob.
	add("unknown blob type", put, b, h("x-ms-blob-type", "JellyBlob"), "new", 400, "InvalidHeaderValue")
	add("missing blob type", put, b, nil, "new", 400, "MissingRequiredHeader")
	add("content-md5 not base64", put, b, h("x-ms-blob-type", "BlockBlob", "Content-MD5", "not*base64"), "new", 400, "InvalidMd5", "InvalidHeaderValue")
	add("content-md5 wrong length", put, b, h("x-ms-blob-type", "BlockBlob", "Content-MD5", "AAAA"), "new", 400, "InvalidMd5", "InvalidHeaderValue")
	add("content-md5 mismatch", put, b, h("x-ms-blob-type", "BlockBlob", "Content-MD5", md5b64("other")), "new", 400, "Md5Mismatch")
	add("metadata name not identifier", put, b, h("x-ms-blob-type", "BlockBlob", "x-ms-meta-1bad", "v"), "new", 400, "InvalidMetadata")
	add("metadata too large", put, b, h("x-ms-blob-type", "BlockBlob", "x-ms-meta-big", strings.Repeat("m", 9000)), "new", 400, "MetadataTooLarge")
	add("append blob with body", put, b, h("x-ms-blob-type", "AppendBlob"), "new", 400)
	add("page blob negative length", put, b, h("x-ms-blob-type", "PageBlob", "x-ms-blob-content-length", "-512"), "", 400)
	add("page blob length letters", put, b, h("x-ms-blob-type", "PageBlob", "x-ms-blob-content-length", "abc"), "", 400)
	add("page blob length unaligned", put, b, h("x-ms-blob-type", "PageBlob", "x-ms-blob-content-length", "513"), "", 400)
	add("page blob length huge", put, b, h("x-ms-blob-type", "PageBlob", "x-ms-blob-content-length", huge), "", 400)
	add("page blob missing length", put, b, h("x-ms-blob-type", "PageBlob"), "", 400)
	add("page blob negative sequence", put, b, h("x-ms-blob-type", "PageBlob", "x-ms-blob-content-length", "512", "x-ms-blob-sequence-number", "-1"), "", 400)
	add("page blob with body", put, b, h("x-ms-blob-type", "PageBlob", "x-ms-blob-content-length", "512"), page, 400)
	add("set page blob length letters", put, pg+"?comp=properties", h("x-ms-blob-content-length", "abc"), "", 400)
	add("set page blob length unaligned", put, pg+"?comp=properties", h("x-ms-blob-content-length", "100"), "", 400)
	add("sequence number bad action", put, pg+"?comp=properties", h("x-ms-sequence-number-action", "sideways", "x-ms-blob-sequence-number", "3"), "", 400)
	add("metadata set bad name", put, b+"?comp=metadata", h("x-ms-meta-a-b", "v"), "", 400, "InvalidMetadata")
	add("metadata set empty name", put, b+"?comp=metadata", h("x-ms-meta-", "v"), "", 400)
	add("container metadata bad name", put, ctr+"?restype=container&comp=metadata", h("x-ms-meta-9", "v"), "", 400, "InvalidMetadata")
	add("public access bogus", put, ctr+"?restype=container&comp=acl", h("x-ms-blob-public-access", "everyone"), "", 400, "InvalidHeaderValue")
	add("access tier bogus", put, b+"?comp=tier", h("x-ms-access-tier", "Molten"), "", 400)
	add("snapshot bogus", get, b+"?snapshot=yesterday", nil, "", 400, "InvalidQueryParameterValue")

	// Leases.
	lease := func(extra ...string) map[string]string {
		return h(append([]string{"x-ms-lease-action", "acquire"}, extra...)...)
	}
	for _, d := range []string{"5", "14", "61", "0", "-2", "abc", huge, "1.5"} {
		add("blob lease duration "+d, put, b+"?comp=lease", lease("x-ms-lease-duration", d), "", 400, "InvalidHeaderValue")
		add("container lease duration "+d, put, ctr+"?restype=container&comp=lease", lease("x-ms-lease-duration", d), "", 400, "InvalidHeaderValue")
	}
	add("lease duration missing", put, b+"?comp=lease", lease(), "", 400, "MissingRequiredHeader")
	add("lease action bogus", put, b+"?comp=lease", h("x-ms-lease-action", "borrow", "x-ms-lease-duration", "15"), "", 400, "InvalidHeaderValue")
	add("lease action missing", put, b+"?comp=lease", h("x-ms-lease-duration", "15"), "", 400, "MissingRequiredHeader")
	add("proposed lease id not a guid", put, b+"?comp=lease", lease("x-ms-lease-duration", "15", "x-ms-proposed-lease-id", "not-a-guid"), "", 400, "InvalidHeaderValue")
	add("break period 61", put, b+"?comp=lease", h("x-ms-lease-action", "break", "x-ms-lease-break-period", "61"), "", 400, "InvalidHeaderValue")
	add("break period negative", put, b+"?comp=lease", h("x-ms-lease-action", "break", "x-ms-lease-break-period", "-1"), "", 400, "InvalidHeaderValue")
	add("renew without lease id", put, b+"?comp=lease", h("x-ms-lease-action", "renew"), "", 400, "MissingRequiredHeader")
	add("change without proposed id", put, b+"?comp=lease", h("x-ms-lease-action", "change", "x-ms-lease-id", "6d3b3a5e-5a9e-4f55-9d5b-3b7d6f1e2c10"), "", 400, "MissingRequiredHeader")
	add("lease id not a guid on write", put, b, h("x-ms-blob-type", "BlockBlob", "x-ms-lease-id", "nope"), "new", 0)
	add("lease on snapshot", put, b+"?comp=lease&snapshot=2020-01-01T00:00:00.0000000Z", lease("x-ms-lease-duration", "15"), "", 400)

	// Conditions.
	cs = append(cs, bad{Name: "two If-Modified-Since values", call: call{Svc: blobSvc, Method: get, Path: b,
		Add: [][2]string{{"If-Modified-Since", "Sat, 01 Jan 2000 00:00:00 GMT"}, {"If-Modified-Since", "Sun, 02 Jan 2000 00:00:00 GMT"}}},
		Status: 400, Codes: []string{"InvalidHeaderValue"}})
	cs = append(cs, bad{Name: "two If-Unmodified-Since values on write", call: call{Svc: blobSvc, Method: put, Path: b, Body: []byte("new"),
		Header: h("x-ms-blob-type", "BlockBlob"),
		Add:    [][2]string{{"If-Unmodified-Since", "Sat, 01 Jan 2000 00:00:00 GMT"}, {"If-Unmodified-Since", "Sun, 02 Jan 2000 00:00:00 GMT"}}},
		Status: 400, Codes: []string{"InvalidHeaderValue"}})
	add("If-Match with no etag", put, b, h("x-ms-blob-type", "BlockBlob", "If-Match", ","), "new", 400, "InvalidHeaderValue")
	add("If-Match not matching", put, b, h("x-ms-blob-type", "BlockBlob", "If-Match", `"0x8D0000000000000"`), "new", 412, "ConditionNotMet")
	add("If-None-Match star on existing", put, b, h("x-ms-blob-type", "BlockBlob", "If-None-Match", "*"), "new", 409, "BlobAlreadyExists")
	add("tag condition garbage", put, b, h("x-ms-blob-type", "BlockBlob", "x-ms-if-tags", "k = = 'v"), "new", 400)

	// Query values.
	for _, v := range []string{"-1", "0", "abc", huge} {
		add("list blobs maxresults="+v, get, ctr+"?restype=container&comp=list&maxresults="+v, nil, "", 400, "OutOfRangeQueryParameterValue", "InvalidQueryParameterValue")
		add("list containers maxresults="+v, get, "?comp=list&maxresults="+v, nil, "", 400, "OutOfRangeQueryParameterValue", "InvalidQueryParameterValue")
	}
	add("timeout=abc on write", put, b+"?timeout=abc", nil, "new", 400, "MissingRequiredHeader")
	add("blob comp=unknown", get, b+"?comp=unknown", nil, "", 0)
	add("blob comp=unknown on write", put, b+"?comp=unknown", nil, "new", 0)
	add("container comp=unknown", get, ctr+"?restype=container&comp=unknown", nil, "", 0)
	add("container comp=unknown on write", put, ctr+"?restype=container&comp=unknown", nil, "x", 0)
	add("restype=bogus", get, ctr+"?restype=bogus", nil, "", 0)
	add("restype=bogus on write", put, ctr+"?restype=bogus", nil, "", 0)
	add("service comp=unknown", get, "?restype=service&comp=unknown", nil, "", 0)
	add("list include bogus", get, ctr+"?restype=container&comp=list&include=everything", nil, "", 400, "InvalidQueryParameterValue")
	add("list marker garbage", get, ctr+"?restype=container&comp=list&marker=%00%01garbage", nil, "", 400)
	add("blocklisttype bogus", get, blk+"?comp=blocklist&blocklisttype=some", nil, "", 400, "InvalidQueryParameterValue")

	// Blocks.
	long := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{'i'}, 65))
	add("blockid not base64", put, blk+"?comp=block&blockid=%21%21%21", nil, "x", 400, "InvalidQueryParameterValue", "InvalidBlockId", "InvalidBlobOrBlock")
	add("blockid too long", put, blk+"?comp=block&blockid="+strings.ReplaceAll(long, "=", "%3D"), nil, "x", 400, "InvalidQueryParameterValue", "InvalidBlockId", "InvalidBlobOrBlock")
	add("blockid missing", put, blk+"?comp=block", nil, "x", 400, "MissingRequiredQueryParameter", "InvalidQueryParameterValue")
	add("blockid empty", put, blk+"?comp=block&blockid=", nil, "x", 400)
	// Block ids are compared with the blob's uncommitted ones only.
	add("blockid different length", put, ctr+"/unc?comp=block&blockid=QkJCQkJCQkI%3D", nil, "x", 400, "InvalidBlobOrBlock", "InvalidBlockId")
	add("put block on page blob", put, pg+"?comp=block&blockid=QUFBQQ%3D%3D", nil, "x", 0)
	add("append block on block blob", put, b+"?comp=appendblock", nil, "x", 409, "InvalidBlobType")
	add("append position wrong", put, ap+"?comp=appendblock", h("x-ms-blob-condition-appendpos", "3"), "x", 412, "AppendPositionConditionNotMet")
	add("append position letters", put, ap+"?comp=appendblock", h("x-ms-blob-condition-appendpos", "abc"), "x", 400)
	add("append maxsize exceeded", put, ap+"?comp=appendblock", h("x-ms-blob-condition-maxsize", "5"), "xxxxxxxx", 412, "MaxBlobSizeConditionNotMet")
	add("append md5 mismatch", put, ap+"?comp=appendblock", h("Content-MD5", md5b64("other")), "x", 400, "Md5Mismatch")

	// Block list bodies.
	bl := blk + "?comp=blocklist"
	add("block list not xml", put, bl, nil, "this is not xml", 400, "InvalidXmlDocument")
	add("block list wrong root", put, bl, nil, "<Blocks><Latest>QUFBQQ==</Latest></Blocks>", 400, "InvalidXmlDocument")
	add("block list truncated", put, bl, nil, "<BlockList><Latest>QUFB", 400, "InvalidXmlDocument")
	add("block list names missing block", put, bl, nil, "<BlockList><Latest>WldaWg==</Latest></BlockList>", 400, "InvalidBlockList")
	add("block list committed and missing", put, bl, nil, "<BlockList><Committed>QUFBQQ==</Committed><Uncommitted>WldaWg==</Uncommitted></BlockList>", 400, "InvalidBlockList")
	add("block list id not base64", put, bl, nil, "<BlockList><Latest>!!!</Latest></BlockList>", 400)
	add("block list unknown element", put, bl, nil, "<BlockList><Newest>QUFBQQ==</Newest></BlockList>", 400)
	add("block list entity expansion", put, bl, nil, `<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "QUFBQQ=="><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">]><BlockList><Latest>&b;</Latest></BlockList>`, 400)
	add("block list 10 MB id", put, bl, nil, "<BlockList><Latest>"+strings.Repeat("A", 10<<20)+"</Latest></BlockList>", 0)
	add("block list 10 MB of entries", put, bl, nil, "<BlockList>"+strings.Repeat("<Latest>WldaWg==</Latest>", (10<<20)/25)+"</BlockList>", 0)
	add("block list 10 MB nesting", put, bl, nil, "<BlockList>"+strings.Repeat("<a>", (10<<20)/6)+strings.Repeat("</a>", (10<<20)/6)+"</BlockList>", 0)
	add("block list on page blob", put, pg+"?comp=blocklist", nil, "<BlockList><Latest>QUFBQQ==</Latest></BlockList>", 0)
	add("block list md5 mismatch", put, bl, h("Content-MD5", md5b64("other")), "<BlockList><Latest>QUFBQQ==</Latest></BlockList>", 400, "Md5Mismatch")

	// Other XML bodies.
	acl := ctr + "?restype=container&comp=acl"
	si := func(id, perm string) string {
		return "<SignedIdentifier><Id>" + id + "</Id><AccessPolicy><Start>2020-01-01T00:00:00Z</Start><Expiry>2030-01-01T00:00:00Z</Expiry><Permission>" + perm + "</Permission></AccessPolicy></SignedIdentifier>"
	}
	add("acl not xml", put, acl, nil, "{\"json\": true}", 400, "InvalidXmlDocument")
	add("acl wrong root", put, acl, nil, "<Identifiers>"+si("a", "r")+"</Identifiers>", 400, "InvalidXmlDocument")
	add("acl truncated", put, acl, nil, "<SignedIdentifiers>"+si("a", "r")[:40], 400, "InvalidXmlDocument")
	add("acl six identifiers", put, acl, nil, "<SignedIdentifiers>"+si("a", "r")+si("b", "r")+si("c", "r")+si("d", "r")+si("e", "r")+si("f", "r")+"</SignedIdentifiers>", 400, "InvalidXmlDocument")
	add("acl id too long", put, acl, nil, "<SignedIdentifiers>"+si(strings.Repeat("i", 65), "r")+"</SignedIdentifiers>", 400)
	add("acl bad date", put, acl, nil, "<SignedIdentifiers><SignedIdentifier><Id>a</Id><AccessPolicy><Start>someday</Start></AccessPolicy></SignedIdentifier></SignedIdentifiers>", 400)
	add("acl 10 MB", put, acl, nil, "<SignedIdentifiers>"+strings.Repeat("<!-- padding -->", (10<<20)/16)+"<bad", 0)
	props := "?restype=service&comp=properties"
	add("service properties not xml", put, props, nil, "nope", 400, "InvalidXmlDocument")
	add("service properties wrong root", put, props, nil, "<ServiceProperties><Logging/></ServiceProperties>", 400, "InvalidXmlDocument")
	add("service properties bad cors method", put, props, nil, "<StorageServiceProperties><Cors><CorsRule><AllowedOrigins>*</AllowedOrigins><AllowedMethods>FLY</AllowedMethods><AllowedHeaders>*</AllowedHeaders><ExposedHeaders>*</ExposedHeaders><MaxAgeInSeconds>5</MaxAgeInSeconds></CorsRule></Cors></StorageServiceProperties>", 400)
	add("service properties bad retention", put, props, nil, "<StorageServiceProperties><HourMetrics><Version>1.0</Version><Enabled>true</Enabled><IncludeAPIs>false</IncludeAPIs><RetentionPolicy><Enabled>true</Enabled><Days>-4</Days></RetentionPolicy></HourMetrics></StorageServiceProperties>", 400)
	add("service properties max age letters", put, props, nil, "<StorageServiceProperties><Cors><CorsRule><AllowedOrigins>*</AllowedOrigins><AllowedMethods>GET</AllowedMethods><AllowedHeaders>*</AllowedHeaders><ExposedHeaders>*</ExposedHeaders><MaxAgeInSeconds>soon</MaxAgeInSeconds></CorsRule></Cors></StorageServiceProperties>", 400)
	tags := b + "?comp=tags"
	add("tags not xml", put, tags, nil, "k=v", 400, "InvalidXmlDocument")
	add("tags truncated", put, tags, nil, "<Tags><TagSet><Tag><Key>k", 400, "InvalidXmlDocument")
	var eleven strings.Builder
	for i := range 11 {
		eleven.WriteString("<Tag><Key>k" + string(rune('a'+i)) + "</Key><Value>v</Value></Tag>")
	}
	add("tags eleven", put, tags, nil, "<Tags><TagSet>"+eleven.String()+"</TagSet></Tags>", 400)
	add("tag key too long", put, tags, nil, "<Tags><TagSet><Tag><Key>"+strings.Repeat("k", 129)+"</Key><Value>v</Value></Tag></TagSet></Tags>", 400)
	add("tags header bogus on put", put, b, h("x-ms-blob-type", "BlockBlob", "x-ms-tags", "%zz=1"), "new", 400)
	add("find by tags garbage", get, "?comp=blobs&where=%22k%22%20%3D%3D%3D", nil, "", 400)

	// Names.
	for _, n := range []string{"A", "ab", "a--b", "-abc", "abc-", "ab_c", strings.Repeat("c", 64), "a%20b", "%C3%A9t%C3%A9"} {
		add("container name "+n, put, n+"?restype=container", nil, "", 400, "InvalidResourceName", "OutOfRangeInput")
	}
	add("blob name 1025 chars", put, ctr+"/"+strings.Repeat("n", 1025), h("x-ms-blob-type", "BlockBlob"), "x", 400, "InvalidResourceName", "OutOfRangeInput", "InvalidUri", "KeyTooLong")
	add("blob in bad container name", put, "A/blob", h("x-ms-blob-type", "BlockBlob"), "x", 0)
	add("container that does not exist", put, "nosuchcontainer/blob", h("x-ms-blob-type", "BlockBlob"), "x", 404, "ContainerNotFound")
	add("blob that does not exist", get, ctr+"/missing", nil, "", 404, "BlobNotFound")
	add("blob that does not exist, HEAD", head, ctr+"/missing", nil, "", 404, "BlobNotFound")

	// Methods a resource does not support.
	for _, m := range []string{http.MethodPatch, post, "MERGE", "FROB"} {
		add("method "+m+" on blob", m, b, nil, "x", 0)
		add("method "+m+" on container", m, ctr+"?restype=container", nil, "x", 0)
		add("method "+m+" on service", m, "?restype=service&comp=properties", nil, "x", 0)
	}
	add("DELETE on container list", del, ctr+"?restype=container&comp=list", nil, "", 0)
	add("DELETE on block list", del, blk+"?comp=blocklist", nil, "", 0)
	add("DELETE on lease", del, b+"?comp=lease", h("x-ms-lease-action", "break"), "", 0)
	add("DELETE on acl", del, acl, nil, "", 0)
	add("DELETE on service", del, "?restype=service&comp=properties", nil, "", 0)
	add("DELETE on tags", del, tags, nil, "", 0)
	add("PUT on container list", put, ctr+"?restype=container&comp=list", nil, "", 0)
	add("PUT on account list", put, "?comp=list", nil, "", 0)
	add("POST on page list", post, pg+"?comp=pagelist", nil, "", 0)
	add("DELETE blob missing with body", del, ctr+"/missing", nil, "body", 404, "BlobNotFound")
	add("unsigned write", put, b, h("x-ms-blob-type", "BlockBlob"), "new", 0)
	cs[len(cs)-1].Unsigned = true
	add("x-ms-version garbage", put, b, h("x-ms-blob-type", "BlockBlob", "x-ms-version", "yesterday"), "new", 400, "InvalidHeaderValue")
	add("client request id too long", put, b, h("x-ms-blob-type", "BlockBlob", "x-ms-client-request-id", strings.Repeat("r", 1025)), "new", 400, "InvalidHeaderValue")
	return cs
}

// TestBlobMalformed sends every malformed Blob request and checks the
// refusal and that nothing stored changed.
func TestBlobMalformed(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		reads := blobFixture(t, tg)
		runBad(t, tg, blobCases(), reads)
	})
}

// TestBlobIgnoredHeaders: a Range header that does not parse and a
// conditional date that does not parse are ignored, as HTTP requires of
// recipients; the read returns the whole blob.
func TestBlobIgnoredHeaders(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		reads := blobFixture(t, tg)
		before := capture(t, tg, reads)
		for _, hv := range [][2]string{
			{"Range", "bytes=9-1"},
			{"Range", "bytes=abc"},
			{"Range", "lines=1-2"},
			{"Range", "bytes=99999999999999999999999-"},
			{"If-Modified-Since", "the day before yesterday"},
			{"If-Unmodified-Since", "32 Foo 2099 99:99:99 GMT"},
			{"If-Modified-Since", "Mon, 99 Jan 2000 00:00:00 GMT"},
		} {
			r := send(t, tg, call{Svc: blobSvc, Method: http.MethodGet, Path: ctr + "/b", Header: map[string]string{hv[0]: hv[1]}})
			if r.Status != http.StatusOK || string(r.Body) != original {
				t.Errorf("GET with %s: %q: %s", hv[0], hv[1], r)
			}
		}
		same(t, "ignored headers", before, capture(t, tg, reads))
	})
}

// TestBlobBodiesOnBodilessRequests: a body on a request that takes none
// does not disturb the operation or the connection it came on.
func TestBlobBodiesOnBodilessRequests(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		reads := blobFixture(t, tg)
		before := capture(t, tg, reads)
		junk := bytes.Repeat([]byte("junk "), 40000)
		for _, c := range []call{
			{Svc: blobSvc, Method: http.MethodGet, Path: ctr + "/b"},
			{Svc: blobSvc, Method: http.MethodHead, Path: ctr + "/b"},
			{Svc: blobSvc, Method: http.MethodGet, Path: ctr + "?restype=container&comp=list"},
			{Svc: blobSvc, Method: http.MethodGet, Path: ctr + "/blk?comp=blocklist"},
			{Svc: blobSvc, Method: http.MethodGet, Path: "?comp=list"},
			{Svc: blobSvc, Method: http.MethodDelete, Path: ctr + "/missing"},
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
			// The next request (likely on the same connection) still works.
			if r := send(t, tg, call{Svc: blobSvc, Method: http.MethodGet, Path: ctr + "/b"}); r.Status != 200 || string(r.Body) != original {
				t.Errorf("read after %s %s with a body: %s", c.Method, c.Path, r)
			}
		}
		same(t, "bodies on bodiless requests", before, capture(t, tg, reads))
	})
}

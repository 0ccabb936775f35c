package blob_test

import (
	"crypto/md5"
	"encoding/base64"
	"net/http"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"

	"github.com/lazuli-storage/lazuli/conformance/harness"
)

// TestSetPropertiesClearsOmitted follows the SDK's recorded
// TestBlobSetPropertiesEmptyValue: Set Blob Properties clears every
// content header it does not carry, Content-Type included (no
// Content-Type at all afterwards); a new blob without one gets
// application/octet-stream.
func TestSetPropertiesClearsOmitted(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		bb := e.cc.NewBlockBlobClient("b")
		_, err := bb.Upload(ctx, body([]byte("x")), nil)
		must(t, err)
		p, err := bb.GetProperties(ctx, nil)
		must(t, err)
		if p.ContentType == nil || *p.ContentType != "application/octet-stream" {
			t.Fatalf("default content type %v", p.ContentType)
		}
		_, err = bb.SetHTTPHeaders(ctx, blob.HTTPHeaders{BlobContentType: ptr("my_type"), BlobContentLanguage: ptr("en")}, nil)
		must(t, err)
		_, err = bb.SetHTTPHeaders(ctx, blob.HTTPHeaders{BlobCacheControl: ptr("no-cache")}, nil)
		must(t, err)
		p, err = bb.GetProperties(ctx, nil)
		must(t, err)
		if p.ContentType != nil || p.ContentLanguage != nil || p.CacheControl == nil || *p.CacheControl != "no-cache" {
			t.Fatalf("after clearing: type %v language %v cache %v", p.ContentType, p.ContentLanguage, p.CacheControl)
		}
		resp := raw(t, tg, http.MethodGet, e.name+"/b", nil, nil)
		if len(resp.Header.Values("Content-Type")) > 0 {
			t.Fatalf("GET answers Content-Type %q for a blob without one", resp.Header.Get("Content-Type"))
		}
	})
}

// TestContentMD5Rules pins the MD5 rules: Set Blob Properties stores an
// x-ms-blob-content-md5 of any length as given; on Put Blob the
// x-ms-blob-content-md5 is the stored MD5 and the body is checked against
// it, in place of a Content-MD5 sent with it; a ranged read returns the range's MD5 only when asked, and
// the whole blob's as x-ms-blob-content-md5.
func TestContentMD5Rules(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		data := []byte("0123456789abcdef")
		whole := md5.Sum(data)
		_, err := e.cc.NewBlockBlobClient("b").Upload(ctx, body(data), nil)
		must(t, err)
		odd := base64.StdEncoding.EncodeToString([]byte("not sixteen"))
		resp := raw(t, tg, http.MethodPut, e.name+"/b?comp=properties", map[string]string{"x-ms-blob-content-md5": odd}, nil)
		if resp.StatusCode != 200 {
			t.Fatalf("set properties with an 11-byte MD5: %d %s", resp.StatusCode, resp.Header.Get("x-ms-error-code"))
		}
		if got := raw(t, tg, http.MethodHead, e.name+"/b", nil, nil).Header.Get("Content-MD5"); got != odd {
			t.Fatalf("stored MD5 %q, want %q", got, odd)
		}
		// Put Blob: x-ms-blob-content-md5 is stored, and the body is
		// checked against it rather than against a Content-MD5 sent too.
		other := md5.Sum([]byte("other"))
		h := map[string]string{"x-ms-blob-type": "BlockBlob", "Content-MD5": base64.StdEncoding.EncodeToString(other[:]),
			"x-ms-blob-content-md5": base64.StdEncoding.EncodeToString(whole[:])}
		if r := raw(t, tg, http.MethodPut, e.name+"/c", h, data); r.StatusCode != 201 {
			t.Fatalf("put blob: %d %s", r.StatusCode, r.Header.Get("x-ms-error-code"))
		}
		if got := raw(t, tg, http.MethodHead, e.name+"/c", nil, nil).Header.Get("Content-MD5"); got != base64.StdEncoding.EncodeToString(whole[:]) {
			t.Fatalf("x-ms-blob-content-md5 did not take precedence: %q", got)
		}
		h["Content-MD5"], h["x-ms-blob-content-md5"] = base64.StdEncoding.EncodeToString(whole[:]), base64.StdEncoding.EncodeToString(other[:])
		expectStatus(t, raw(t, tg, http.MethodPut, e.name+"/c", h, data), 400, "Md5Mismatch")
		// Ranged reads.
		_, err = e.cc.NewBlockBlobClient("r").Upload(ctx, body(data), nil)
		must(t, err)
		resp = raw(t, tg, http.MethodGet, e.name+"/r", map[string]string{"x-ms-range": "bytes=2-5"}, nil)
		if resp.StatusCode != 206 || resp.Header.Get("Content-MD5") != "" || resp.Header.Get("x-ms-blob-content-md5") != base64.StdEncoding.EncodeToString(whole[:]) {
			t.Fatalf("ranged read: %d md5 %q blob md5 %q", resp.StatusCode, resp.Header.Get("Content-MD5"), resp.Header.Get("x-ms-blob-content-md5"))
		}
		part := md5.Sum(data[2:6])
		resp = raw(t, tg, http.MethodGet, e.name+"/r", map[string]string{"x-ms-range": "bytes=2-5", "x-ms-range-get-content-md5": "true"}, nil)
		if resp.Header.Get("Content-MD5") != base64.StdEncoding.EncodeToString(part[:]) {
			t.Fatalf("range MD5 %q", resp.Header.Get("Content-MD5"))
		}
	})
}

// TestBlockAndTagRules pins: Put Block with an id of another (decoded)
// length than the uncommitted ones is 400 InvalidBlobOrBlock, committed
// ones do not count; Get Block List honours
// x-ms-if-tags (a condition on a tag the blob lacks is false, even <>); Set Blob Tags on a leased blob needs the lease id (Get
// Blob Tags does not); a backslash in a blob name is a slash.
func TestBlockAndTagRules(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		bb := e.cc.NewBlockBlobClient("blocks")
		_, err := bb.StageBlock(ctx, base64.StdEncoding.EncodeToString([]byte("aaaa")), body([]byte("x")), nil)
		must(t, err)
		_, err = bb.StageBlock(ctx, base64.StdEncoding.EncodeToString([]byte("bbbbbbbb")), body([]byte("x")), nil)
		mustCode(t, err, 400, "InvalidBlobOrBlock")
		// Lengths are those of the decoded ids: "1" and "123" both encode
		// to four characters, yet differ.
		ids := e.cc.NewBlockBlobClient("ids")
		_, err = ids.StageBlock(ctx, base64.StdEncoding.EncodeToString([]byte("1")), body([]byte("x")), nil)
		must(t, err)
		_, err = ids.StageBlock(ctx, base64.StdEncoding.EncodeToString([]byte("123")), body([]byte("x")), nil)
		mustCode(t, err, 400, "InvalidBlobOrBlock")
		_, err = ids.CommitBlockList(ctx, []string{base64.StdEncoding.EncodeToString([]byte("1"))}, nil)
		must(t, err)
		// Once committed, the next uncommitted ids may have another length.
		_, err = ids.StageBlock(ctx, base64.StdEncoding.EncodeToString([]byte("123")), body([]byte("x")), nil)
		must(t, err)

		_, err = bb.CommitBlockList(ctx, []string{base64.StdEncoding.EncodeToString([]byte("aaaa"))},
			&blockblob.CommitBlockListOptions{Tags: map[string]string{"team": "blue"}})
		must(t, err)
		_, err = bb.GetBlockList(ctx, blockblob.BlockListTypeAll, &blockblob.GetBlockListOptions{
			AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfTags: ptr(`"team" = 'red'`)}}})
		mustCode(t, err, 412, "ConditionNotMet")
		_, err = bb.GetBlockList(ctx, blockblob.BlockListTypeAll, &blockblob.GetBlockListOptions{
			AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfTags: ptr(`"team" = 'blue'`)}}})
		must(t, err)
		// A tag the blob does not have compares false, <> included.
		_, err = bb.GetBlockList(ctx, blockblob.BlockListTypeAll, &blockblob.GetBlockListOptions{
			AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfTags: ptr(`"owner" <> 'x'`)}}})
		mustCode(t, err, 412, "ConditionNotMet")

		lc, err := lease.NewBlobClient(bb, nil)
		must(t, err)
		_, err = lc.AcquireLease(ctx, 60, nil)
		must(t, err)
		_, err = bb.SetTags(ctx, map[string]string{"team": "green"}, nil)
		mustCode(t, err, 412, "LeaseIdMissing")
		_, err = bb.SetTags(ctx, map[string]string{"team": "green"}, &blob.SetTagsOptions{AccessConditions: &blob.AccessConditions{
			LeaseAccessConditions: &blob.LeaseAccessConditions{LeaseID: lc.LeaseID()}}})
		must(t, err)
		_, err = bb.GetTags(ctx, nil)
		must(t, err)
		_, err = bb.GetTags(ctx, &blob.GetTagsOptions{BlobAccessConditions: &blob.AccessConditions{
			LeaseAccessConditions: &blob.LeaseAccessConditions{LeaseID: ptr("6d3b2c2e-6a7b-4d2c-9d2e-2b2c6a7b4d2c")}}})
		mustCode(t, err, 412, "LeaseIdMismatchWithBlobOperation")

		// A backslash names the same blob as a slash.
		resp := raw(t, tg, http.MethodPut, e.name+`/dir%5Cfile.txt`, map[string]string{"x-ms-blob-type": "BlockBlob"}, []byte("bs"))
		if resp.StatusCode != 201 {
			t.Fatalf("put with backslash: %d", resp.StatusCode)
		}
		d, err := e.cc.NewBlobClient("dir/file.txt").DownloadStream(ctx, nil)
		must(t, err)
		if string(readAll(t, d.Body)) != "bs" {
			t.Fatal("backslash blob content")
		}
	})
}

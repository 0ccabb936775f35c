package blob_test

import (
	"bytes"
	"crypto/md5"
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"

	"github.com/lazuli-storage/lazuli/conformance/harness"
)

// TestCopyToRehydrate pins copying an archived blob: Copy Blob with
// x-ms-access-tier naming an online tier rehydrates the copy (lazuli
// rehydrates at once, so the copy succeeds at once and reads back); without
// a tier, or asking for Archive, it is 409 BlobArchived, as is Copy Blob
// From URL, which cannot read an archived source.
func TestCopyToRehydrate(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		src := e.cc.NewBlockBlobClient("cold")
		_, err := src.Upload(ctx, body([]byte("archived bytes")), nil)
		must(t, err)
		_, err = src.SetTier(ctx, blob.AccessTierArchive, nil)
		must(t, err)

		_, err = e.cc.NewBlobClient("none").StartCopyFromURL(ctx, src.URL(), nil)
		mustCode(t, err, 409, "BlobArchived")
		_, err = e.cc.NewBlobClient("still").StartCopyFromURL(ctx, src.URL(), &blob.StartCopyFromURLOptions{Tier: ptr(blob.AccessTierArchive)})
		mustCode(t, err, 409, "BlobArchived")

		dst := e.cc.NewBlobClient("warm")
		r, err := dst.StartCopyFromURL(ctx, src.URL(), &blob.StartCopyFromURLOptions{Tier: ptr(blob.AccessTierHot)})
		must(t, err)
		if *r.CopyStatus != blob.CopyStatusTypeSuccess {
			t.Fatalf("copy status %s", *r.CopyStatus)
		}
		p, err := dst.GetProperties(ctx, nil)
		must(t, err)
		if *p.AccessTier != string(blob.AccessTierHot) {
			t.Fatalf("tier %s", *p.AccessTier)
		}
		d, err := dst.DownloadStream(ctx, nil)
		must(t, err)
		if got := string(readAll(t, d.Body)); got != "archived bytes" {
			t.Fatalf("content %q", got)
		}
		// The source stays archived.
		sp, err := src.GetProperties(ctx, nil)
		must(t, err)
		if *sp.AccessTier != string(blob.AccessTierArchive) {
			t.Fatalf("source tier %s", *sp.AccessTier)
		}

		cred, err := azblob.NewSharedKeyCredential(tg.Account, tg.Key)
		must(t, err)
		qp, err := sas.BlobSignatureValues{Protocol: sas.ProtocolHTTPSandHTTP, ExpiryTime: time.Now().Add(time.Hour).UTC(),
			Permissions: (&sas.BlobPermissions{Read: true}).String(), ContainerName: e.name, BlobName: "cold"}.SignWithSharedKey(cred)
		must(t, err)
		_, err = e.cc.NewBlobClient("sync").CopyFromURL(ctx, src.URL()+"?"+qp.Encode(), &blob.CopyFromURLOptions{Tier: ptr(blob.AccessTierHot)})
		mustCode(t, err, 409, "BlobArchived")
	})
}

// TestCopyFromURLContentMD5 pins that Copy Blob From URL answers with
// Content-MD5 only when the request sent x-ms-source-content-md5, and
// then with the content's MD5.
func TestCopyFromURLContentMD5(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		data := []byte("copied with or without a checksum")
		sum := md5.Sum(data)
		src := e.cc.NewBlockBlobClient("src")
		_, err := src.Upload(ctx, body(data), nil)
		must(t, err)
		cred, err := azblob.NewSharedKeyCredential(tg.Account, tg.Key)
		must(t, err)
		qp, err := sas.BlobSignatureValues{Protocol: sas.ProtocolHTTPSandHTTP, ExpiryTime: time.Now().Add(time.Hour).UTC(),
			Permissions: (&sas.BlobPermissions{Read: true}).String(), ContainerName: e.name, BlobName: "src"}.SignWithSharedKey(cred)
		must(t, err)
		srcURL := src.URL() + "?" + qp.Encode()
		r, err := e.cc.NewBlobClient("plain").CopyFromURL(ctx, srcURL, nil)
		must(t, err)
		if r.ContentMD5 != nil {
			t.Fatalf("Content-MD5 without x-ms-source-content-md5: %x", r.ContentMD5)
		}
		r, err = e.cc.NewBlobClient("checked").CopyFromURL(ctx, srcURL, &blob.CopyFromURLOptions{SourceContentMD5: sum[:]})
		must(t, err)
		if !bytes.Equal(r.ContentMD5, sum[:]) {
			t.Fatalf("Content-MD5 %x, want %x", r.ContentMD5, sum)
		}
	})
}

// TestSetTagsOnSnapshot pins Set Blob Tags with a snapshot (version
// 2020-08-04 and later): the snapshot's tags change, the base blob's do
// not, neither ETag nor Last-Modified moves, and Find Blobs by Tags still
// finds only base blobs. Earlier versions refuse a snapshot with 400
// InvalidOperation (settled: those versions define no snapshot there).
func TestSetTagsOnSnapshot(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		bb := e.cc.NewBlockBlobClient("tagged")
		_, err := bb.Upload(ctx, body([]byte("x")), nil)
		must(t, err)
		_, err = bb.SetTags(ctx, map[string]string{"stage": "base"}, nil)
		must(t, err)
		snap, err := bb.CreateSnapshot(ctx, nil)
		must(t, err)
		sc, err := bb.WithSnapshot(*snap.Snapshot)
		must(t, err)
		before, err := sc.GetProperties(ctx, nil)
		must(t, err)
		_, err = sc.SetTags(ctx, map[string]string{"stage": "snap", "extra": "1"}, nil)
		must(t, err)
		gt, err := sc.GetTags(ctx, nil)
		must(t, err)
		if len(gt.BlobTagSet) != 2 {
			t.Fatalf("snapshot tags %d", len(gt.BlobTagSet))
		}
		bt, err := bb.GetTags(ctx, nil)
		must(t, err)
		if len(bt.BlobTagSet) != 1 || *bt.BlobTagSet[0].Value != "base" {
			t.Fatalf("base tags changed: %v", bt.BlobTagSet)
		}
		after, err := sc.GetProperties(ctx, nil)
		must(t, err)
		if *after.ETag != *before.ETag || !after.LastModified.Equal(*before.LastModified) || *after.TagCount != 2 {
			t.Fatalf("snapshot properties moved: %v %v tags %v", *before.ETag, *after.ETag, after.TagCount)
		}
		if r := raw(t, tg, http.MethodGet, e.name+"?restype=container&comp=blobs&where=stage%3D%27snap%27", nil, nil); r.StatusCode != 200 ||
			bytes.Contains(readAll(t, r.Body), []byte("<Name>tagged</Name>")) {
			t.Fatal("Find Blobs by Tags found a snapshot's tags")
		}
		resp := raw(t, tg, http.MethodPut, e.name+"/tagged?comp=tags&snapshot="+*snap.Snapshot,
			map[string]string{"x-ms-version": "2020-06-12"}, []byte(`<Tags><TagSet><Tag><Key>a</Key><Value>b</Value></Tag></TagSet></Tags>`))
		expectStatus(t, resp, 400, "InvalidOperation")
	})
}

package blob_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/appendblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/lazuli-storage/lazuli/conformance/harness"
)

// TestAppendBlobSeal follows the SDK's recorded seal tests: Seal makes an
// append blob read-only (409 BlobIsSealed on Append Block), shows in
// properties, downloads and listings, keeps ETag and Last-Modified, is
// idempotent, honours access conditions, and is carried by snapshots and
// copies (x-ms-seal-blob overriding the source's state).
func TestAppendBlobSeal(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		ab := e.cc.NewAppendBlobClient("log")
		_, err := ab.Create(ctx, nil)
		must(t, err)
		ar, err := ab.AppendBlock(ctx, body([]byte("line\n")), nil)
		must(t, err)
		// A condition that fails leaves the blob unsealed.
		_, err = ab.Seal(ctx, &appendblob.SealOptions{AccessConditions: &blob.AccessConditions{
			ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfNoneMatch: ar.ETag}}})
		mustCode(t, err, 412, "ConditionNotMet")
		_, err = ab.Seal(ctx, &appendblob.SealOptions{AppendPositionAccessConditions: &appendblob.AppendPositionAccessConditions{AppendPosition: ptr(int64(1))}})
		mustCode(t, err, 412, "AppendPositionConditionNotMet")
		props, err := ab.GetProperties(ctx, nil)
		must(t, err)
		if props.IsSealed != nil {
			t.Fatalf("unsealed blob reports IsSealed=%v", *props.IsSealed)
		}
		sr, err := ab.Seal(ctx, &appendblob.SealOptions{AccessConditions: &blob.AccessConditions{
			ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: ar.ETag}}})
		must(t, err)
		if sr.IsSealed == nil || !*sr.IsSealed || *sr.ETag != *ar.ETag {
			t.Fatalf("seal response sealed=%v etag %v (was %v)", sr.IsSealed, *sr.ETag, *ar.ETag)
		}
		_, err = ab.Seal(ctx, nil)
		must(t, err)
		_, err = ab.AppendBlock(ctx, body([]byte("more\n")), nil)
		mustCode(t, err, 409, "BlobIsSealed")
		props, err = ab.GetProperties(ctx, nil)
		must(t, err)
		if props.IsSealed == nil || !*props.IsSealed || *props.ContentLength != 5 {
			t.Fatalf("properties after seal: sealed=%v length %d", props.IsSealed, *props.ContentLength)
		}
		dl, err := ab.DownloadStream(ctx, nil)
		must(t, err)
		dl.Body.Close()
		if dl.IsSealed == nil || !*dl.IsSealed {
			t.Fatal("download does not report the seal")
		}
		pager := e.cc.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{})
		page, err := pager.NextPage(ctx)
		must(t, err)
		if len(page.Segment.BlobItems) != 1 || page.Segment.BlobItems[0].Properties.IsSealed == nil || !*page.Segment.BlobItems[0].Properties.IsSealed {
			t.Fatalf("listing does not report the seal")
		}
		// Snapshots keep the seal.
		snap, err := ab.CreateSnapshot(ctx, nil)
		must(t, err)
		sc, err := ab.WithSnapshot(*snap.Snapshot)
		must(t, err)
		sp, err := sc.GetProperties(ctx, nil)
		must(t, err)
		if sp.IsSealed == nil || !*sp.IsSealed {
			t.Fatal("snapshot lost the seal")
		}
		// Copies keep the seal unless x-ms-seal-blob says otherwise.
		for _, c := range []struct {
			name string
			seal *bool
			want bool
		}{{"copy-keep", nil, true}, {"copy-seal", ptr(true), true}, {"copy-unseal", ptr(false), false}} {
			dst := e.cc.NewAppendBlobClient(c.name)
			_, err := dst.StartCopyFromURL(ctx, ab.URL(), &blob.StartCopyFromURLOptions{SealBlob: c.seal})
			must(t, err)
			p, err := dst.GetProperties(ctx, nil)
			must(t, err)
			if got := p.IsSealed != nil && *p.IsSealed; got != c.want {
				t.Fatalf("%s: sealed=%v", c.name, got)
			}
			_, err = dst.AppendBlock(ctx, body([]byte("x")), nil)
			if c.want {
				mustCode(t, err, 409, "BlobIsSealed")
			} else {
				must(t, err)
			}
		}
		// An unsealed source copied with x-ms-seal-blob: true is sealed.
		open := e.cc.NewAppendBlobClient("open")
		_, err = open.Create(ctx, nil)
		must(t, err)
		dst := e.cc.NewAppendBlobClient("open-copy")
		_, err = dst.StartCopyFromURL(ctx, open.URL(), &blob.StartCopyFromURLOptions{SealBlob: ptr(true)})
		must(t, err)
		p, err := dst.GetProperties(ctx, nil)
		must(t, err)
		if p.IsSealed == nil || !*p.IsSealed {
			t.Fatal("x-ms-seal-blob: true did not seal the copy")
		}
		// Wrong blob type and missing blob.
		_, err = e.cc.NewBlockBlobClient("block").Upload(ctx, body([]byte("x")), nil)
		must(t, err)
		_, err = e.cc.NewAppendBlobClient("block").Seal(ctx, nil)
		mustCode(t, err, 409, "InvalidBlobType")
		_, err = e.cc.NewAppendBlobClient("missing").Seal(ctx, nil)
		mustCode(t, err, 404, "BlobNotFound")
		// The wire: 200 with x-ms-blob-sealed.
		resp := raw(t, tg, http.MethodPut, e.name+"/log?comp=seal", nil, nil)
		if resp.StatusCode != 200 || resp.Header.Get("x-ms-blob-sealed") != "true" {
			t.Fatalf("seal on the wire: %d %v", resp.StatusCode, resp.Header)
		}
		resp = raw(t, tg, http.MethodGet, e.name+"?restype=container&comp=list", nil, nil)
		if b := string(readAll(t, resp.Body)); !strings.Contains(b, "<Sealed>true</Sealed>") {
			t.Fatalf("listing XML without Sealed: %s", b)
		}
	})
}

package blob_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/appendblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/pageblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"

	"github.com/lazuli-storage/lazuli/conformance/harness"
)

// TestCopySourceSASIsChecked pins that a SAS in a copy source's URL is
// checked even when the request itself is signed with the account key: a
// source SAS that does not grant read (here write only) makes Copy Blob,
// Copy Blob From URL, Put Blob From URL, Put Block From URL, Append Block
// From URL and Put Page From URL fail with 403 CannotVerifyCopySource,
// and nothing is written. The same source with a read SAS copies; Copy
// Blob (asynchronous) from a same-account source without any SAS is
// authorized by the request's Shared Key, as Azure documents.
func TestCopySourceSASIsChecked(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		data := bytes.Repeat([]byte("s"), 512)
		src := e.cc.NewBlockBlobClient("src")
		_, err := src.Upload(ctx, body(data), nil)
		must(t, err)
		cred, err := azblob.NewSharedKeyCredential(tg.Account, tg.Key)
		must(t, err)
		sasURL := func(p sas.BlobPermissions) string {
			qp, err := sas.BlobSignatureValues{Protocol: sas.ProtocolHTTPSandHTTP, ExpiryTime: time.Now().Add(time.Hour).UTC(),
				Permissions: p.String(), ContainerName: e.name, BlobName: "src"}.SignWithSharedKey(cred)
			must(t, err)
			return src.URL() + "?" + qp.Encode()
		}
		noRead := sasURL(sas.BlobPermissions{Write: true})
		withRead := sasURL(sas.BlobPermissions{Read: true})

		_, err = e.cc.NewBlobClient("async").StartCopyFromURL(ctx, noRead, nil)
		mustCode(t, err, 403, "CannotVerifyCopySource")
		_, err = e.cc.NewBlobClient("sync").CopyFromURL(ctx, noRead, nil)
		mustCode(t, err, 403, "CannotVerifyCopySource")
		_, err = e.cc.NewBlockBlobClient("fromurl").UploadBlobFromURL(ctx, noRead, nil)
		mustCode(t, err, 403, "CannotVerifyCopySource")
		_, err = e.cc.NewBlockBlobClient("block").StageBlockFromURL(ctx, "YmxvY2sx", noRead, nil)
		mustCode(t, err, 403, "CannotVerifyCopySource")
		ab := e.cc.NewAppendBlobClient("append")
		_, err = ab.Create(ctx, nil)
		must(t, err)
		_, err = ab.AppendBlockFromURL(ctx, noRead, nil)
		mustCode(t, err, 403, "CannotVerifyCopySource")
		pb := e.cc.NewPageBlobClient("page")
		_, err = pb.Create(ctx, 512, nil)
		must(t, err)
		_, err = pb.UploadPagesFromURL(ctx, noRead, 0, 0, 512, nil)
		mustCode(t, err, 403, "CannotVerifyCopySource")
		for _, n := range []string{"async", "sync", "fromurl"} {
			_, err := e.cc.NewBlobClient(n).GetProperties(ctx, nil)
			mustCode(t, err, 404, "BlobNotFound")
		}
		bl, err := e.cc.NewBlockBlobClient("block").GetBlockList(ctx, blockblob.BlockListTypeAll, nil)
		if err == nil && len(bl.UncommittedBlocks) != 0 {
			t.Fatalf("block staged: %d", len(bl.UncommittedBlocks))
		}
		if p, err := ab.GetProperties(ctx, nil); err != nil || *p.ContentLength != 0 {
			t.Fatalf("append blob after refused append: %v %v", err, p.ContentLength)
		}
		if r, err := pb.NewGetPageRangesPager(nil).NextPage(ctx); err != nil || len(r.PageRange) != 0 {
			t.Fatalf("page blob after refused put page: %v", err)
		}

		// With read permission, every one of them copies.
		_, err = e.cc.NewBlobClient("async").StartCopyFromURL(ctx, withRead, nil)
		must(t, err)
		_, err = e.cc.NewBlobClient("sync").CopyFromURL(ctx, withRead, nil)
		must(t, err)
		_, err = e.cc.NewBlockBlobClient("fromurl").UploadBlobFromURL(ctx, withRead, nil)
		must(t, err)
		_, err = e.cc.NewBlockBlobClient("block").StageBlockFromURL(ctx, "YmxvY2sx", withRead, nil)
		must(t, err)
		_, err = ab.AppendBlockFromURL(ctx, withRead, &appendblob.AppendBlockFromURLOptions{})
		must(t, err)
		_, err = pb.UploadPagesFromURL(ctx, withRead, 0, 0, 512, &pageblob.UploadPagesFromURLOptions{})
		must(t, err)

		// Copy Blob from a same-account source without a SAS: the
		// request's Shared Key authorizes the source.
		_, err = e.cc.NewBlobClient("plain").StartCopyFromURL(ctx, src.URL(), &blob.StartCopyFromURLOptions{})
		must(t, err)
	})
}

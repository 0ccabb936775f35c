package blob_test

import (
	"crypto/md5"
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/appendblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/pageblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"

	"github.com/lazuli-storage/lazuli/conformance/harness"
	"github.com/lazuli-storage/lazuli/internal/content"
)

func readSAS(t *testing.T, b *blob.Client) string {
	t.Helper()
	u, err := b.GetSASURL(sas.BlobPermissions{Read: true}, time.Now().Add(time.Hour), nil)
	must(t, err)
	return u
}

// Destination conditions of Copy Blob and Put Blob From URL answer 412
// ConditionNotMet (the SDK's recorded tests against Azure).
func TestCopyDestinationConditionNotMet(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		src := e.cc.NewBlockBlobClient("src")
		_, err := src.Upload(ctx, body([]byte("data")), nil)
		must(t, err)
		dst := e.cc.NewBlockBlobClient("dst")
		_, err = dst.Upload(ctx, body([]byte("old")), nil)
		must(t, err)
		later := time.Now().Add(10 * time.Second)
		ims := &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfModifiedSince: &later}}
		_, err = dst.StartCopyFromURL(ctx, src.URL(), &blob.StartCopyFromURLOptions{AccessConditions: ims})
		mustCode(t, err, 412, "ConditionNotMet")
		_, err = dst.StartCopyFromURL(ctx, src.URL(), &blob.StartCopyFromURLOptions{AccessConditions: ifMatch(`"0x1"`)})
		mustCode(t, err, 412, "ConditionNotMet")
		_, err = dst.UploadBlobFromURL(ctx, readSAS(t, src.BlobClient()), &blockblob.UploadBlobFromURLOptions{AccessConditions: ims})
		mustCode(t, err, 412, "ConditionNotMet")
		_, err = dst.CopyFromURL(ctx, readSAS(t, src.BlobClient()), &blob.CopyFromURLOptions{BlobAccessConditions: ims})
		mustCode(t, err, 412, "ConditionNotMet")
	})
}

// A From-URL operation reads its source as a GET would: an unmet source
// If-None-Match (or If-Modified-Since) is 304 CannotVerifyCopySource, an
// unmet source If-Match 412 SourceConditionNotMet. Copy Blob (asynchronous)
// answers SourceConditionNotMet for both.
func TestFromURLSourceNotModified(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		src := e.cc.NewBlockBlobClient("src")
		up, err := src.Upload(ctx, body([]byte("data")), nil)
		must(t, err)
		dst := e.cc.NewBlockBlobClient("dst")
		inm := &blob.SourceModifiedAccessConditions{SourceIfNoneMatch: up.ETag}
		_, err = dst.UploadBlobFromURL(ctx, readSAS(t, src.BlobClient()), &blockblob.UploadBlobFromURLOptions{SourceModifiedAccessConditions: inm})
		mustCode(t, err, 304, "CannotVerifyCopySource")
		later := time.Now().Add(time.Minute)
		_, err = dst.StageBlockFromURL(ctx, blockID(1), readSAS(t, src.BlobClient()), &blockblob.StageBlockFromURLOptions{
			SourceModifiedAccessConditions: &blob.SourceModifiedAccessConditions{SourceIfModifiedSince: &later}})
		mustCode(t, err, 304, "CannotVerifyCopySource")
		_, err = dst.UploadBlobFromURL(ctx, readSAS(t, src.BlobClient()), &blockblob.UploadBlobFromURLOptions{
			SourceModifiedAccessConditions: &blob.SourceModifiedAccessConditions{SourceIfMatch: ptr(azcoreETag(`"0x1"`))}})
		mustCode(t, err, 412, "SourceConditionNotMet")
		_, err = dst.StartCopyFromURL(ctx, src.URL(), &blob.StartCopyFromURLOptions{SourceModifiedAccessConditions: inm})
		mustCode(t, err, 412, "SourceConditionNotMet")
	})
}

// The From-URL operations need their source authorized even inside the
// account: a Shared Key request with a bare same-account source URL is
// CannotVerifyCopySource (404, what an anonymous read of a private blob
// answers), and so is a bogus x-ms-copy-source-authorization token.
// Asynchronous Copy Blob keeps using the request's own Shared Key.
func TestFromURLSameAccountSourceNeedsAuthorization(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		src := e.cc.NewBlockBlobClient("src")
		_, err := src.Upload(ctx, body(make([]byte, 512)), nil)
		must(t, err)
		bare := src.URL()
		_, err = e.cc.NewBlockBlobClient("d1").UploadBlobFromURL(ctx, bare, nil)
		mustCode(t, err, 404, "CannotVerifyCopySource")
		_, err = e.cc.NewBlobClient("d2").CopyFromURL(ctx, bare, nil)
		mustCode(t, err, 404, "CannotVerifyCopySource")
		_, err = e.cc.NewBlockBlobClient("d3").StageBlockFromURL(ctx, blockID(1), bare, nil)
		mustCode(t, err, 404, "CannotVerifyCopySource")
		ab := e.cc.NewAppendBlobClient("d4")
		_, err = ab.Create(ctx, nil)
		must(t, err)
		_, err = ab.AppendBlockFromURL(ctx, bare, nil)
		mustCode(t, err, 404, "CannotVerifyCopySource")
		pb := e.cc.NewPageBlobClient("d5")
		_, err = pb.Create(ctx, 512, nil)
		must(t, err)
		_, err = pb.UploadPagesFromURL(ctx, bare, 0, 0, 512, nil)
		mustCode(t, err, 404, "CannotVerifyCopySource")
		_, err = e.cc.NewBlockBlobClient("d1").UploadBlobFromURL(ctx, bare, &blockblob.UploadBlobFromURLOptions{CopySourceAuthorization: ptr("Bearer faketoken")})
		if !isCode(err, 401, "CannotVerifyCopySource") && !isCode(err, 403, "CannotVerifyCopySource") {
			t.Fatalf("bogus source token: %v", err)
		}
		_, err = ab.AppendBlockFromURL(ctx, bare, &appendblob.AppendBlockFromURLOptions{CopySourceAuthorization: ptr("Bearer faketoken")})
		if !isCode(err, 401, "CannotVerifyCopySource") && !isCode(err, 403, "CannotVerifyCopySource") {
			t.Fatalf("bogus source token: %v", err)
		}
		_, err = e.cc.NewBlobClient("d6").StartCopyFromURL(ctx, bare, nil)
		must(t, err)
	})
}

// x-ms-source-content-md5 / -crc64 are checked against the source bytes
// (400 Md5Mismatch / Crc64Mismatch) and answered as Content-MD5 or
// x-ms-content-crc64 by Put Blob, Put Block, Append Block and Put Page
// From URL.
func TestFromURLSourceChecksums(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		data := make([]byte, 1024)
		for i := range data {
			data[i] = byte(i * 7)
		}
		src := e.cc.NewBlockBlobClient("src")
		_, err := src.Upload(ctx, body(data), nil)
		must(t, err)
		u := readSAS(t, src.BlobClient())
		sum := md5.Sum(data)
		half := md5.Sum(data[:512])
		crc := content.CRC64Bytes(content.CRC64(data))
		bad := make([]byte, 16)
		badCRC := make([]byte, 8)

		pr, err := e.cc.NewBlockBlobClient("pb").UploadBlobFromURL(ctx, u, &blockblob.UploadBlobFromURLOptions{SourceContentMD5: sum[:]})
		must(t, err)
		if string(pr.ContentMD5) != string(sum[:]) {
			t.Fatalf("put blob from url md5 %x", pr.ContentMD5)
		}
		_, err = e.cc.NewBlockBlobClient("pb").UploadBlobFromURL(ctx, u, &blockblob.UploadBlobFromURLOptions{SourceContentMD5: bad})
		mustCode(t, err, 400, "Md5Mismatch")

		bb := e.cc.NewBlockBlobClient("blk")
		sr, err := bb.StageBlockFromURL(ctx, blockID(1), u, &blockblob.StageBlockFromURLOptions{SourceContentValidation: blob.SourceContentValidationTypeMD5(sum[:])})
		must(t, err)
		if string(sr.ContentMD5) != string(sum[:]) {
			t.Fatalf("stage block from url md5 %x", sr.ContentMD5)
		}
		sr, err = bb.StageBlockFromURL(ctx, blockID(2), u, &blockblob.StageBlockFromURLOptions{SourceContentValidation: blob.SourceContentValidationTypeCRC64(crc)})
		must(t, err)
		if string(sr.ContentCRC64) != string(crc) {
			t.Fatalf("stage block from url crc %x", sr.ContentCRC64)
		}
		_, err = bb.StageBlockFromURL(ctx, blockID(3), u, &blockblob.StageBlockFromURLOptions{SourceContentValidation: blob.SourceContentValidationTypeMD5(bad)})
		mustCode(t, err, 400, "Md5Mismatch")
		_, err = bb.StageBlockFromURL(ctx, blockID(3), u, &blockblob.StageBlockFromURLOptions{SourceContentValidation: blob.SourceContentValidationTypeCRC64(badCRC)})
		mustCode(t, err, 400, "Crc64Mismatch")

		ab := e.cc.NewAppendBlobClient("app")
		_, err = ab.Create(ctx, nil)
		must(t, err)
		ar, err := ab.AppendBlockFromURL(ctx, u, &appendblob.AppendBlockFromURLOptions{Range: blob.HTTPRange{Count: 512},
			SourceContentValidation: blob.SourceContentValidationTypeMD5(half[:])})
		must(t, err)
		if string(ar.ContentMD5) != string(half[:]) {
			t.Fatalf("append block from url md5 %x", ar.ContentMD5)
		}
		_, err = ab.AppendBlockFromURL(ctx, u, &appendblob.AppendBlockFromURLOptions{SourceContentValidation: blob.SourceContentValidationTypeCRC64(badCRC)})
		mustCode(t, err, 400, "Crc64Mismatch")

		pb := e.cc.NewPageBlobClient("page")
		_, err = pb.Create(ctx, 1024, nil)
		must(t, err)
		ur, err := pb.UploadPagesFromURL(ctx, u, 0, 0, 1024, &pageblob.UploadPagesFromURLOptions{SourceContentValidation: blob.SourceContentValidationTypeCRC64(crc)})
		must(t, err)
		if string(ur.ContentCRC64) != string(crc) {
			t.Fatalf("put page from url crc %x", ur.ContentCRC64)
		}
		_, err = pb.UploadPagesFromURL(ctx, u, 0, 0, 1024, &pageblob.UploadPagesFromURLOptions{SourceContentValidation: blob.SourceContentValidationTypeMD5(bad)})
		mustCode(t, err, 400, "Md5Mismatch")
	})
}

// Get and Set Blob Tags take the blob's conditions as x-ms-blob-if-*:
// If-Match, If-None-Match, If-Modified-Since and If-Unmodified-Since.
func TestTagsWithBlobConditions(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		bb := e.cc.NewBlockBlobClient("b")
		up, err := bb.Upload(ctx, body([]byte("x")), nil)
		must(t, err)
		tags := map[string]string{"env": "test"}
		set := func(c blob.BlobModifiedAccessConditions) error {
			_, err := bb.SetTags(ctx, tags, &blob.SetTagsOptions{BlobModifiedAccessConditions: &c})
			return err
		}
		past := up.LastModified.Add(-time.Hour)
		must(t, set(blob.BlobModifiedAccessConditions{IfMatch: up.ETag}))
		mustCode(t, set(blob.BlobModifiedAccessConditions{IfNoneMatch: up.ETag}), 412, "ConditionNotMet")
		must(t, set(blob.BlobModifiedAccessConditions{IfModifiedSince: &past}))
		mustCode(t, set(blob.BlobModifiedAccessConditions{IfUnmodifiedSince: &past}), 412, "ConditionNotMet")
		_, err = bb.GetTags(ctx, &blob.GetTagsOptions{BlobAccessConditions: ifMatch(`"0x1"`)})
		mustCode(t, err, 412, "ConditionNotMet")
		resp := raw(t, tg, http.MethodGet, e.name+"/b?comp=tags", map[string]string{"x-ms-blob-if-match": string(*up.ETag)}, nil)
		if resp.StatusCode != 200 {
			t.Fatalf("get tags if-match: %d", resp.StatusCode)
		}
	})
}

package blob_test

import (
	"bytes"
	"crypto/md5"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"

	"github.com/lazuli-storage/lazuli/conformance/harness"
)

// TestPutBlobChecksBlobContentMD5 pins how Put Blob checks its body when
// it carries x-ms-blob-content-md5 (the MD5 to store): the body is
// verified against that value, which wins over a Content-MD5 sent with
// it; a mismatch is 400 Md5Mismatch and writes nothing.
func TestPutBlobChecksBlobContentMD5(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		data := []byte("checked against the stored MD5")
		good := md5.Sum(data)
		bad := md5.Sum([]byte("something else"))
		up := func(name string, stored, transport []byte) error {
			o := &blockblob.UploadOptions{HTTPHeaders: &blob.HTTPHeaders{BlobContentMD5: stored}}
			if transport != nil {
				o.TransactionalValidation = blob.TransferValidationTypeMD5(transport)
			}
			_, err := e.cc.NewBlockBlobClient(name).Upload(ctx, body(data), o)
			return err
		}
		// The stored MD5 is right, Content-MD5 wrong: the first decides.
		must(t, up("a", good[:], bad[:]))
		p, err := e.cc.NewBlobClient("a").GetProperties(ctx, nil)
		must(t, err)
		if !bytes.Equal(p.ContentMD5, good[:]) {
			t.Fatalf("stored MD5 %x", p.ContentMD5)
		}
		// The stored MD5 is wrong: refused, with or without a right
		// Content-MD5.
		mustCode(t, up("b", bad[:], good[:]), 400, "Md5Mismatch")
		mustCode(t, up("c", bad[:], nil), 400, "Md5Mismatch")
		for _, n := range []string{"b", "c"} {
			_, err := e.cc.NewBlobClient(n).GetProperties(ctx, nil)
			mustCode(t, err, 404, "BlobNotFound")
		}
	})
}

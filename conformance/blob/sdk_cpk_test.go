package blob_test

import (
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/appendblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"

	"github.com/lazuli-storage/lazuli/conformance/harness"
)

// cpkOf is a customer-provided key made of 32 copies of b.
func cpkOf(b byte) *blob.CPKInfo {
	key := make([]byte, 32)
	for i := range key {
		key[i] = b
	}
	sum := sha256.Sum256(key)
	return &blob.CPKInfo{EncryptionKey: ptr(base64.StdEncoding.EncodeToString(key)),
		EncryptionKeySHA256: ptr(base64.StdEncoding.EncodeToString(sum[:])), EncryptionAlgorithm: ptr(blob.EncryptionAlgorithmTypeAES256)}
}

// A blob written with a customer-provided key echoes the key's SHA-256 on
// writes, snapshots, metadata and reads, and refuses reads and writes of
// its content or metadata without that key (409
// BlobUsesCustomerSpecifiedEncryption); a key on a blob written without
// one is 409 BlobDoesNotUseCustomerSpecifiedEncryption; a malformed key is
// 400 InvalidHeaderValue. Operations that do not touch content or metadata
// (Set Blob Tier, Delete Blob) need no key.
func TestCustomerProvidedKey(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		key, other := cpkOf(1), cpkOf(2)
		ab := e.cc.NewAppendBlobClient("ab")
		_, err := ab.Create(ctx, &appendblob.CreateOptions{CPKInfo: key})
		must(t, err)
		for _, w := range []string{"AAA ", "BBB "} {
			r, err := ab.AppendBlock(ctx, body([]byte(w)), &appendblob.AppendBlockOptions{CPKInfo: key})
			must(t, err)
			if r.EncryptionKeySHA256 == nil || *r.EncryptionKeySHA256 != *key.EncryptionKeySHA256 || !*r.IsServerEncrypted {
				t.Fatalf("append block echo %v", r.EncryptionKeySHA256)
			}
		}
		_, err = ab.AppendBlock(ctx, body([]byte("x")), nil)
		mustCode(t, err, 409, "BlobUsesCustomerSpecifiedEncryption")
		_, err = ab.DownloadStream(ctx, nil)
		mustCode(t, err, 409, "BlobUsesCustomerSpecifiedEncryption")
		_, err = ab.DownloadStream(ctx, &blob.DownloadStreamOptions{CPKInfo: other})
		mustCode(t, err, 409, "BlobUsesCustomerSpecifiedEncryption")
		d, err := ab.DownloadStream(ctx, &blob.DownloadStreamOptions{CPKInfo: key})
		must(t, err)
		if s := string(readAll(t, d.Body)); s != "AAA BBB " || d.EncryptionKeySHA256 == nil || *d.EncryptionKeySHA256 != *key.EncryptionKeySHA256 {
			t.Fatalf("download %q %v", s, d.EncryptionKeySHA256)
		}

		bb := e.cc.NewBlockBlobClient("bb")
		up, err := bb.Upload(ctx, body([]byte("data")), &blockblob.UploadOptions{CPKInfo: key})
		must(t, err)
		if up.EncryptionKeySHA256 == nil || *up.EncryptionKeySHA256 != *key.EncryptionKeySHA256 {
			t.Fatalf("upload echo %v", up.EncryptionKeySHA256)
		}
		_, err = bb.SetMetadata(ctx, map[string]*string{"m": ptr("1")}, nil)
		mustCode(t, err, 409, "BlobUsesCustomerSpecifiedEncryption")
		sm, err := bb.SetMetadata(ctx, map[string]*string{"m": ptr("1")}, &blob.SetMetadataOptions{CPKInfo: key})
		must(t, err)
		if sm.EncryptionKeySHA256 == nil || *sm.EncryptionKeySHA256 != *key.EncryptionKeySHA256 {
			t.Fatalf("set metadata echo %v", sm.EncryptionKeySHA256)
		}
		_, err = bb.GetProperties(ctx, nil)
		mustCode(t, err, 409, "BlobUsesCustomerSpecifiedEncryption")
		p, err := bb.GetProperties(ctx, &blob.GetPropertiesOptions{CPKInfo: key})
		must(t, err)
		if p.EncryptionKeySHA256 == nil || *p.EncryptionKeySHA256 != *key.EncryptionKeySHA256 || lookup(p.Metadata, "m") != "1" {
			t.Fatalf("properties %v", p.EncryptionKeySHA256)
		}
		_, err = bb.CreateSnapshot(ctx, nil)
		mustCode(t, err, 409, "BlobUsesCustomerSpecifiedEncryption")
		sn, err := bb.CreateSnapshot(ctx, &blob.CreateSnapshotOptions{CPKInfo: key})
		must(t, err)
		if *sn.IsServerEncrypted {
			t.Fatal("snapshot: x-ms-request-server-encrypted true")
		}
		snap, err := bb.WithSnapshot(*sn.Snapshot)
		must(t, err)
		_, err = snap.GetProperties(ctx, nil)
		mustCode(t, err, 409, "BlobUsesCustomerSpecifiedEncryption")
		_, err = snap.DownloadStream(ctx, &blob.DownloadStreamOptions{CPKInfo: key})
		must(t, err)
		_, err = bb.SetTier(ctx, blob.AccessTierCool, nil)
		must(t, err)

		// A key on a blob without one, and malformed keys.
		plain := e.cc.NewBlockBlobClient("plain")
		_, err = plain.Upload(ctx, body([]byte("x")), nil)
		must(t, err)
		_, err = plain.DownloadStream(ctx, &blob.DownloadStreamOptions{CPKInfo: key})
		mustCode(t, err, 409, "BlobDoesNotUseCustomerSpecifiedEncryption")
		bad := &blob.CPKInfo{EncryptionKey: ptr("mumbojumbo"), EncryptionKeySHA256: ptr("mumbojumbohash"), EncryptionAlgorithm: key.EncryptionAlgorithm}
		_, err = bb.CreateSnapshot(ctx, &blob.CreateSnapshotOptions{CPKInfo: bad})
		mustCode(t, err, 400, "InvalidHeaderValue")
		resp := raw(t, tg, http.MethodGet, e.name+"/bb", map[string]string{"x-ms-encryption-key": *key.EncryptionKey,
			"x-ms-encryption-key-sha256": *other.EncryptionKeySHA256, "x-ms-encryption-algorithm": "AES256"}, nil)
		if resp.StatusCode != 400 || resp.Header.Get("x-ms-error-code") != "InvalidHeaderValue" {
			t.Fatalf("hash of another key: %d %s", resp.StatusCode, resp.Header.Get("x-ms-error-code"))
		}
		_, err = bb.Delete(ctx, &blob.DeleteOptions{DeleteSnapshots: ptr(blob.DeleteSnapshotsOptionTypeInclude)})
		must(t, err)
	})
}

// A From-URL operation reading a source written with a customer-provided
// key must present it as x-ms-source-encryption-key; another key (or none)
// is refused.
func TestFromURLSourceCustomerProvidedKey(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		key, other := cpkOf(3), cpkOf(4)
		src := e.cc.NewBlockBlobClient("src")
		_, err := src.Upload(ctx, body([]byte("secret")), &blockblob.UploadOptions{CPKInfo: key})
		must(t, err)
		u := readSAS(t, src.BlobClient())
		dst := e.cc.NewAppendBlobClient("dst")
		_, err = dst.Create(ctx, nil)
		must(t, err)
		_, err = dst.AppendBlockFromURL(ctx, u, nil)
		mustCode(t, err, 409, "BlobUsesCustomerSpecifiedEncryption")
		_, err = dst.AppendBlockFromURL(ctx, u, &appendblob.AppendBlockFromURLOptions{SourceCustomerProvidedKey: &blob.SourceCPKInfo{
			SourceEncryptionKey: other.EncryptionKey, SourceEncryptionKeySHA256: other.EncryptionKeySHA256, SourceEncryptionAlgorithm: other.EncryptionAlgorithm}})
		mustCode(t, err, 409, "BlobUsesCustomerSpecifiedEncryption")
		_, err = dst.AppendBlockFromURL(ctx, u, &appendblob.AppendBlockFromURLOptions{SourceCustomerProvidedKey: &blob.SourceCPKInfo{
			SourceEncryptionKey: key.EncryptionKey, SourceEncryptionKeySHA256: key.EncryptionKeySHA256, SourceEncryptionAlgorithm: key.EncryptionAlgorithm}})
		must(t, err)
		d, err := dst.DownloadStream(ctx, nil)
		must(t, err)
		if s := string(readAll(t, d.Body)); s != "secret" {
			t.Fatalf("copied %q", s)
		}
	})
}

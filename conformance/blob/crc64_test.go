package blob_test

import (
	"crypto/md5"
	"encoding/base64"
	"encoding/binary"
	"hash/crc64"
	"net/http"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/appendblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/pageblob"

	"github.com/lazuli-storage/lazuli/conformance/harness"
)

// sdkCRC64 is the CRC-64 the Go SDK computes (its own table, built from
// the polynomial its shared package declares); the server must agree with
// the values the SDK's TransferValidationTypeComputeCRC64 sends.
var sdkCRC64Table = crc64.MakeTable(0x9A6C9329AC4BC9B5)

func crcOf(b []byte) uint64 { return crc64.Checksum(b, sdkCRC64Table) }

func crcHeader(b []byte) string {
	return base64.StdEncoding.EncodeToString(binary.LittleEndian.AppendUint64(nil, crcOf(b)))
}

// TestContentCRC64 pins x-ms-content-crc64 on Put Blob, Put Block, Append
// Block and Put Page as the SDKs' recorded tests show Azure: a CRC-64
// computed by the SDK is checked and echoed, a wrong one is 400
// Crc64Mismatch, one that is not 8 bytes or sent with Content-MD5 is 400,
// and an upload without checksum gets the CRC-64 back but no Content-MD5.
// x-ms-range-get-content-crc64 returns the CRC-64 of the range read.
func TestContentCRC64(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		data := []byte("The quick brown fox jumps over the lazy dog, twice over.")
		bad := blob.TransferValidationTypeCRC64(crcOf(data) ^ 1)

		bb := e.cc.NewBlockBlobClient("blocks")
		id := base64.StdEncoding.EncodeToString([]byte("blk-0001"))
		sr, err := bb.StageBlock(ctx, id, body(data), &blockblob.StageBlockOptions{TransactionalValidation: blob.TransferValidationTypeComputeCRC64()})
		must(t, err)
		if binary.LittleEndian.Uint64(sr.ContentCRC64) != crcOf(data) {
			t.Fatalf("Put Block CRC-64 %x", sr.ContentCRC64)
		}
		_, err = bb.StageBlock(ctx, id, body(data), &blockblob.StageBlockOptions{TransactionalValidation: bad})
		mustCode(t, err, 400, "Crc64Mismatch")
		// Put Block List's CRC-64 covers its XML body: one of the content
		// is refused (the SDK's recorded TestCommitBlockListWithCRC64; the
		// Go SDK itself now refuses to send it, hence raw HTTP).
		list := []byte("<BlockList><Latest>" + id + "</Latest></BlockList>")
		expectStatus(t, raw(t, tg, http.MethodPut, e.name+"/blocks?comp=blocklist", map[string]string{"x-ms-content-crc64": crcHeader(data)}, list), 400, "Crc64Mismatch")
		if r := raw(t, tg, http.MethodPut, e.name+"/blocks?comp=blocklist", map[string]string{"x-ms-content-crc64": crcHeader(list)}, list); r.StatusCode != 201 {
			t.Fatalf("Put Block List with the body's CRC-64: %d", r.StatusCode)
		}
		sr, err = bb.StageBlock(ctx, id, body(data), nil)
		must(t, err)
		if sr.ContentMD5 != nil || binary.LittleEndian.Uint64(sr.ContentCRC64) != crcOf(data) {
			t.Fatalf("Put Block without checksum: md5 %x crc %x", sr.ContentMD5, sr.ContentCRC64)
		}
		sum := md5.Sum(data)
		sr, err = bb.StageBlock(ctx, id, body(data), &blockblob.StageBlockOptions{TransactionalValidation: blob.TransferValidationTypeMD5(sum[:])})
		must(t, err)
		if string(sr.ContentMD5) != string(sum[:]) || sr.ContentCRC64 == nil {
			t.Fatalf("Put Block with MD5: md5 %x crc %x", sr.ContentMD5, sr.ContentCRC64)
		}

		ab := e.cc.NewAppendBlobClient("append")
		_, err = ab.Create(ctx, nil)
		must(t, err)
		ar, err := ab.AppendBlock(ctx, body(data), &appendblob.AppendBlockOptions{TransactionalValidation: blob.TransferValidationTypeComputeCRC64()})
		must(t, err)
		if binary.LittleEndian.Uint64(ar.ContentCRC64) != crcOf(data) {
			t.Fatalf("Append Block CRC-64 %x", ar.ContentCRC64)
		}
		_, err = ab.AppendBlock(ctx, body(data), &appendblob.AppendBlockOptions{TransactionalValidation: bad})
		mustCode(t, err, 400, "Crc64Mismatch")
		ar, err = ab.AppendBlock(ctx, body(data), nil)
		must(t, err)
		if ar.ContentMD5 != nil || ar.ContentCRC64 == nil {
			t.Fatalf("Append Block without checksum: md5 %x crc %x", ar.ContentMD5, ar.ContentCRC64)
		}
		// Append Block with no body is refused.
		expectStatus(t, raw(t, tg, http.MethodPut, e.name+"/append?comp=appendblock", nil, []byte{}), 400, "InvalidHeaderValue")

		pb := e.cc.NewPageBlobClient("pages")
		_, err = pb.Create(ctx, 1024, nil)
		must(t, err)
		page := make([]byte, 512)
		copy(page, data)
		pr, err := pb.UploadPages(ctx, body(page), blob.HTTPRange{Offset: 0, Count: 512}, &pageblob.UploadPagesOptions{TransactionalValidation: blob.TransferValidationTypeCRC64(crcOf(page))})
		must(t, err)
		if binary.LittleEndian.Uint64(pr.ContentCRC64) != crcOf(page) {
			t.Fatalf("Put Page CRC-64 %x", pr.ContentCRC64)
		}
		_, err = pb.UploadPages(ctx, body(page), blob.HTTPRange{Offset: 512, Count: 512}, &pageblob.UploadPagesOptions{TransactionalValidation: bad})
		mustCode(t, err, 400, "Crc64Mismatch")
		pr, err = pb.UploadPages(ctx, body(page), blob.HTTPRange{Offset: 512, Count: 512}, nil)
		must(t, err)
		if pr.ContentMD5 != nil || pr.ContentCRC64 == nil {
			t.Fatalf("Put Page without checksum: md5 %x crc %x", pr.ContentMD5, pr.ContentCRC64)
		}

		// Put Blob (raw: the SDK's Upload does not send a CRC-64).
		put := func(h map[string]string) *http.Response {
			h["x-ms-blob-type"] = "BlockBlob"
			return raw(t, tg, http.MethodPut, e.name+"/whole", h, data)
		}
		resp := put(map[string]string{"x-ms-content-crc64": crcHeader(data)})
		if resp.StatusCode != 201 || resp.Header.Get("x-ms-content-crc64") != crcHeader(data) {
			t.Fatalf("Put Blob with CRC-64: %d %v", resp.StatusCode, resp.Header)
		}
		expectStatus(t, put(map[string]string{"x-ms-content-crc64": crcHeader(data[1:])}), 400, "Crc64Mismatch")
		expectStatus(t, put(map[string]string{"x-ms-content-crc64": "AAAA"}), 400, "InvalidHeaderValue")
		// Both transactional checksums at once: refused by name, whatever
		// their values.
		expectStatus(t, put(map[string]string{"x-ms-content-crc64": crcHeader(data), "Content-MD5": base64.StdEncoding.EncodeToString(sum[:])}), 400, "BothCrc64AndMd5HeaderPresent")
		expectStatus(t, put(map[string]string{"x-ms-content-crc64": "AAAA", "Content-MD5": "nope"}), 400, "BothCrc64AndMd5HeaderPresent")
		both := map[string]string{"x-ms-content-crc64": crcHeader(page), "Content-MD5": md5B64(page)}
		expectStatus(t, raw(t, tg, http.MethodPut, e.name+"/whole?comp=block&blockid=YmxrMQ==", both, page), 400, "BothCrc64AndMd5HeaderPresent")
		both["x-ms-page-write"], both["x-ms-range"] = "update", "bytes=0-511"
		expectStatus(t, raw(t, tg, http.MethodPut, e.name+"/pages?comp=page", both, page), 400, "BothCrc64AndMd5HeaderPresent")
		delete(both, "x-ms-page-write")
		delete(both, "x-ms-range")
		expectStatus(t, raw(t, tg, http.MethodPut, e.name+"/append?comp=appendblock", both, page), 400, "BothCrc64AndMd5HeaderPresent")
		resp = put(map[string]string{})
		if resp.StatusCode != 201 || resp.Header.Get("x-ms-content-crc64") != crcHeader(data) || resp.Header.Get("Content-MD5") != base64.StdEncoding.EncodeToString(sum[:]) {
			t.Fatalf("Put Blob without checksum: %d %v", resp.StatusCode, resp.Header)
		}

		// Ranged reads with x-ms-range-get-content-crc64.
		resp = raw(t, tg, http.MethodGet, e.name+"/whole", map[string]string{"x-ms-range": "bytes=4-18", "x-ms-range-get-content-crc64": "true"}, nil)
		if resp.StatusCode != 206 || resp.Header.Get("x-ms-content-crc64") != crcHeader(data[4:19]) || resp.Header.Get("Content-MD5") != "" {
			t.Fatalf("range CRC-64: %d %v", resp.StatusCode, resp.Header)
		}
		expectStatus(t, raw(t, tg, http.MethodGet, e.name+"/whole", map[string]string{"x-ms-range": "bytes=4-18",
			"x-ms-range-get-content-crc64": "true", "x-ms-range-get-content-md5": "true"}, nil), 400, "InvalidHeaderValue")
	})
}

// TestStructuredMessageCRC64 uploads through the SDK's structured message
// CRC-64 validation (x-ms-structured-body), which frames the body in
// checksummed segments, with small segments so that several are sent: the
// content is stored unframed.
func TestStructuredMessageCRC64(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		content := make([]byte, 10000)
		for i := range content {
			content[i] = byte(i * 7)
		}
		bb := e.cc.NewBlockBlobClient("sm")
		_, err := bb.Upload(ctx, body(content), &blockblob.UploadOptions{
			TransactionalValidation: blob.TransferValidationTypeComputeStructuredMessageCRC64(1024)})
		must(t, err)
		dl, err := bb.DownloadStream(ctx, nil)
		must(t, err)
		got := readAll(t, dl.Body)
		if string(got) != string(content) {
			t.Fatalf("Put Blob stored %d bytes, want the %d of the content", len(got), len(content))
		}
		// Reads asked as structured messages are framed and checked by the
		// SDK, whole or ranged.
		dl, err = bb.DownloadStream(ctx, &blob.DownloadStreamOptions{
			TransactionalValidation: blob.TransferValidationTypeComputeStructuredMessageCRC64(0)})
		must(t, err)
		if got := readAll(t, dl.Body); string(got) != string(content) {
			t.Fatalf("structured download: %d bytes", len(got))
		}
		dl, err = bb.DownloadStream(ctx, &blob.DownloadStreamOptions{Range: blob.HTTPRange{Offset: 100, Count: 50},
			TransactionalValidation: blob.TransferValidationTypeComputeStructuredMessageCRC64(0)})
		must(t, err)
		if got := readAll(t, dl.Body); string(got) != string(content[100:150]) {
			t.Fatalf("structured ranged download: %d bytes", len(got))
		}
		id := base64.StdEncoding.EncodeToString([]byte("blk-0001"))
		_, err = bb.StageBlock(ctx, id, body(content), &blockblob.StageBlockOptions{
			TransactionalValidation: blob.TransferValidationTypeComputeStructuredMessageCRC64(0)})
		must(t, err)
		_, err = bb.CommitBlockList(ctx, []string{id, id}, nil)
		must(t, err)
		props, err := bb.GetProperties(ctx, nil)
		must(t, err)
		if *props.ContentLength != 2*int64(len(content)) {
			t.Fatalf("committed length %d", *props.ContentLength)
		}
		// A corrupted frame is refused.
		msg := []byte{1}
		msg = binary.LittleEndian.AppendUint64(msg, uint64(13+10+3+8+8))
		msg = binary.LittleEndian.AppendUint16(msg, 1)
		msg = binary.LittleEndian.AppendUint16(msg, 1)
		msg = binary.LittleEndian.AppendUint16(msg, 1)
		msg = binary.LittleEndian.AppendUint64(msg, 3)
		msg = append(msg, "abc"...)
		msg = binary.LittleEndian.AppendUint64(msg, crcOf([]byte("abc")))
		msg = binary.LittleEndian.AppendUint64(msg, crcOf([]byte("abd")))
		h := map[string]string{"x-ms-blob-type": "BlockBlob", "x-ms-structured-body": "XSM/1.0; properties=crc64", "x-ms-structured-content-length": "3"}
		expectStatus(t, raw(t, tg, http.MethodPut, e.name+"/smbad", h, msg), 400, "Crc64Mismatch")
		copy(msg[len(msg)-8:], binary.LittleEndian.AppendUint64(nil, crcOf([]byte("abc"))))
		resp := raw(t, tg, http.MethodPut, e.name+"/smgood", h, msg)
		if resp.StatusCode != 201 || resp.Header.Get("x-ms-structured-body") == "" {
			t.Fatalf("structured Put Blob: %d %v", resp.StatusCode, resp.Header)
		}
	})
}

// md5B64 is the base64 MD5 of b, as a Content-MD5 header carries it.
func md5B64(b []byte) string {
	s := md5.Sum(b)
	return base64.StdEncoding.EncodeToString(s[:])
}

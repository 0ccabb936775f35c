package blobhttp

import (
	"bytes"
	"crypto/md5"
	"encoding/base64"
	"io"
	"net/http"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/blob"
	"github.com/lazuli-storage/lazuli/internal/conditional"
	"github.com/lazuli-storage/lazuli/internal/content"
)

// srcSums are the checksums a From-URL operation computed over the source
// bytes it copies, when the request sent x-ms-source-content-md5 or
// x-ms-source-content-crc64.
type srcSums struct {
	md5, crc []byte
}

// verifySource checks x-ms-source-content-md5 / x-ms-source-content-crc64
// of a From-URL operation against bytes [off, off+n) (n < 0: to the end)
// of the source: 400 Md5Mismatch or Crc64Mismatch. Without either header
// it reads nothing. The source version read is pinned in scond (If-Match
// on its ETag), so the write that follows copies exactly the bytes
// checked; errors about the source itself (missing, conditions) are left
// to that write, which reports them as it always does.
func (h *handler) verifySource(rq *req, src blob.Ref, off, n int64, scond *blob.Cond) (srcSums, error) {
	var want srcSums
	hd := rq.r.Header
	var err error
	if want.md5, err = decodeMD5("x-ms-source-content-md5", hd.Get("X-Ms-Source-Content-Md5")); err != nil {
		return srcSums{}, err
	}
	if v := hd.Get("X-Ms-Source-Content-Crc64"); v != "" {
		if want.crc, err = base64.StdEncoding.DecodeString(v); err != nil || len(want.crc) != 8 {
			return srcSums{}, azerr.InvalidHeader("x-ms-source-content-crc64", v)
		}
	}
	if want.md5 == nil && want.crc == nil {
		return srcSums{}, nil
	}
	b, err := h.svc.GetBlob(rq.ctx(), src, blob.Cond{}, rq.info.Version)
	if err != nil || off < 0 || off > b.Size {
		return srcSums{}, nil
	}
	if n < 0 || off+n > b.Size {
		n = b.Size - off
	}
	if scond.IfMatch == nil {
		scond.IfMatch = []string{conditional.NormalizeETag(content.ETagString(b.ETag))}
	}
	m, c := md5.New(), content.NewCRC64()
	rc := h.svc.Open(rq.ctx(), b, off, n)
	_, err = io.Copy(io.MultiWriter(m, c), rc)
	rc.Close()
	if err != nil {
		return srcSums{}, err
	}
	var got srcSums
	if want.md5 != nil {
		if got.md5 = m.Sum(nil); !bytes.Equal(got.md5, want.md5) {
			return srcSums{}, azerr.New(azerr.Md5Mismatch)
		}
	}
	if want.crc != nil {
		if got.crc = content.CRC64Bytes(c.Sum64()); !bytes.Equal(got.crc, want.crc) {
			return srcSums{}, azerr.New(azerr.Crc64Mismatch)
		}
	}
	return got, nil
}

// respond sets Content-MD5 or x-ms-content-crc64 to the checksum the
// request asked to verify, as Azure answers the From-URL operations.
func (s srcSums) respond(h http.Header) {
	if s.md5 != nil {
		h.Set("Content-Md5", base64.StdEncoding.EncodeToString(s.md5))
	}
	if s.crc != nil {
		h.Set("X-Ms-Content-Crc64", base64.StdEncoding.EncodeToString(s.crc))
	}
}

package blobhttp

import (
	"net/http"
	"strconv"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/blob"
	"github.com/lazuli-storage/lazuli/internal/httpx"
)

// appendBlock is Append Block.
func (h *handler) appendBlock(rq *req) error {
	hd := rq.r.Header
	cond, err := rq.cond()
	if err != nil {
		return err
	}
	ar := blob.AppendRequest{Cond: cond}
	if ar.AppendPos, err = optInt(hd, "X-Ms-Blob-Condition-Appendpos", 0, 1<<62); err != nil {
		return err
	}
	if ar.MaxSize, err = optInt(hd, "X-Ms-Blob-Condition-Maxsize", 0, 1<<62); err != nil {
		return err
	}
	limit := int64(4 << 20)
	if rq.info.Version >= "2022-11-02" {
		limit = blob.MaxAppendBlock
	}
	if _, err := rq.contentLength(limit); err != nil {
		return err
	}
	sums, err := rq.txChecksums()
	if err != nil {
		return err
	}
	var srcSum srcSums
	if rq.snapshot != "" {
		return azerr.New(azerr.InvalidOperation)
	}
	u, err := rq.upload()
	if err != nil {
		return err
	}
	if hd.Get("X-Ms-Copy-Source") == "" && u.size == 0 {
		// An append of nothing is refused.
		return azerr.InvalidHeader("Content-Length", "0")
	}
	// The block comes from a source blob (Append Block From URL) or from the
	// body; small bodies (log lines) stay inline in their append key.
	if srcURL := hd.Get("X-Ms-Copy-Source"); srcURL != "" {
		// Append Block From URL.
		rq.info.Operation = "AppendBlockFromURL"
		src, err := sourceRef(srcURL)
		if err != nil {
			return err
		}
		if err := h.authorizeSource(rq, srcURL, src); err != nil {
			return err
		}
		ar.Source, ar.SourceLen = &src, -1
		if sv := hd.Get("X-Ms-Source-Range"); sv != "" {
			ss, se, ok := httpx.ParseRange(sv, true)
			if !ok {
				return azerr.InvalidHeader("x-ms-source-range", sv)
			}
			ar.SourceOff = ss
			if se >= 0 {
				ar.SourceLen = se - ss + 1
			}
		}
		if ar.SrcCond, err = rq.sourceCond(); err != nil {
			return err
		}
		if srcSum, err = h.verifySource(rq, src, ar.SourceOff, ar.SourceLen, &ar.SrcCond); err != nil {
			return err
		}
	} else if ar.Data, err = h.ingest(rq, u, sums, true, blob.SumCRC64); err != nil {
		return err
	}
	b, off, err := h.svc.AppendBlock(rq.ctx(), rq.ref(), ar)
	if err != nil {
		return err
	}
	out := rq.w.Header()
	setETag(out, b.ETag, b.Modified)
	out.Set("X-Ms-Blob-Append-Offset", strconv.FormatInt(off, 10))
	out.Set("X-Ms-Blob-Committed-Block-Count", strconv.Itoa(b.AppendCount))
	if ar.Source == nil {
		sums.respond(out, ar.Data)
	}
	srcSum.respond(out)
	out.Set("X-Ms-Request-Server-Encrypted", "true")
	// A write to a blob reports the blob's encryption scope (status).
	rq.scope = b.EncryptionScope
	rq.status(http.StatusCreated)
	return nil
}

// sealBlob is Append Blob Seal.
func (h *handler) sealBlob(rq *req) error {
	cond, err := rq.cond()
	if err != nil {
		return err
	}
	pos, err := optInt(rq.r.Header, "X-Ms-Blob-Condition-Appendpos", 0, 1<<62)
	if err != nil {
		return err
	}
	if rq.snapshot != "" {
		return azerr.New(azerr.InvalidOperation)
	}
	b, err := h.svc.SealBlob(rq.ctx(), rq.ref(), pos, cond)
	if err != nil {
		return err
	}
	out := rq.w.Header()
	setETag(out, b.ETag, b.Modified)
	out.Set("X-Ms-Blob-Sealed", "true")
	rq.status(http.StatusOK)
	return nil
}

package blobhttp

import (
	"crypto/md5"
	"encoding/base64"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/lazuli-storage/lazuli/internal/auth"
	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/blob"
	"github.com/lazuli-storage/lazuli/internal/content"
	"github.com/lazuli-storage/lazuli/internal/httpx"
)

// blobHeaders writes the properties of b as Get Blob / Get Blob Properties
// response headers. It returns the setter so that the caller can add its
// headers from the same allocation.
func (h *handler) blobHeaders(rq *req, b *blob.Blob) *headerSetter {
	hd := rq.w.Header()
	hs := &headerSetter{vals: make([]string, 20)}
	hs.setETag(hd, b.ETag, b.Modified)
	hs.set(hd, "X-Ms-Creation-Time", hs.time(b.Created))
	if b.VersionID != "" {
		hd.Set("X-Ms-Version-Id", b.VersionID)
		if b.Snapshot == "" {
			hd.Set("X-Ms-Is-Current-Version", "true")
		}
	}
	hs.set(hd, "X-Ms-Blob-Type", b.Type)
	if b.EncryptionScope != "" {
		hs.set(hd, "X-Ms-Encryption-Scope", b.EncryptionScope)
	}
	if b.EncryptionContext != "" {
		hs.set(hd, "X-Ms-Encryption-Context", b.EncryptionContext)
	}
	p := b.Props
	if p.ContentType != "" {
		hs.set(hd, "Content-Type", p.ContentType)
	} else {
		// Cleared by Set Blob Properties: no Content-Type at all (the
		// nil entry keeps the server from guessing one).
		hd["Content-Type"] = nil
	}
	if p.ContentEncoding != "" {
		hs.set(hd, "Content-Encoding", p.ContentEncoding)
	}
	if p.ContentLanguage != "" {
		hs.set(hd, "Content-Language", p.ContentLanguage)
	}
	if p.ContentDisposition != "" {
		hs.set(hd, "Content-Disposition", p.ContentDisposition)
	}
	if p.CacheControl != "" {
		hs.set(hd, "Cache-Control", p.CacheControl)
	}
	if len(p.ContentMD5) > 0 {
		hs.set(hd, "Content-Md5", base64.StdEncoding.EncodeToString(p.ContentMD5))
	}
	writeMeta(hd, b.Meta)
	if b.Snapshot == "" {
		now := h.asOf(b.AsOf)
		hs.set(hd, "X-Ms-Lease-Status", b.Lease.Status(now))
		hs.set(hd, "X-Ms-Lease-State", b.Lease.StateName(now))
		if d := b.Lease.DurationName(now); d != "" {
			hs.set(hd, "X-Ms-Lease-Duration", d)
		}
	} else {
		hs.set(hd, "X-Ms-Lease-Status", "unlocked")
		hs.set(hd, "X-Ms-Lease-State", "available")
	}
	if c := b.Copy; c != nil {
		hs.set(hd, "X-Ms-Copy-Id", c.ID)
		hs.set(hd, "X-Ms-Copy-Source", c.Source)
		hs.set(hd, "X-Ms-Copy-Status", c.Status)
		hs.set(hd, "X-Ms-Copy-Progress", c.Progress)
		hs.set(hd, "X-Ms-Copy-Completion-Time", hs.time(c.Completion))
		if c.Description != "" {
			hs.set(hd, "X-Ms-Copy-Status-Description", c.Description)
		}
	}
	switch b.Type {
	case blob.PageBlob:
		hs.set(hd, "X-Ms-Blob-Sequence-Number", strconv.FormatInt(b.Seq, 10))
		if b.CopySnapshot != "" {
			hs.set(hd, "X-Ms-Incremental-Copy", "true")
			hs.set(hd, "X-Ms-Copy-Destination-Snapshot", b.DestSnapshot)
		}
	case blob.AppendBlob:
		hs.set(hd, "X-Ms-Blob-Committed-Block-Count", strconv.Itoa(b.AppendCount))
		if b.Sealed {
			hs.set(hd, "X-Ms-Blob-Sealed", "true")
		}
	case blob.BlockBlob:
		hs.set(hd, "X-Ms-Access-Tier", tierOf(b))
		if b.AccessTier == "" {
			hs.set(hd, "X-Ms-Access-Tier-Inferred", "true")
		}
		if !b.TierChanged.IsZero() {
			hs.set(hd, "X-Ms-Access-Tier-Change-Time", hs.time(b.TierChanged))
		}
		if b.RehydrateTo != "" {
			hs.set(hd, "X-Ms-Archive-Status", archiveStatus(b))
			hs.set(hd, "X-Ms-Rehydrate-Priority", b.RehydratePriority)
		}
	}
	if len(b.Tags) > 0 {
		hs.set(hd, "X-Ms-Tag-Count", strconv.Itoa(len(b.Tags)))
	}
	protectionHeaders(hd, b)
	hs.set(hd, "Accept-Ranges", "bytes")
	hs.set(hd, "X-Ms-Server-Encrypted", "true")
	return hs
}

// overrideHeaders applies the response-header overrides a service SAS
// signed (rscc, rscd, rsce, rscl, rsct) to a Get Blob or Get Blob
// Properties answer.
func overrideHeaders(rq *req, hd http.Header) {
	id := rq.info.Identity
	if id == nil || id.Kind != auth.ServiceSAS || id.SAS == nil || id.SAS.Values == nil {
		return
	}
	v := id.SAS.Values
	for _, o := range [...]struct{ key, val string }{
		{"Cache-Control", v.CacheControl}, {"Content-Disposition", v.ContentDisposition},
		{"Content-Encoding", v.ContentEncoding}, {"Content-Language", v.ContentLanguage},
		{"Content-Type", v.ContentType},
	} {
		if o.val != "" {
			hd[o.key] = []string{o.val}
		}
	}
}

// getBlob is Get Blob (GET) and Get Blob Properties (HEAD).
func (h *handler) getBlob(rq *req) error {
	head := rq.r.Method == http.MethodHead
	cond, err := rq.cond()
	if err != nil {
		return err
	}
	start, end, hasRange, err := httpx.ReadRange(rq.r.Header)
	if err != nil {
		return err
	}
	structured, err := rq.wantsStructured()
	if err != nil {
		return err
	}
	get := h.svc.GetBlob
	if head {
		get = h.svc.GetBlobProperties
	}
	b, err := get(rq.ctx(), rq.ref(), cond, rq.info.Version)
	if err != nil {
		return err
	}
	// Range errors are decided before any blob header is written.
	wantMD5 := strings.EqualFold(rq.r.Header.Get("X-Ms-Range-Get-Content-Md5"), "true")
	wantCRC := strings.EqualFold(rq.r.Header.Get("X-Ms-Range-Get-Content-Crc64"), "true")
	if wantMD5 && wantCRC {
		return azerr.InvalidHeader("x-ms-range-get-content-crc64", "true")
	}
	if !head && hasRange {
		if start >= b.Size {
			return azerr.New(azerr.InvalidRange).WithHeader("Content-Range", "bytes */"+strconv.FormatInt(b.Size, 10))
		}
		if end < 0 || end >= b.Size {
			end = b.Size - 1
		}
		if (wantMD5 || wantCRC) && end-start+1 > 4<<20 {
			return azerr.New(azerr.OutOfRangeInput)
		}
	}
	hs := h.blobHeaders(rq, b)
	hd := rq.w.Header()
	overrideHeaders(rq, hd)
	if head {
		hs.set(hd, "Content-Length", strconv.FormatInt(b.Size, 10))
		rq.status(http.StatusOK)
		return nil
	}
	if !hasRange {
		hs.set(hd, "Content-Length", strconv.FormatInt(b.Size, 10))
		if structured {
			return h.streamStructured(rq, b, 0, b.Size, http.StatusOK)
		}
		rq.status(http.StatusOK)
		return h.stream(rq, b, 0, b.Size, nil)
	}
	n := end - start + 1
	hd.Del("Content-Md5")
	if len(b.Props.ContentMD5) > 0 {
		hd.Set("X-Ms-Blob-Content-Md5", base64.StdEncoding.EncodeToString(b.Props.ContentMD5))
	}
	var buf []byte
	if wantMD5 || wantCRC {
		rc := h.svc.Open(rq.ctx(), b, start, n)
		buf, err = io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return err
		}
		if wantMD5 {
			sum := md5.Sum(buf)
			hd.Set("Content-Md5", base64.StdEncoding.EncodeToString(sum[:]))
		} else {
			hd.Set("X-Ms-Content-Crc64", base64.StdEncoding.EncodeToString(content.CRC64Bytes(content.CRC64(buf))))
		}
	}
	hd.Set("Content-Range", "bytes "+strconv.FormatInt(start, 10)+"-"+strconv.FormatInt(end, 10)+"/"+strconv.FormatInt(b.Size, 10))
	hd.Set("Content-Length", strconv.FormatInt(n, 10))
	if structured {
		return h.streamStructured(rq, b, start, n, http.StatusPartialContent)
	}
	rq.status(http.StatusPartialContent)
	return h.stream(rq, b, start, n, buf)
}

// streamStructured answers a read that asked for a structured message
// body: the n bytes at off, framed with CRC-64 checksums.
func (h *handler) streamStructured(rq *req, b *blob.Blob, off, n int64, status int) error {
	hd := rq.w.Header()
	hd.Set("Content-Length", strconv.FormatInt(structuredLen(n), 10))
	hd.Set("X-Ms-Structured-Body", structuredValue)
	hd.Set("X-Ms-Structured-Content-Length", strconv.FormatInt(n, 10))
	rq.status(status)
	open := func(o, l int64) io.ReadCloser { return h.svc.Open(rq.ctx(), b, o, l) }
	if err := writeStructured(rq.w, open, off, n); err != nil && rq.ctx().Err() == nil {
		h.d.Log.Error("blob stream", "request_id", rq.info.RequestID, "err", err)
		panic(http.ErrAbortHandler)
	}
	return nil
}

// stream writes the body after the status line; a failure now can only
// cut the connection.
func (h *handler) stream(rq *req, b *blob.Blob, off, n int64, buf []byte) error {
	if buf != nil {
		rq.w.Write(buf)
		return nil
	}
	if segs := blob.Segments(b, off, n); len(segs) == 1 && segs[0].Data != nil {
		// Inlined content: no reader, no copy buffer.
		rq.w.Write(segs[0].Data)
		return nil
	}
	rc := h.svc.Open(rq.ctx(), b, off, n)
	defer rc.Close()
	if _, err := io.Copy(rq.w, rc); err != nil && rq.ctx().Err() == nil {
		h.d.Log.Error("blob stream", "request_id", rq.info.RequestID, "err", err)
		panic(http.ErrAbortHandler)
	}
	return nil
}

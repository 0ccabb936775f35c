package blobhttp

import (
	"bytes"
	"crypto/md5"
	"encoding/base64"
	"encoding/xml"
	"io"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/lazuli-storage/lazuli/internal/auth"
	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/blob"
	"github.com/lazuli-storage/lazuli/internal/conditional"
	"github.com/lazuli-storage/lazuli/internal/content"
	"github.com/lazuli-storage/lazuli/internal/guid"
	"github.com/lazuli-storage/lazuli/internal/httpx"
)

// bodyReader turns a failure to read the request body (a client that sent
// fewer bytes than its Content-Length, or went away) into a 400 rather than
// a 500; nothing has been written to the blob at that point.
type bodyReader struct{ r io.Reader }

func (b bodyReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && err != io.EOF {
		return n, azerr.Newf(azerr.InvalidInput, "The request body could not be read: %v", err)
	}
	return n, err
}

func (rq *req) body() io.Reader { return bodyReader{rq.r.Body} }

// props reads the x-ms-blob-content-* properties of a write. useStandard
// also takes the standard Content-* headers (Put Blob).
func (rq *req) props(useStandard bool) (blob.Props, error) { return rq.propsWith(useStandard, false) }

// propsWith is props; anyMD5 takes an x-ms-blob-content-md5 of any length
// (Set Blob Properties), where other writes require 16 bytes.
func (rq *req) propsWith(useStandard, anyMD5 bool) (blob.Props, error) {
	hd := rq.r.Header
	get := func(xms, std string) string {
		if v := hd.Get(xms); v != "" || !useStandard {
			return v
		}
		if std == "" {
			return ""
		}
		return hd.Get(std)
	}
	p := blob.Props{
		ContentType:        get("x-ms-blob-content-type", "Content-Type"),
		ContentEncoding:    get("x-ms-blob-content-encoding", "Content-Encoding"),
		ContentLanguage:    get("x-ms-blob-content-language", "Content-Language"),
		ContentDisposition: get("x-ms-blob-content-disposition", ""),
		CacheControl:       get("x-ms-blob-cache-control", "Cache-Control"),
	}
	v := hd.Get("X-Ms-Blob-Content-Md5")
	md, err := decodeMD5("x-ms-blob-content-md5", v)
	if err != nil && anyMD5 {
		if md, err = base64.StdEncoding.DecodeString(v); err != nil {
			err = azerr.New(azerr.InvalidMd5).WithDetail("HeaderName", "x-ms-blob-content-md5").WithDetail("HeaderValue", v)
		}
	}
	if err != nil {
		return p, err
	}
	p.ContentMD5 = md
	return p, nil
}

// tagsHeader parses x-ms-tags ("k1=v1&k2=v2", URL-encoded).
func (rq *req) tagsHeader() ([]blob.KV, error) {
	v := rq.r.Header.Get("X-Ms-Tags")
	if v == "" {
		return nil, nil
	}
	q, err := url.ParseQuery(v)
	if err != nil {
		return nil, azerr.InvalidHeader("x-ms-tags", v)
	}
	var out []blob.KV
	for k, vs := range q {
		if len(vs) != 1 {
			return nil, azerr.InvalidHeader("x-ms-tags", v)
		}
		out = append(out, blob.KV{k, vs[0]})
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	if err := blob.ValidateTags(out); err != nil {
		return nil, err
	}
	return out, nil
}

func (rq *req) validName() error {
	if err := blob.ValidateBlobName(rq.blob); err != nil {
		return err
	}
	return nil
}

func tierHeader(rq *req) (string, error) {
	v := rq.r.Header.Get("X-Ms-Access-Tier")
	switch strings.ToLower(v) {
	case "":
		return "", nil
	case "hot":
		return "Hot", nil
	case "cool":
		return "Cool", nil
	case "cold":
		return "Cold", nil
	case "archive":
		return "Archive", nil
	}
	return "", azerr.New(azerr.InvalidHeaderValue).WithDetail("HeaderName", "x-ms-access-tier").WithDetail("HeaderValue", v)
}

// newVersion is what Put Blob and Put Block List read from the headers
// for the version of the blob they write.
type newVersion struct {
	cond  blob.Cond
	meta  []blob.KV
	props blob.Props
	tags  []blob.KV
	tier  string
}

// newVersion reads the conditions, metadata, properties, tags and tier of
// a write that replaces the blob's content, in the order their errors take
// precedence. useStandard is passed to props.
func (rq *req) newVersion(useStandard bool) (newVersion, error) {
	var nv newVersion
	var err error
	if nv.cond, err = rq.cond(); err != nil {
		return nv, err
	}
	if nv.meta, err = rq.metadata(); err != nil {
		return nv, err
	}
	if nv.props, err = rq.props(useStandard); err != nil {
		return nv, err
	}
	if nv.props.ContentType == "" {
		// A new blob's default; Set Blob Properties may clear it later.
		nv.props.ContentType = "application/octet-stream"
	}
	if nv.tags, err = rq.tagsHeader(); err != nil {
		return nv, err
	}
	nv.tier, err = tierHeader(rq)
	return nv, err
}

// putBlob is Put Blob for block, page and append blobs.
func (h *handler) putBlob(rq *req) error {
	if err := rq.validName(); err != nil {
		return err
	}
	hd := rq.r.Header
	bt := hd.Get("X-Ms-Blob-Type")
	switch bt {
	case "":
		return azerr.MissingHeader("x-ms-blob-type")
	case blob.BlockBlob, blob.PageBlob, blob.AppendBlob:
	default:
		return azerr.InvalidHeader("x-ms-blob-type", bt)
	}
	nv, err := rq.newVersion(true)
	if err != nil {
		return err
	}
	nv.cond.CreateOnly = rq.createOnly
	if err := h.scopeCond(rq, &nv.cond); err != nil {
		return err
	}
	sums, err := rq.txChecksums()
	if err != nil {
		return err
	}
	if nv.props.ContentMD5 != nil && bt == blob.BlockBlob {
		// The MD5 to store is checked against the body, in place of a
		// Content-MD5 sent with it.
		sums.md5 = nv.props.ContentMD5
	}
	n, err := rq.contentLength(blob.PutBlobLimit(rq.info.Version))
	if err != nil {
		return err
	}
	pr := blob.PutBlobRequest{Ref: rq.ref(), Type: bt, Props: nv.props, Meta: nv.meta, Tags: nv.tags, Cond: nv.cond, Tier: nv.tier}
	switch bt {
	case blob.PageBlob, blob.AppendBlob:
		if n != 0 {
			return azerr.InvalidHeader("Content-Length", strconv.FormatInt(n, 10))
		}
		if bt == blob.PageBlob {
			sv := hd.Get("X-Ms-Blob-Content-Length")
			if sv == "" {
				return azerr.MissingHeader("x-ms-blob-content-length")
			}
			size, err := parseInt("x-ms-blob-content-length", sv, 0, blob.MaxPageBlobSize)
			if err != nil || size%512 != 0 {
				return azerr.InvalidHeader("x-ms-blob-content-length", sv)
			}
			pr.PageSize = size
			if seq, err := optInt(hd, "x-ms-blob-sequence-number", 0, 1<<63-1); err != nil {
				return err
			} else if seq != nil {
				pr.Seq = *seq
			}
		}
	default:
		u, err := rq.upload()
		if err != nil {
			return err
		}
		if pr.Data, err = h.ingest(rq, u, sums, true, blob.SumMD5|blob.SumCRC64); err != nil {
			return err
		}
	}
	if rq.snapshot != "" {
		return azerr.New(azerr.InvalidOperation)
	}
	b, err := h.svc.PutBlob(rq.ctx(), pr)
	if err != nil {
		return err
	}
	out := rq.w.Header()
	hs := headerSetter{vals: make([]string, 4)}
	hs.setETag(out, b.ETag, b.Modified)
	if bt == blob.BlockBlob {
		hs.set(out, "Content-Md5", base64.StdEncoding.EncodeToString(pr.Data.MD5))
		hs.set(out, "X-Ms-Content-Crc64", base64.StdEncoding.EncodeToString(content.CRC64Bytes(pr.Data.CRC64)))
	}
	hs.set(out, "X-Ms-Request-Server-Encrypted", "true")
	rq.status(http.StatusCreated)
	return nil
}

// blobHeaders writes the properties of b as Get Blob / Get Blob Properties
// response headers. It returns the setter so that the caller can add its
// headers from the same allocation.
func (h *handler) blobHeaders(rq *req, b *blob.Blob) *headerSetter {
	hd := rq.w.Header()
	hs := &headerSetter{vals: make([]string, 20)}
	hs.setETag(hd, b.ETag, b.Modified)
	hs.set(hd, "X-Ms-Creation-Time", hs.time(b.Created))
	hs.set(hd, "X-Ms-Blob-Type", b.Type)
	if b.EncryptionScope != "" {
		hs.set(hd, "X-Ms-Encryption-Scope", b.EncryptionScope)
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

// deleteBlob is Delete Blob.
func (h *handler) deleteBlob(rq *req) error {
	cond, err := rq.cond()
	if err != nil {
		return err
	}
	for _, d := range [...]struct {
		name string
		into *time.Time
	}{{"X-Ms-Access-Tier-If-Modified-Since", &cond.TierModifiedSince}, {"X-Ms-Access-Tier-If-Unmodified-Since", &cond.TierUnmodifiedSince}} {
		if v := rq.r.Header.Get(d.name); v != "" {
			t, ok := conditional.ParseDate(v)
			if !ok {
				return azerr.InvalidHeader(strings.ToLower(d.name), v)
			}
			*d.into = t
		}
	}
	ds := rq.r.Header.Get("X-Ms-Delete-Snapshots")
	switch ds {
	case "", "include", "only":
	default:
		return azerr.InvalidHeader("x-ms-delete-snapshots", ds)
	}
	if err := h.svc.DeleteBlob(rq.ctx(), rq.ref(), ds, cond); err != nil {
		return err
	}
	rq.w.Header().Set("X-Ms-Delete-Type-Permanent", "true")
	rq.status(http.StatusAccepted)
	return nil
}

// setBlobProperties is Set Blob Properties.
func (h *handler) setBlobProperties(rq *req) error {
	cond, err := rq.cond()
	if err != nil {
		return err
	}
	hd := rq.r.Header
	sp := blob.SetPropsRequest{Cond: cond}
	if sp.NewSize, err = optInt(hd, "x-ms-blob-content-length", 0, blob.MaxPageBlobSize); err != nil {
		return err
	}
	act := strings.ToLower(hd.Get("X-Ms-Sequence-Number-Action"))
	switch act {
	case "":
	case "max", "update":
		if hd.Get("X-Ms-Blob-Sequence-Number") == "" {
			return azerr.MissingHeader("x-ms-blob-sequence-number")
		}
	case "increment":
		if hd.Get("X-Ms-Blob-Sequence-Number") != "" {
			return azerr.InvalidHeader("x-ms-blob-sequence-number", hd.Get("X-Ms-Blob-Sequence-Number"))
		}
	default:
		return azerr.InvalidHeader("x-ms-sequence-number-action", act)
	}
	sp.SeqAction = act
	if sp.Seq, err = optInt(hd, "x-ms-blob-sequence-number", 0, 1<<63-1); err != nil {
		return err
	}
	if sp.NewSize == nil && act == "" {
		// Content properties are replaced; an omitted one is cleared.
		// Azure keeps an x-ms-blob-content-md5 of any length here, as
		// given (it is the client's property, not a checked hash).
		if sp.Props, err = rq.propsWith(false, true); err != nil {
			return err
		}
		sp.ReplaceProps = true
	}
	nb, err := h.svc.SetBlobProperties(rq.ctx(), rq.ref(), sp)
	if err != nil {
		return err
	}
	out := rq.w.Header()
	setETag(out, nb.ETag, nb.Modified)
	if nb.Type == blob.PageBlob {
		out.Set("X-Ms-Blob-Sequence-Number", strconv.FormatInt(nb.Seq, 10))
	}
	rq.status(http.StatusOK)
	return nil
}

// getBlobMetadata is Get Blob Metadata.
func (h *handler) getBlobMetadata(rq *req) error {
	cond, err := rq.cond()
	if err != nil {
		return err
	}
	b, err := h.svc.GetBlobProperties(rq.ctx(), rq.ref(), cond, rq.info.Version)
	if err != nil {
		return err
	}
	setETag(rq.w.Header(), b.ETag, b.Modified)
	writeMeta(rq.w.Header(), b.Meta)
	rq.status(http.StatusOK)
	return nil
}

// setBlobMetadata is Set Blob Metadata.
func (h *handler) setBlobMetadata(rq *req) error {
	cond, err := rq.cond()
	if err != nil {
		return err
	}
	meta, err := rq.metadata()
	if err != nil {
		return err
	}
	b, err := h.svc.SetBlobMetadata(rq.ctx(), rq.ref(), meta, cond)
	if err != nil {
		return err
	}
	setETag(rq.w.Header(), b.ETag, b.Modified)
	rq.w.Header().Set("X-Ms-Request-Server-Encrypted", "true")
	rq.scope = b.EncryptionScope
	rq.status(http.StatusOK)
	return nil
}

// snapshotBlob is Snapshot Blob.
func (h *handler) snapshotBlob(rq *req) error {
	cond, err := rq.cond()
	if err != nil {
		return err
	}
	meta, err := rq.metadata()
	if err != nil {
		return err
	}
	s, err := h.svc.SnapshotBlob(rq.ctx(), rq.ref(), meta, cond)
	if err != nil {
		return err
	}
	out := rq.w.Header()
	setETag(out, s.ETag, s.Modified)
	out.Set("X-Ms-Snapshot", s.Snapshot)
	out.Set("X-Ms-Request-Server-Encrypted", "false")
	rq.status(http.StatusCreated)
	return nil
}

// leaseBlob is Lease Blob.
func (h *handler) leaseBlob(rq *req) error {
	lr, err := rq.leaseRequest()
	if err != nil {
		return err
	}
	if lr.Cond, err = rq.cond(); err != nil {
		return err
	}
	b, res, err := h.svc.LeaseBlob(rq.ctx(), rq.ref(), lr)
	if err != nil {
		return err
	}
	setETag(rq.w.Header(), b.ETag, b.Modified)
	writeLeaseResult(rq, lr.Action.Kind, res)
	return nil
}

func (rq *req) blockID() (string, error) {
	id, ok := rq.q["blockid"]
	if !ok {
		return "", azerr.New(azerr.MissingRequiredQueryParameter).WithDetail("QueryParameterName", "blockid")
	}
	if err := blob.ValidateBlockID(id[0]); err != nil {
		return "", azerr.InvalidQuery("blockid", id[0], "")
	}
	return id[0], nil
}

// putBlock is Put Block.
func (h *handler) putBlock(rq *req) error {
	if err := rq.validName(); err != nil {
		return err
	}
	id, err := rq.blockID()
	if err != nil {
		return err
	}
	cond := blob.Cond{LeaseID: rq.r.Header.Get("X-Ms-Lease-Id")}
	// A staged block takes the key Put Block List will commit with; it is
	// echoed, not checked against a committed blob it may replace.
	if rq.keySHA, err = rq.cpk("x-ms-"); err != nil {
		return err
	}
	sums, err := rq.txChecksums()
	if err != nil {
		return err
	}
	if _, err := rq.contentLength(blob.BlockLimit(rq.info.Version)); err != nil {
		return err
	}
	if rq.snapshot != "" {
		return azerr.New(azerr.InvalidOperation)
	}
	u, err := rq.upload()
	if err != nil {
		return err
	}
	data, err := h.ingest(rq, u, sums, false, blob.SumCRC64)
	if err != nil {
		return err
	}
	if err := h.svc.PutBlock(rq.ctx(), rq.ref(), id, data, cond); err != nil {
		return err
	}
	out := rq.w.Header()
	sums.respond(out, data)
	out.Set("X-Ms-Request-Server-Encrypted", "true")
	rq.status(http.StatusCreated)
	return nil
}

// parseBlockList decodes a Put Block List body.
func parseBlockList(body []byte) ([]blob.BlockListItem, error) {
	dec := xml.NewDecoder(bytes.NewReader(body))
	var out []blob.BlockListItem
	depth := 0
	var cur *blob.BlockListItem
	sawRoot := false
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, azerr.New(azerr.InvalidXmlDocument)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			switch depth {
			case 1:
				if t.Name.Local != "BlockList" {
					return nil, azerr.New(azerr.InvalidXmlDocument)
				}
				sawRoot = true
			case 2:
				switch t.Name.Local {
				case "Committed", "Uncommitted", "Latest":
					cur = &blob.BlockListItem{Kind: t.Name.Local}
				default:
					return nil, azerr.New(azerr.InvalidXmlDocument)
				}
			default:
				return nil, azerr.New(azerr.InvalidXmlDocument)
			}
		case xml.CharData:
			if cur != nil {
				cur.ID += string(t)
			}
		case xml.EndElement:
			if depth == 2 && cur != nil {
				cur.ID = strings.TrimSpace(cur.ID)
				out = append(out, *cur)
				cur = nil
			}
			depth--
		}
	}
	if !sawRoot {
		return nil, azerr.New(azerr.InvalidXmlDocument)
	}
	return out, nil
}

// putBlockList is Put Block List.
func (h *handler) putBlockList(rq *req) error {
	if err := rq.validName(); err != nil {
		return err
	}
	nv, err := rq.newVersion(false)
	if err != nil {
		return err
	}
	nv.cond.CreateOnly = rq.createOnly
	if err := h.scopeCond(rq, &nv.cond); err != nil {
		return err
	}
	sums, err := rq.txChecksums()
	if err != nil {
		return err
	}
	body, err := readBody(rq, 64<<20)
	if err != nil {
		return err
	}
	// The transactional checksums cover the XML body.
	if sums.md5 != nil {
		if sum := md5.Sum(body); !bytes.Equal(sum[:], sums.md5) {
			return azerr.New(azerr.Md5Mismatch)
		}
	}
	if err := sums.verify(blob.Ingested{CRC64: content.CRC64(body)}); err != nil {
		return err
	}
	items, err := parseBlockList(body)
	if err != nil {
		return err
	}
	b, err := h.svc.PutBlockList(rq.ctx(), blob.PutBlockListRequest{Ref: rq.ref(), Blocks: items, Props: nv.props,
		Meta: nv.meta, Tags: nv.tags, Cond: nv.cond, Tier: nv.tier})
	if err != nil {
		return err
	}
	out := rq.w.Header()
	setETag(out, b.ETag, b.Modified)
	out.Set("X-Ms-Request-Server-Encrypted", "true")
	rq.status(http.StatusCreated)
	return nil
}

// getBlockList is Get Block List.
func (h *handler) getBlockList(rq *req) error {
	which := strings.ToLower(rq.q.Get("blocklisttype"))
	switch which {
	case "":
		which = "committed"
	case "committed", "uncommitted", "all":
	default:
		return azerr.InvalidQuery("blocklisttype", rq.q.Get("blocklisttype"), "")
	}
	cond := blob.Cond{LeaseID: rq.r.Header.Get("X-Ms-Lease-Id"), IfTags: rq.r.Header.Get("X-Ms-If-Tags")}
	bl, err := h.svc.GetBlockList(rq.ctx(), rq.ref(), which, cond)
	if err != nil {
		return err
	}
	out := rq.w.Header()
	size := int64(0)
	if bl.Blob != nil {
		setETag(out, bl.Blob.ETag, bl.Blob.Modified)
		size = bl.Blob.Size
	}
	out.Set("X-Ms-Blob-Content-Length", strconv.FormatInt(size, 10))
	var b strings.Builder
	b.WriteString("<BlockList>")
	list := func(elem string, items []blob.BlockInfo) {
		if items == nil {
			if (elem == "CommittedBlocks" && which != "uncommitted") || (elem == "UncommittedBlocks" && which != "committed") {
				b.WriteString("<" + elem + "/>")
			}
			return
		}
		b.WriteString("<" + elem + ">")
		for _, it := range items {
			b.WriteString("<Block><Name>" + azerr.EscapeXML(it.Name) + "</Name><Size>" + strconv.FormatInt(it.Size, 10) + "</Size></Block>")
		}
		b.WriteString("</" + elem + ">")
	}
	list("CommittedBlocks", bl.Committed)
	list("UncommittedBlocks", bl.Uncommitted)
	b.WriteString("</BlockList>")
	return writeXML(rq, http.StatusOK, b.String())
}

// putPage is Put Page (update or clear).
func (h *handler) putPage(rq *req) error {
	hd := rq.r.Header
	cond, err := rq.cond()
	if err != nil {
		return err
	}
	pw := strings.ToLower(hd.Get("X-Ms-Page-Write"))
	if pw == "" {
		return azerr.MissingHeader("x-ms-page-write")
	}
	if pw != "update" && pw != "clear" {
		return azerr.InvalidHeader("x-ms-page-write", pw)
	}
	rv := hd.Get("X-Ms-Range")
	if rv == "" {
		rv = hd.Get("Range")
	}
	if rv == "" {
		return azerr.MissingHeader("x-ms-range")
	}
	start, end, ok := httpx.ParseRange(rv, true)
	if !ok || end < 0 {
		return azerr.InvalidHeader("x-ms-range", rv)
	}
	if start%512 != 0 || (end+1)%512 != 0 {
		// Misaligned is a malformed header; 416 InvalidPageRange is for a
		// range beyond the blob's size.
		return azerr.InvalidHeader("x-ms-range", rv)
	}
	pr := blob.PutPageRequest{Start: start, End: end, Clear: pw == "clear", Cond: cond}
	if pr.Seq.LE, err = seqCond(hd, "x-ms-if-sequence-number-le"); err != nil {
		return err
	}
	if pr.Seq.LT, err = seqCond(hd, "x-ms-if-sequence-number-lt"); err != nil {
		return err
	}
	if pr.Seq.EQ, err = seqCond(hd, "x-ms-if-sequence-number-eq"); err != nil {
		return err
	}
	if rq.snapshot != "" {
		return azerr.New(azerr.InvalidOperation)
	}
	var sums txSums
	var srcSum srcSums
	uploaded := false
	if srcURL := hd.Get("X-Ms-Copy-Source"); srcURL != "" && !pr.Clear {
		// Put Page From URL.
		rq.info.Operation = "PutPageFromURL"
		src, err := sourceRef(srcURL)
		if err != nil {
			return err
		}
		if err := h.authorizeSource(rq, srcURL, src); err != nil {
			return err
		}
		sv := hd.Get("X-Ms-Source-Range")
		ss, se, ok := httpx.ParseRange(sv, true)
		if !ok || se < 0 || se-ss != end-start {
			return azerr.InvalidHeader("x-ms-source-range", sv)
		}
		if pr.SrcCond, err = rq.sourceCond(); err != nil {
			return err
		}
		if srcSum, err = h.verifySource(rq, src, ss, se-ss+1, &pr.SrcCond); err != nil {
			return err
		}
		pr.Source, pr.SourceOff = &src, ss
	} else if pr.Clear {
		if n, err := rq.contentLength(0); err != nil || n != 0 {
			return azerr.InvalidHeader("Content-Length", strconv.FormatInt(rq.r.ContentLength, 10))
		}
	} else {
		u, err := rq.upload()
		if err != nil {
			return err
		}
		n := u.size
		limit := int64(blob.MaxPageWrite)
		if u.structured {
			limit = structuredLen(limit)
		}
		if _, err := rq.contentLength(limit); err != nil {
			return err
		}
		if n > blob.MaxPageWrite {
			return azerr.New(azerr.RequestBodyTooLarge).WithDetail("MaxLimit", strconv.FormatInt(blob.MaxPageWrite, 10))
		}
		if n != end-start+1 {
			return azerr.InvalidHeader("Content-Length", strconv.FormatInt(n, 10))
		}
		if sums, err = rq.txChecksums(); err != nil {
			return err
		}
		if pr.Data, err = h.ingest(rq, u, sums, false, blob.SumCRC64); err != nil {
			return err
		}
		if pr.Data.Size != n {
			return azerr.InvalidHeader("Content-Length", strconv.FormatInt(n, 10))
		}
		uploaded = true
	}
	b, err := h.svc.PutPage(rq.ctx(), rq.ref(), pr)
	if err != nil {
		return err
	}
	out := rq.w.Header()
	setETag(out, b.ETag, b.Modified)
	out.Set("X-Ms-Blob-Sequence-Number", strconv.FormatInt(b.Seq, 10))
	srcSum.respond(out)
	if uploaded {
		sums.respond(out, pr.Data)
		out.Set("X-Ms-Request-Server-Encrypted", "true")
	}
	rq.scope = b.EncryptionScope
	rq.status(http.StatusCreated)
	return nil
}

// seqCond parses an x-ms-if-sequence-number-* condition of Put Page. A
// negative number is 400 InvalidInput (Azure reads it as a number it
// cannot accept, not as a malformed header); anything else that is not a
// number is InvalidHeaderValue.
func seqCond(h http.Header, name string) (*int64, error) {
	if n, err := strconv.ParseInt(h.Get(name), 10, 64); err == nil && n < 0 {
		return nil, azerr.New(azerr.InvalidInput)
	}
	return optInt(h, name, 0, 1<<63-1)
}

// getPageRanges is Get Page Ranges (optionally a diff with prevsnapshot).
func (h *handler) getPageRanges(rq *req) error {
	cond, err := rq.cond()
	if err != nil {
		return err
	}
	start, end, has, err := httpx.ReadRange(rq.r.Header)
	if err != nil {
		return err
	}
	if !has {
		start, end = 0, -1
	}
	prev := rq.q.Get("prevsnapshot")
	if prev != "" && !blob.ValidSnapshot(prev) {
		return azerr.InvalidQuery("prevsnapshot", prev, "")
	}
	pr, err := h.svc.GetPageRanges(rq.ctx(), rq.ref(), start, end, prev, cond)
	if err != nil {
		return err
	}
	out := rq.w.Header()
	setETag(out, pr.Blob.ETag, pr.Blob.Modified)
	out.Set("X-Ms-Blob-Content-Length", strconv.FormatInt(pr.Blob.Size, 10))
	type item struct {
		r     blob.PageRange
		clear bool
	}
	var items []item
	for _, r := range pr.Pages {
		items = append(items, item{r, false})
	}
	for _, r := range pr.Clear {
		items = append(items, item{r, true})
	}
	sort.Slice(items, func(i, j int) bool { return items[i].r.Start < items[j].r.Start })
	var b strings.Builder
	b.WriteString("<PageList>")
	for _, it := range items {
		el := "PageRange"
		if it.clear {
			el = "ClearRange"
		}
		b.WriteString("<" + el + "><Start>" + strconv.FormatInt(it.r.Start, 10) + "</Start><End>" + strconv.FormatInt(it.r.End, 10) + "</End></" + el + ">")
	}
	b.WriteString("</PageList>")
	return writeXML(rq, http.StatusOK, b.String())
}

// appendBlock is Append Block.
func (h *handler) appendBlock(rq *req) error {
	hd := rq.r.Header
	cond, err := rq.cond()
	if err != nil {
		return err
	}
	ar := blob.AppendRequest{Cond: cond}
	if ar.AppendPos, err = optInt(hd, "x-ms-blob-condition-appendpos", 0, 1<<62); err != nil {
		return err
	}
	if ar.MaxSize, err = optInt(hd, "x-ms-blob-condition-maxsize", 0, 1<<62); err != nil {
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
	pos, err := optInt(rq.r.Header, "x-ms-blob-condition-appendpos", 0, 1<<62)
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

// sourceRef resolves a copy source URL on this server.
func sourceRef(raw string) (blob.Ref, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return blob.Ref{}, azerr.InvalidHeader("x-ms-copy-source", raw)
	}
	p := strings.TrimPrefix(u.EscapedPath(), "/")
	host := u.Hostname()
	var acct string
	if net.ParseIP(host) != nil || !strings.Contains(host, ".") || host == "host.docker.internal" {
		acct, p, _ = strings.Cut(p, "/")
	} else {
		acct, _, _ = strings.Cut(host, ".")
	}
	acct = strings.TrimSuffix(acct, "-secondary")
	cpart, bpart, ok := strings.Cut(p, "/")
	if !ok || bpart == "" {
		return blob.Ref{}, azerr.InvalidHeader("x-ms-copy-source", raw)
	}
	c, err1 := url.PathUnescape(cpart)
	b, err2 := url.PathUnescape(bpart)
	if err1 != nil || err2 != nil {
		return blob.Ref{}, azerr.InvalidHeader("x-ms-copy-source", raw)
	}
	b = strings.ReplaceAll(b, `\`, "/")
	snap := u.Query().Get("snapshot")
	if snap != "" && !blob.ValidSnapshot(snap) {
		return blob.Ref{}, azerr.InvalidHeader("x-ms-copy-source", raw)
	}
	return blob.Ref{Account: acct, Container: c, Name: b, Snapshot: snap}, nil
}

// copyBlob is Copy Blob and Copy Blob From URL (x-ms-requires-sync) for a
// source on this server; both complete synchronously.
func (h *handler) copyBlob(rq *req) error {
	if err := rq.validName(); err != nil {
		return err
	}
	return h.doCopy(rq, false)
}

func (h *handler) doCopy(rq *req, fromURL bool) error {
	hd := rq.r.Header
	srcURL := hd.Get("X-Ms-Copy-Source")
	src, err := sourceRef(srcURL)
	if err != nil {
		return err
	}
	if err := h.authorizeSource(rq, srcURL, src); err != nil {
		return err
	}
	cond, err := rq.cond()
	if err != nil {
		return err
	}
	cond.CreateOnly = rq.createOnly
	if err := h.scopeCond(rq, &cond); err != nil {
		return err
	}
	scond, err := rq.sourceCond()
	if err != nil {
		return err
	}
	meta, err := rq.metadata()
	if err != nil {
		return err
	}
	tags, err := rq.tagsHeader()
	if err != nil {
		return err
	}
	tier, err := tierHeader(rq)
	if err != nil {
		return err
	}
	if rq.snapshot != "" {
		return azerr.New(azerr.InvalidOperation)
	}
	syncCopy := strings.EqualFold(hd.Get("X-Ms-Requires-Sync"), "true")
	cr := blob.CopyRequest{Dst: rq.ref(), Src: src, SourceURL: srcURL, Tags: tags, Cond: cond, SrcCond: scond, FromURL: fromURL, Tier: tier,
		Rehydrate: !fromURL && !syncCopy}
	switch opt := hd.Get("X-Ms-Copy-Source-Tag-Option"); {
	case opt == "" || strings.EqualFold(opt, "REPLACE"):
	case strings.EqualFold(opt, "COPY"):
		// The source's tags, or the request's: not both.
		if hd.Get("X-Ms-Tags") != "" {
			return azerr.InvalidHeader("x-ms-copy-source-tag-option", opt)
		}
		cr.CopyTags = true
	default:
		return azerr.InvalidHeader("x-ms-copy-source-tag-option", opt)
	}
	if v := hd.Get("X-Ms-Seal-Blob"); v != "" {
		seal, err := strconv.ParseBool(v)
		if err != nil {
			return azerr.InvalidHeader("x-ms-seal-blob", v)
		}
		cr.Seal = &seal
	}
	if len(meta) > 0 || fromURL {
		cr.Meta = meta
	}
	if fromURL {
		if !strings.EqualFold(hd.Get("X-Ms-Copy-Source-Blob-Properties"), "false") {
			cr.Props = nil
		} else {
			p, err := rq.props(true)
			if err != nil {
				return err
			}
			cr.Props = &p
		}
		if hd.Get("X-Ms-Blob-Content-Type") != "" || hd.Get("X-Ms-Blob-Content-Encoding") != "" || hd.Get("X-Ms-Blob-Cache-Control") != "" ||
			hd.Get("X-Ms-Blob-Content-Language") != "" || hd.Get("X-Ms-Blob-Content-Disposition") != "" || hd.Get("X-Ms-Blob-Content-Md5") != "" {
			p, err := rq.props(false)
			if err != nil {
				return err
			}
			cr.Props = &p
		}
	}
	var srcSum srcSums
	if strings.HasSuffix(rq.info.Operation, "FromURL") {
		if srcSum, err = h.verifySource(rq, src, 0, -1, &cr.SrcCond); err != nil {
			return err
		}
	}
	copyID := guid.NewString()
	b, err := h.svc.CopyBlob(rq.ctx(), cr, copyID)
	if err != nil {
		return err
	}
	out := rq.w.Header()
	setETag(out, b.ETag, b.Modified)
	if fromURL {
		if len(b.Props.ContentMD5) > 0 {
			out.Set("Content-Md5", base64.StdEncoding.EncodeToString(b.Props.ContentMD5))
		}
		srcSum.respond(out)
		out.Set("X-Ms-Request-Server-Encrypted", "true")
		rq.status(http.StatusCreated)
		return nil
	}
	out.Set("X-Ms-Copy-Id", copyID)
	out.Set("X-Ms-Copy-Status", "success")
	if v := hd.Get("X-Ms-Source-Content-Md5"); syncCopy && v != "" {
		// Copy Blob From URL answers with Content-MD5 only when the
		// request sent the source's, and echoes it.
		out.Set("Content-Md5", v)
	}
	rq.status(http.StatusAccepted)
	return nil
}

// putBlobFromURL is Put Blob From URL for a source on this server.
func (h *handler) putBlobFromURL(rq *req) error {
	if err := rq.validName(); err != nil {
		return err
	}
	if bt := rq.r.Header.Get("X-Ms-Blob-Type"); bt != blob.BlockBlob {
		return azerr.InvalidHeader("x-ms-blob-type", bt)
	}
	if n, err := rq.contentLength(0); err != nil || n != 0 {
		return azerr.InvalidHeader("Content-Length", strconv.FormatInt(rq.r.ContentLength, 10))
	}
	return h.doCopy(rq, true)
}

// putBlockFromURL is Put Block From URL for a source on this server.
func (h *handler) putBlockFromURL(rq *req) error {
	if err := rq.validName(); err != nil {
		return err
	}
	id, err := rq.blockID()
	if err != nil {
		return err
	}
	srcURL := rq.r.Header.Get("X-Ms-Copy-Source")
	src, err := sourceRef(srcURL)
	if err != nil {
		return err
	}
	if err := h.authorizeSource(rq, srcURL, src); err != nil {
		return err
	}
	scond, err := rq.sourceCond()
	if err != nil {
		return err
	}
	off, n := int64(0), int64(-1)
	if v := rq.r.Header.Get("X-Ms-Source-Range"); v != "" {
		s, e, ok := httpx.ParseRange(v, true)
		if !ok {
			return azerr.InvalidHeader("x-ms-source-range", v)
		}
		off = s
		if e >= 0 {
			n = e - s + 1
		}
	}
	if rq.snapshot != "" {
		return azerr.New(azerr.InvalidOperation)
	}
	cond := blob.Cond{LeaseID: rq.r.Header.Get("X-Ms-Lease-Id")}
	srcSum, err := h.verifySource(rq, src, off, n, &scond)
	if err != nil {
		return err
	}
	if err := h.svc.PutBlockFromURL(rq.ctx(), rq.ref(), id, src, off, n, scond, cond); err != nil {
		return err
	}
	srcSum.respond(rq.w.Header())
	rq.w.Header().Set("X-Ms-Request-Server-Encrypted", "true")
	rq.status(http.StatusCreated)
	return nil
}

// abortCopy is Abort Copy Blob.
func (h *handler) abortCopy(rq *req) error {
	if a := rq.r.Header.Get("X-Ms-Copy-Action"); !strings.EqualFold(a, "abort") {
		if a == "" {
			return azerr.MissingHeader("x-ms-copy-action")
		}
		return azerr.InvalidHeader("x-ms-copy-action", a)
	}
	id := rq.q.Get("copyid")
	if id == "" {
		return azerr.New(azerr.MissingRequiredQueryParameter).WithDetail("QueryParameterName", "copyid")
	}
	// Copy ids are GUIDs: any other value is refused before the blob is
	// looked up, as Azure does.
	if _, ok := guid.Parse(id); !ok {
		return azerr.InvalidQuery("copyid", id, "")
	}
	if err := h.svc.AbortCopy(rq.ctx(), rq.ref(), id, blob.Cond{LeaseID: rq.r.Header.Get("X-Ms-Lease-Id")}); err != nil {
		return err
	}
	rq.status(http.StatusNoContent)
	return nil
}

type tagsXML struct {
	XMLName xml.Name `xml:"Tags"`
	Tags    []struct {
		Key   string `xml:"Key"`
		Value string `xml:"Value"`
	} `xml:"TagSet>Tag"`
}

// getTags is Get Blob Tags.
func (h *handler) getTags(rq *req) error {
	cond, err := rq.tagsCond()
	if err != nil {
		return err
	}
	tags, err := h.svc.GetTags(rq.ctx(), rq.ref(), cond)
	if err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString("<Tags><TagSet>")
	for _, kv := range blob.SortTags(tags) {
		b.WriteString("<Tag><Key>" + azerr.EscapeXML(kv[0]) + "</Key><Value>" + azerr.EscapeXML(kv[1]) + "</Value></Tag>")
	}
	b.WriteString("</TagSet></Tags>")
	return writeXML(rq, http.StatusOK, b.String())
}

// setTags is Set Blob Tags.
func (h *handler) setTags(rq *req) error {
	cond, err := rq.tagsCond()
	if err != nil {
		return err
	}
	body, err := readBody(rq, 1<<20)
	if err != nil {
		return err
	}
	var tags []blob.KV
	if len(bytes.TrimSpace(body)) > 0 {
		var doc tagsXML
		if err := xml.Unmarshal(body, &doc); err != nil {
			return azerr.New(azerr.InvalidXmlDocument)
		}
		for _, t := range doc.Tags {
			tags = append(tags, blob.KV{t.Key, t.Value})
		}
	}
	if rq.snapshot != "" && rq.info.Version < "2020-08-04" {
		// A snapshot's tags can be set from version 2020-08-04 on.
		return azerr.New(azerr.InvalidOperation)
	}
	if err := h.svc.SetTags(rq.ctx(), rq.ref(), tags, cond); err != nil {
		return err
	}
	rq.status(http.StatusNoContent)
	return nil
}

// setTier is Set Blob Tier.
func (h *handler) setTier(rq *req) error {
	tier, err := tierHeader(rq)
	if err != nil {
		return err
	}
	if tier == "" {
		return azerr.MissingHeader("x-ms-access-tier")
	}
	priority := rq.r.Header.Get("X-Ms-Rehydrate-Priority")
	switch {
	case priority == "":
	case strings.EqualFold(priority, "Standard"):
		priority = "Standard"
	case strings.EqualFold(priority, "High"):
		priority = "High"
	default:
		return azerr.InvalidHeader("x-ms-rehydrate-priority", priority)
	}
	cond := blob.Cond{LeaseID: rq.r.Header.Get("X-Ms-Lease-Id"), IfTags: rq.r.Header.Get("X-Ms-If-Tags")}
	rehydrated, err := h.svc.SetTier(rq.ctx(), rq.ref(), tier, priority, cond)
	if err != nil {
		return err
	}
	if rehydrated {
		// Leaving the archive tier is a rehydration: Azure accepts it
		// with 202; here it completes at once.
		rq.status(http.StatusAccepted)
		return nil
	}
	rq.status(http.StatusOK)
	return nil
}

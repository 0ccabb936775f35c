package blobhttp

import (
	"encoding/base64"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/blob"
	"github.com/lazuli-storage/lazuli/internal/conditional"
	"github.com/lazuli-storage/lazuli/internal/content"
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
	// The names are spelled as the servers give header keys: a lowercase
	// name costs Get a canonicalization and an allocation.
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
		ContentType:        get("X-Ms-Blob-Content-Type", "Content-Type"),
		ContentEncoding:    get("X-Ms-Blob-Content-Encoding", "Content-Encoding"),
		ContentLanguage:    get("X-Ms-Blob-Content-Language", "Content-Language"),
		ContentDisposition: get("X-Ms-Blob-Content-Disposition", ""),
		CacheControl:       get("X-Ms-Blob-Cache-Control", "Cache-Control"),
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

// newVersionAndSums reads what a write of a whole new version (Put Blob,
// Put Block List) takes from its headers: the new version (useStandard
// as for newVersion), with the create-only and encryption scope
// conditions, and the transactional checksums of the body.
func (h *handler) newVersionAndSums(rq *req, useStandard bool) (newVersion, txSums, error) {
	nv, err := rq.newVersion(useStandard)
	if err != nil {
		return nv, txSums{}, err
	}
	nv.cond.CreateOnly = rq.createOnly
	if err := h.scopeCond(rq, &nv.cond); err != nil {
		return nv, txSums{}, err
	}
	sums, err := rq.txChecksums()
	return nv, sums, err
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
	nv, sums, err := h.newVersionAndSums(rq, true)
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
	if pr.Protect, err = h.protection(rq); err != nil {
		return err
	}
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
			if seq, err := optInt(hd, "X-Ms-Blob-Sequence-Number", 0, 1<<63-1); err != nil {
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
	versionHeader(out, b)
	rq.status(http.StatusCreated)
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
	// deletetype is "permanent" or "none" in any case (the SDKs send
	// Permanent and None).
	if dt, ok := rq.q["deletetype"]; ok && !(len(dt) == 1 && strings.EqualFold(dt[0], "none")) {
		if len(dt) != 1 || !strings.EqualFold(dt[0], "permanent") {
			return azerr.InvalidQuery("deletetype", strings.Join(dt, ","), "")
		}
		if err := h.svc.PermanentDelete(rq.ctx(), rq.ref()); err != nil {
			return err
		}
		rq.w.Header().Set("X-Ms-Delete-Type-Permanent", "true")
		rq.status(http.StatusAccepted)
		return nil
	}
	kept, err := h.svc.DeleteBlobKept(rq.ctx(), rq.ref(), ds, cond)
	if err != nil {
		return err
	}
	rq.w.Header().Set("X-Ms-Delete-Type-Permanent", strconv.FormatBool(!kept))
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
	if sp.NewSize, err = optInt(hd, "X-Ms-Blob-Content-Length", 0, blob.MaxPageBlobSize); err != nil {
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
	if sp.Seq, err = optInt(hd, "X-Ms-Blob-Sequence-Number", 0, 1<<63-1); err != nil {
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
	get := h.svc.GetBlobMetadata
	if rq.r.Method == http.MethodHead {
		// HEAD reaches the blob without reading it (on an HNS account,
		// execute on its ancestors is enough, as for its properties).
		get = h.svc.GetBlobProperties
	}
	b, err := get(rq.ctx(), rq.ref(), cond, rq.info.Version)
	if err != nil {
		return err
	}
	setETag(rq.w.Header(), b.ETag, b.Modified)
	writeMeta(rq.w.Header(), b.Meta)
	rq.status(http.StatusOK)
	return nil
}

// condAndMeta reads the conditions and then the metadata of a request
// (Set Blob Metadata, Snapshot Blob), in the order of their errors.
func (rq *req) condAndMeta() (blob.Cond, []blob.KV, error) {
	cond, err := rq.cond()
	if err != nil {
		return cond, nil, err
	}
	meta, err := rq.metadata()
	return cond, meta, err
}

// setBlobMetadata is Set Blob Metadata.
func (h *handler) setBlobMetadata(rq *req) error {
	cond, meta, err := rq.condAndMeta()
	if err != nil {
		return err
	}
	b, err := h.svc.SetBlobMetadata(rq.ctx(), rq.ref(), meta, cond)
	if err != nil {
		return err
	}
	setETag(rq.w.Header(), b.ETag, b.Modified)
	rq.w.Header().Set("X-Ms-Request-Server-Encrypted", "true")
	versionHeader(rq.w.Header(), b)
	rq.scope = b.EncryptionScope
	rq.status(http.StatusOK)
	return nil
}

// snapshotBlob is Snapshot Blob.
func (h *handler) snapshotBlob(rq *req) error {
	cond, meta, err := rq.condAndMeta()
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

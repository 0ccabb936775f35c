package blobhttp

import (
	"encoding/base64"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/blob"
	"github.com/lazuli-storage/lazuli/internal/guid"
	"github.com/lazuli-storage/lazuli/internal/httpx"
)

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
	// A version source (promoting a version is copying it over its blob).
	if v := u.Query().Get("versionid"); v != "" {
		if snap != "" || !blob.ValidSnapshot(v) {
			return blob.Ref{}, azerr.InvalidHeader("x-ms-copy-source", raw)
		}
		snap = blob.VersionKey(v)
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
	if cr.Protect, err = h.protection(rq); err != nil {
		return err
	}
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
	versionHeader(out, b)
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

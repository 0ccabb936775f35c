package blobhttp

import (
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/blob"
	"github.com/lazuli-storage/lazuli/internal/httpx"
)

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
	if pr.Seq.LE, err = seqCond(hd, "X-Ms-If-Sequence-Number-Le"); err != nil {
		return err
	}
	if pr.Seq.LT, err = seqCond(hd, "X-Ms-If-Sequence-Number-Lt"); err != nil {
		return err
	}
	if pr.Seq.EQ, err = seqCond(hd, "X-Ms-If-Sequence-Number-Eq"); err != nil {
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

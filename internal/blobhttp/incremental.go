package blobhttp

import (
	"net/http"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/blob"
	"github.com/lazuli-storage/lazuli/internal/guid"
)

// incrementalCopy is Incremental Copy Blob: the destination page blob
// becomes a copy of a source page blob snapshot (a URL with snapshot=),
// and the copy leaves a snapshot of the destination. Like Copy Blob on
// this server it completes at once; the answer still says "pending", as
// Azure's always does, and Get Blob Properties then reports success.
func (h *handler) incrementalCopy(rq *req) error {
	if err := rq.validName(); err != nil {
		return err
	}
	srcURL := rq.r.Header.Get("X-Ms-Copy-Source")
	if srcURL == "" {
		return azerr.MissingHeader("x-ms-copy-source")
	}
	src, err := sourceRef(srcURL)
	if err != nil {
		return err
	}
	if src.Snapshot == "" {
		// The source of an incremental copy must be a snapshot.
		return azerr.InvalidHeader("x-ms-copy-source", srcURL)
	}
	if err := h.authorizeSource(rq, srcURL, src); err != nil {
		return err
	}
	cond, err := rq.cond()
	if err != nil {
		return err
	}
	if rq.snapshot != "" {
		return azerr.New(azerr.InvalidOperation)
	}
	copyID := guid.NewString()
	b, err := h.svc.CopyBlob(rq.ctx(), blob.CopyRequest{Dst: rq.ref(), Src: src, SourceURL: srcURL, Cond: cond, Incremental: true}, copyID)
	if err != nil {
		return err
	}
	out := rq.w.Header()
	setETag(out, b.ETag, b.Modified)
	out.Set("X-Ms-Copy-Id", copyID)
	out.Set("X-Ms-Copy-Status", "pending")
	rq.status(http.StatusAccepted)
	return nil
}

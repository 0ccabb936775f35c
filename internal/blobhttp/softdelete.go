package blobhttp

import "net/http"

// undeleteBlob is Undelete Blob: the soft-deleted blob and its
// soft-deleted snapshots come back.
func (h *handler) undeleteBlob(rq *req) error {
	if err := h.svc.Undelete(rq.ctx(), rq.ref()); err != nil {
		return err
	}
	rq.status(http.StatusOK)
	return nil
}

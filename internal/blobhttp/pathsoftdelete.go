package blobhttp

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/blob"
)

// listDeletedPaths is List Blobs with showonly=deleted (the Data Lake
// SDKs' List Deleted Paths): the deleted path entries of an account with
// a hierarchical namespace, each with its DeletionId. A delimiter is
// ignored, as the entries are whole deleted paths; showonly is offered
// only on such an account (400 InvalidQueryParameterValue otherwise).
func (h *handler) listDeletedPaths(rq *req, max int) ([]blob.ListItem, string, error) {
	if !h.svc.HierarchicalNamespace(rq.info.Account) {
		return nil, "", azerr.InvalidQuery("showonly", "deleted", "")
	}
	paths, next, err := h.svc.ListDeletedPaths(rq.ctx(), rq.info.Account, rq.container, rq.q.Get("prefix"), rq.q.Get("marker"), max)
	if err != nil {
		return nil, "", err
	}
	items := make([]blob.ListItem, len(paths))
	for i, p := range paths {
		items[i] = blob.ListItem{Blob: p.Blob, Deleted: &p.Deleted, DeletionID: p.DeletionID}
	}
	return items, next, nil
}

// undeletePath is Undelete Blob with x-ms-undelete-source (the Data Lake
// SDKs' Undelete Path): "[path]?deletionid=<id>" names the deleted entry
// of the request's path to bring back; the answer names its resource
// type.
func (h *handler) undeletePath(rq *req, source string) error {
	_, query, _ := strings.Cut(source, "?")
	q, err := url.ParseQuery(query)
	id := ""
	if err == nil {
		id = q.Get("deletionid")
	}
	if id == "" {
		return azerr.InvalidHeader("x-ms-undelete-source", source)
	}
	dir, err := h.svc.UndeletePath(rq.ctx(), rq.ref(), id)
	if err != nil {
		return err
	}
	rt := "file"
	if dir {
		rt = "directory"
	}
	rq.w.Header().Set("X-Ms-Resource-Type", rt)
	rq.status(http.StatusOK)
	return nil
}

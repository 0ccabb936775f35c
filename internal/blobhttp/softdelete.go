package blobhttp

import (
	"net/http"
	"sort"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/blob"
)

// undeleteBlob is Undelete Blob: the soft-deleted blob and its
// soft-deleted snapshots come back.
func (h *handler) undeleteBlob(rq *req) error {
	if src := rq.r.Header.Get("X-Ms-Undelete-Source"); src != "" {
		return h.undeletePath(rq, src)
	}
	if err := h.svc.Undelete(rq.ctx(), rq.ref()); err != nil {
		return err
	}
	rq.status(http.StatusOK)
	return nil
}

// listedContainer is one entry of List Containers: a container, or (with
// deleted set) a soft-deleted one.
type listedContainer struct {
	c       *blob.Container
	deleted *blob.DeletedContainer
}

// withDeleted merges, for include=deleted, the soft-deleted containers
// whose names fall in this page (from the marker up to next) into the live
// ones, in name order; they do not count toward maxresults.
func (h *handler) withDeleted(rq *req, live []*blob.Container, next string, include bool) ([]listedContainer, error) {
	out := make([]listedContainer, 0, len(live))
	for _, c := range live {
		out = append(out, listedContainer{c: c})
	}
	if !include {
		return out, nil
	}
	ds, err := h.svc.ListDeletedContainers(rq.ctx(), rq.info.Account, rq.q.Get("prefix"))
	if err != nil {
		return nil, err
	}
	marker := rq.q.Get("marker")
	now := h.d.Now()
	for _, d := range ds {
		if d.Container.Name < marker || next != "" && d.Container.Name >= next {
			continue
		}
		c := d.Container
		c.AsOf = now
		out = append(out, listedContainer{c: &c, deleted: d})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].c.Name < out[j].c.Name })
	return out, nil
}

// restoreContainer is Restore Container: the soft-deleted container named
// by x-ms-deleted-container-name and -version comes back under its name.
func (h *handler) restoreContainer(rq *req) error {
	name := rq.r.Header.Get("X-Ms-Deleted-Container-Name")
	version := rq.r.Header.Get("X-Ms-Deleted-Container-Version")
	if name == "" {
		return azerr.New(azerr.MissingRequiredHeader).WithDetail("HeaderName", "x-ms-deleted-container-name")
	}
	if version == "" {
		return azerr.New(azerr.MissingRequiredHeader).WithDetail("HeaderName", "x-ms-deleted-container-version")
	}
	if name != rq.container {
		// Azure restores a container under its own name only.
		return azerr.InvalidHeader("x-ms-deleted-container-name", name)
	}
	c, err := h.svc.RestoreContainer(rq.ctx(), rq.info.Account, name, version)
	if err != nil {
		return err
	}
	setETag(rq.w.Header(), c.ETag, c.Modified)
	rq.status(http.StatusCreated)
	return nil
}

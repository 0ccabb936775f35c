package blobhttp

import (
	"github.com/lazuli-storage/lazuli/internal/blob"
	"github.com/lazuli-storage/lazuli/internal/conditional"
)

// tagsCond parses the conditions of Get and Set Blob Tags: x-ms-lease-id,
// x-ms-if-tags, and the blob's own ETag and date conditions, which these
// operations take as x-ms-blob-if-match, x-ms-blob-if-none-match,
// x-ms-blob-if-modified-since and x-ms-blob-if-unmodified-since (the plain
// If-* headers would apply to the tags, which have no ETag).
func (rq *req) tagsCond() (blob.Cond, error) {
	h := rq.r.Header
	c, err := conditional.Parse(h.Values("X-Ms-Blob-If-Match"), h.Values("X-Ms-Blob-If-None-Match"),
		h.Values("X-Ms-Blob-If-Modified-Since"), h.Values("X-Ms-Blob-If-Unmodified-Since"))
	if err != nil {
		return blob.Cond{}, err
	}
	return blob.Cond{Conditions: c, LeaseID: h.Get("X-Ms-Lease-Id"), IfTags: h.Get("X-Ms-If-Tags")}, nil
}

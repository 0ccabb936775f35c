package blobhttp

import (
	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/blob"
)

// hnsRefused answers the Blob operations an account with a hierarchical
// namespace does not offer: page blobs (Put Blob of a page blob, Put
// Page, Put Page From URL, Get Page Ranges) and Incremental Copy Blob, as
// Azure's known issues of Data Lake Storage list them, with 409
// BlobOperationNotSupported (the Blob error catalog's code for an
// operation the account's namespace does not support). Append blobs are
// supported there.
func (h *handler) hnsRefused(rq *req, opName string) error {
	if !h.svc.HierarchicalNamespace(rq.info.Account) {
		return nil
	}
	switch opName {
	case "PutPage", "GetPageRanges", "IncrementalCopyBlob":
	case "PutBlob":
		// Put Blob From URL makes block blobs only and answers a page
		// blob type with its own 400, on every account.
		if rq.r.Header.Get("X-Ms-Blob-Type") != blob.PageBlob {
			return nil
		}
	default:
		return nil
	}
	return azerr.New(azerr.BlobOperationNotSupported)
}

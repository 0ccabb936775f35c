package blobhttp

import (
	"net/http"

	"github.com/lazuli-storage/lazuli/internal/blob"
)

// versionHeader answers x-ms-version-id for a write that made a version.
func versionHeader(h http.Header, b *blob.Blob) {
	if b.VersionID != "" {
		h.Set("X-Ms-Version-Id", b.VersionID)
	}
}

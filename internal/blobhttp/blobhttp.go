// Package blobhttp is the HTTP surface of the Blob service: it decodes
// requests, runs the operation and encodes Azure's responses.
package blobhttp

import (
	"net/http"

	"github.com/lazuli-storage/lazuli/internal/httpx"
)

// New returns the Blob service handler.
func New(d httpx.Deps) http.Handler {
	_ = d
	return httpx.NotImplemented()
}

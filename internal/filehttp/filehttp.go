// Package filehttp is the HTTP surface of the File service: it decodes
// requests, runs the operation and encodes Azure's responses.
package filehttp

import (
	"net/http"

	"github.com/lazuli-storage/lazuli/internal/httpx"
)

// New returns the File service handler.
func New(d httpx.Deps) http.Handler {
	_ = d
	return httpx.NotImplemented()
}

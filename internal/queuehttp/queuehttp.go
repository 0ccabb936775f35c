// Package queuehttp is the HTTP surface of the Queue service: it decodes
// requests, runs the operation and encodes Azure's responses.
package queuehttp

import (
	"net/http"

	"github.com/lazuli-storage/lazuli/internal/httpx"
)

// New returns the Queue service handler.
func New(d httpx.Deps) http.Handler {
	_ = d
	return httpx.NotImplemented()
}

// Package tablehttp is the HTTP surface of the Table service: it decodes
// requests, runs the operation and encodes Azure's responses.
package tablehttp

import (
	"net/http"

	"github.com/lazuli-storage/lazuli/internal/httpx"
)

// New returns the Table service handler.
func New(d httpx.Deps) http.Handler {
	_ = d
	return httpx.NotImplemented()
}

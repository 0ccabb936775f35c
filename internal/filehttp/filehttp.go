// Package filehttp is the HTTP surface of the File service. It fits
// behind httpx's wrapper (account, authentication, common headers) like
// the other services' HTTP packages, and the server builds it with New
// from httpx.Deps; for now it answers every request with httpx's
// not-implemented response.
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

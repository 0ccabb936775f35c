package server

import (
	"net/http"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/h1"
	"github.com/lazuli-storage/lazuli/internal/httpx"
)

// h1 bounds request heads: the per-request limits (MaxURIBytes,
// MaxFieldBytes, MaxHeaderBytes) and the server-wide budget of head bytes
// read before a handler runs. A refused head is answered with
// an Azure error of the listener's service (headRefusal), through the
// service's own plumbing (httpx.WithRefusal), so that it carries a request
// id, x-ms-error-code and the service's error body like any other error.
//
// Azure's front end answers such heads itself (HTTP.sys's "Request URL Too
// Long", "Request Header Fields Too Long"), without an Azure error code;
// lazuli answers 400 with one instead, so that every refusal a client sees
// is a well-formed Azure error.

// headRefusal is the Azure error for a head refused with one of h1's limit
// errors.
func headRefusal(err error) *azerr.Error {
	switch err {
	case h1.ErrURITooLong:
		return azerr.Newf(azerr.InvalidUri, "The request URL is longer than the %d bytes the server accepts.", h1.MaxURIBytes)
	case h1.ErrFieldTooLong:
		return azerr.Newf(azerr.InvalidHeaderValue, "A request header field is longer than the %d bytes the server accepts.", h1.MaxFieldBytes)
	case h1.ErrOverBudget:
		return azerr.New(azerr.ServerBusy)
	}
	return azerr.Newf(azerr.InvalidHeaderValue, "The request headers are larger than the %d bytes the server accepts.", h1.MaxHeaderBytes)
}

// refusedBy returns the h1.Server.Refused hook that answers through h.
func refusedBy(h http.Handler) func(http.ResponseWriter, *http.Request, error) {
	return func(w http.ResponseWriter, r *http.Request, err error) {
		h.ServeHTTP(w, r.WithContext(httpx.WithRefusal(r.Context(), headRefusal(err))))
	}
}

package queuehttp

import (
	"net/http"

	"github.com/lazuli-storage/lazuli/internal/cors"
	"github.com/lazuli-storage/lazuli/internal/httpx"
)

// preflight answers an OPTIONS request from the account's CORS rules.
// Preflight requests carry no credentials and are never authorized.
func (h *handler) preflight(w http.ResponseWriter, r *http.Request, info *httpx.Info) error {
	info.Operation = "PreflightRequest"
	return cors.Answer(w, r, func() ([]cors.Rule, error) {
		props, err := h.svc.GetServiceProperties(r.Context(), info.Account)
		return corsRules(props.Cors), err
	})
}

// corsHeaders adds the CORS response headers of an actual cross-origin
// request (one with an Origin header).
func (h *handler) corsHeaders(w http.ResponseWriter, r *http.Request, account string) {
	props, err := h.svc.GetServiceProperties(r.Context(), account)
	if err != nil {
		return
	}
	cors.Actual(corsRules(props.Cors), r.Method, r.Header, w.Header())
}

package queuehttp

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/httpx"
	"github.com/lazuli-storage/lazuli/internal/queue"
)

func originAllowed(origin string, rule queue.CorsRule) bool {
	for _, o := range splitList(rule.AllowedOrigins) {
		if o == "*" || strings.EqualFold(o, origin) {
			return true
		}
	}
	return false
}

func methodAllowed(method string, rule queue.CorsRule) bool {
	for _, m := range splitList(rule.AllowedMethods) {
		if m == method {
			return true
		}
	}
	return false
}

// headersAllowed checks every requested header against the rule's allowed
// headers: "*", an exact name, or a prefix ending in "*".
func headersAllowed(requested string, rule queue.CorsRule) bool {
	allowed := splitList(rule.AllowedHeaders)
	for _, h := range splitList(requested) {
		ok := false
		for _, a := range allowed {
			if a == "*" || strings.EqualFold(a, h) ||
				(strings.HasSuffix(a, "*") && len(h) >= len(a)-1 && strings.EqualFold(h[:len(a)-1], a[:len(a)-1])) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// preflight answers an OPTIONS request from the account's CORS rules.
// Preflight requests carry no credentials and are never authorized.
func (h *handler) preflight(w http.ResponseWriter, r *http.Request, info *httpx.Info) error {
	info.Operation = "PreflightRequest"
	origin := r.Header.Get("Origin")
	if origin == "" {
		return azerr.Newf("InvalidHeaderValue", "A required CORS header is not present.").WithDetail("HeaderName", "Origin")
	}
	method := r.Header.Get("Access-Control-Request-Method")
	if method == "" {
		return azerr.Newf("InvalidHeaderValue", "A required CORS header is not present.").WithDetail("HeaderName", "Access-Control-Request-Method")
	}
	reqHeaders := r.Header.Get("Access-Control-Request-Headers")
	props, err := h.svc.GetServiceProperties(r.Context(), info.Account)
	if err != nil {
		return err
	}
	for _, rule := range props.Cors {
		if !originAllowed(origin, rule) || !methodAllowed(method, rule) || !headersAllowed(reqHeaders, rule) {
			continue
		}
		hd := w.Header()
		hd.Set("Access-Control-Allow-Origin", origin)
		hd.Set("Access-Control-Allow-Methods", method)
		if reqHeaders != "" {
			hd.Set("Access-Control-Allow-Headers", reqHeaders)
		}
		hd.Set("Access-Control-Max-Age", strconv.Itoa(rule.MaxAgeInSeconds))
		hd.Set("Access-Control-Allow-Credentials", "true")
		hd.Set("Content-Length", "0")
		w.WriteHeader(http.StatusOK)
		return nil
	}
	return azerr.New("CorsPreflightFailure")
}

// corsHeaders adds the CORS response headers of the first rule matching
// an actual cross-origin request (one with an Origin header).
func (h *handler) corsHeaders(w http.ResponseWriter, r *http.Request, account, origin string) {
	props, err := h.svc.GetServiceProperties(r.Context(), account)
	if err != nil || len(props.Cors) == 0 {
		return
	}
	hd := w.Header()
	hd.Set("Vary", "Origin")
	for _, rule := range props.Cors {
		if !originAllowed(origin, rule) || !methodAllowed(r.Method, rule) {
			continue
		}
		if strings.TrimSpace(rule.AllowedOrigins) == "*" {
			hd.Set("Access-Control-Allow-Origin", "*")
		} else {
			hd.Set("Access-Control-Allow-Origin", origin)
			hd.Set("Access-Control-Allow-Credentials", "true")
		}
		if rule.ExposedHeaders != "" {
			hd.Set("Access-Control-Expose-Headers", rule.ExposedHeaders)
		}
		return
	}
}

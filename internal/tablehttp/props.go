package tablehttp

import (
	"net/http"
	"strings"
	"time"

	"github.com/lazuli-storage/lazuli/internal/acl"
	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/cors"
	"github.com/lazuli-storage/lazuli/internal/httpx"
	"github.com/lazuli-storage/lazuli/internal/svcprops"
	"github.com/lazuli-storage/lazuli/internal/table"
)

// Get Table ACL.
func (h *handler) getACL(rq *req) error {
	ids, err := h.svc.GetACL(rq.r.Context(), rq.info.Account, rq.res.table)
	if err != nil {
		return err
	}
	doc := make([]acl.Identifier, 0, len(ids))
	for _, si := range ids {
		p := &acl.Policy{}
		if si.HasStart {
			s := acl.FormatTime(si.Start)
			p.Start = &s
		}
		if si.HasExpiry {
			s := acl.FormatTime(si.Expiry)
			p.Expiry = &s
		}
		if si.HasPermission {
			p.Permission = &si.Permission
		}
		doc = append(doc, acl.Identifier{ID: si.ID, Policy: p})
	}
	httpx.WriteXML(rq.w, rq.r, http.StatusOK, acl.Render(doc))
	return nil
}

// Set Table ACL. Package acl checks the document; the table service checks
// the permission letters.
func (h *handler) setACL(rq *req) error {
	body, err := readBody(rq.r, 64<<10)
	if err != nil {
		return err
	}
	ids, err := acl.Parse(body)
	if err != nil {
		return err
	}
	var out []table.SignedIdentifier
	for _, id := range ids {
		si := table.SignedIdentifier{ID: id.ID}
		if p := id.Policy; p != nil {
			if p.Start != nil && strings.TrimSpace(*p.Start) != "" {
				si.Start, si.HasStart = parsedTime(*p.Start), true
			}
			if p.Expiry != nil && strings.TrimSpace(*p.Expiry) != "" {
				si.Expiry, si.HasExpiry = parsedTime(*p.Expiry), true
			}
			if p.Permission != nil {
				si.Permission, si.HasPermission = *p.Permission, true
			}
		}
		out = append(out, si)
	}
	if err := h.svc.SetACL(rq.r.Context(), rq.info.Account, rq.res.table, out); err != nil {
		return err
	}
	rq.w.WriteHeader(http.StatusNoContent)
	return nil
}

// parsedTime reads a policy time acl.Parse has already checked.
func parsedTime(s string) time.Time {
	t, _ := acl.ParseTime(s)
	return t
}

// Service properties: the document is package svcprops; table stores its
// parts in its own types.

func retentionDays(r svcprops.Retention) int {
	if r.Enabled {
		return r.Days
	}
	return 0
}

func toMetrics(m *svcprops.Metrics) *table.Metrics {
	if m == nil {
		return nil
	}
	return &table.Metrics{Version: m.Version, Enabled: m.Enabled, IncludeAPIs: m.IncludeAPIs,
		RetentionEnabled: m.RetentionPolicy.Enabled, RetentionDays: retentionDays(m.RetentionPolicy)}
}

func fromMetrics(m *table.Metrics) *svcprops.Metrics {
	if m == nil {
		return nil
	}
	return &svcprops.Metrics{Version: m.Version, Enabled: m.Enabled, IncludeAPIs: m.IncludeAPIs,
		RetentionPolicy: svcprops.Retention{Enabled: m.RetentionEnabled, Days: m.RetentionDays}}
}

// corsRules converts the stored rules for package cors.
func corsRules(rules []table.CorsRule) []cors.Rule {
	out := make([]cors.Rule, 0, len(rules))
	for _, r := range rules {
		out = append(out, cors.Rule(r))
	}
	return out
}

// Get Table Service Properties.
func (h *handler) getServiceProperties(rq *req) error {
	p, err := h.svc.GetServiceProperties(rq.r.Context(), rq.info.Account)
	if err != nil {
		return err
	}
	doc := svcprops.Properties{HourMetrics: fromMetrics(p.HourMetrics), MinuteMetrics: fromMetrics(p.MinuteMetrics), Cors: corsRules(p.Cors)}
	if l := p.Logging; l != nil {
		doc.Logging = &svcprops.Logging{Version: l.Version, Delete: l.Delete, Read: l.Read, Write: l.Write,
			RetentionPolicy: svcprops.Retention{Enabled: l.RetentionEnabled, Days: l.RetentionDays}}
	}
	httpx.WriteXML(rq.w, rq.r, http.StatusOK, svcprops.Render(doc))
	return nil
}

// Set Table Service Properties.
func (h *handler) setServiceProperties(rq *req) error {
	body, err := readBody(rq.r, 64<<10)
	if err != nil {
		return err
	}
	in, err := svcprops.Parse(body)
	if err != nil {
		return err
	}
	p := &table.ServiceProperties{HourMetrics: toMetrics(in.HourMetrics), MinuteMetrics: toMetrics(in.MinuteMetrics)}
	if l := in.Logging; l != nil {
		p.Logging = &table.Logging{Version: l.Version, Delete: l.Delete, Read: l.Read, Write: l.Write,
			RetentionEnabled: l.RetentionPolicy.Enabled, RetentionDays: retentionDays(l.RetentionPolicy)}
	}
	if in.HasCors {
		p.CorsSet = true
		p.Cors = []table.CorsRule{}
		for _, c := range in.Cors {
			p.Cors = append(p.Cors, table.CorsRule(c))
		}
	}
	if err := h.svc.SetServiceProperties(rq.r.Context(), rq.info.Account, p); err != nil {
		return err
	}
	rq.w.WriteHeader(http.StatusAccepted)
	return nil
}

// Get Table Service Stats. Azure answers it on the secondary endpoint
// only (account name with "-secondary"); on the primary it is 400
// InvalidQueryParameterValue.
func (h *handler) getServiceStats(rq *req) error {
	if !secondaryEndpoint(rq.r) {
		return azerr.New(azerr.InvalidQueryParameterValue).WithDetail("QueryParameterName", "restype").WithDetail("QueryParameterValue", "service")
	}
	httpx.WriteXML(rq.w, rq.r, http.StatusOK, svcprops.RenderStats(h.d.Now()))
	return nil
}

// preflight answers a CORS OPTIONS request from the stored rules.
// Preflight requests carry no credentials and are never authorized.
func (h *handler) preflight(w http.ResponseWriter, r *http.Request, info *httpx.Info) {
	err := cors.Answer(w, r, func() ([]cors.Rule, error) {
		p, err := h.svc.GetServiceProperties(r.Context(), info.Account)
		if err != nil {
			return nil, err
		}
		return corsRules(p.Cors), nil
	})
	if err != nil {
		httpx.WriteError(w, r, err)
	}
}

// corsHeaders adds the CORS response headers of an actual cross-origin
// request.
func (h *handler) corsHeaders(w http.ResponseWriter, r *http.Request, info *httpx.Info) {
	p, err := h.svc.GetServiceProperties(r.Context(), info.Account)
	if err != nil {
		return
	}
	cors.Actual(corsRules(p.Cors), r.Method, r.Header, w.Header())
}

// secondaryEndpoint reports whether r addressed the account's secondary
// endpoint: "<account>-secondary" as the first path segment (path-style
// URLs) or the first host label.
func secondaryEndpoint(r *http.Request) bool {
	seg, _, _ := strings.Cut(strings.TrimPrefix(r.URL.EscapedPath(), "/"), "/")
	host, _, _ := strings.Cut(r.Host, ".")
	return strings.HasSuffix(seg, "-secondary") || strings.HasSuffix(host, "-secondary")
}

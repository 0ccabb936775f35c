package blobhttp

import (
	"encoding/base64"
	"encoding/xml"
	"net/http"
	"strings"

	"github.com/lazuli-storage/lazuli/internal/blob"
	"github.com/lazuli-storage/lazuli/internal/cors"
	"github.com/lazuli-storage/lazuli/internal/svcprops"
)

func encodeB64Marker(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

func decodeB64Marker(s string) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	return string(b), err
}

// blobExtras are the service properties elements only Blob knows, with
// the values an account reports before any Set.
func blobExtras() []svcprops.Extra {
	return []svcprops.Extra{
		{XMLName: xml.Name{Local: "DeleteRetentionPolicy"}, Inner: "<Enabled>false</Enabled>"},
		{XMLName: xml.Name{Local: "StaticWebsite"}, Inner: "<Enabled>false</Enabled>"},
	}
}

// blobExtraOrder lists the elements Blob keeps beyond the shared ones, in
// the order Azure renders them; other elements of a Set body are ignored.
func blobExtraOrder() []string {
	return []string{"DefaultServiceVersion", "DeleteRetentionPolicy", "StaticWebsite"}
}

// sortExtras keeps Blob's elements in Azure's order, dropping unknown ones.
func sortExtras(in []svcprops.Extra) []svcprops.Extra {
	var out []svcprops.Extra
	for _, name := range blobExtraOrder() {
		for _, e := range in {
			if e.XMLName.Local == name {
				out = append(out, e)
				break
			}
		}
	}
	return out
}

// storedServiceProps returns the account's Blob service properties
// document, or the defaults before any Set.
func storedServiceProps(p *blob.ServiceProps) (svcprops.Properties, error) {
	if len(p.XML) == 0 {
		d := svcprops.Defaults()
		d.Extra = blobExtras()
		return d, nil
	}
	return svcprops.ParseStored(p.XML)
}

// corsRules converts the stored rules for package cors.
func corsRules(p *blob.ServiceProps) []cors.Rule {
	rules := make([]cors.Rule, 0, len(p.Cors))
	for _, r := range p.Cors {
		rules = append(rules, cors.Rule{AllowedOrigins: strings.Join(r.AllowedOrigins, ","), AllowedMethods: strings.Join(r.AllowedMethods, ","),
			AllowedHeaders: strings.Join(r.AllowedHeaders, ","), ExposedHeaders: strings.Join(r.ExposedHeaders, ","), MaxAgeInSeconds: r.MaxAgeInSeconds})
	}
	return rules
}

// getServiceProps is Get Blob Service Properties.
func (h *handler) getServiceProps(rq *req) error {
	p, err := h.svc.GetServiceProps(rq.ctx(), rq.info.Account)
	if err != nil {
		return err
	}
	doc, err := storedServiceProps(p)
	if err != nil {
		return err
	}
	return writeXML(rq, http.StatusOK, svcprops.Render(doc))
}

// setServiceProps is Set Blob Service Properties: elements present replace
// the stored ones, absent ones are kept.
func (h *handler) setServiceProps(rq *req) error {
	body, err := readBody(rq, 1<<20)
	if err != nil {
		return err
	}
	in, err := svcprops.Parse(body)
	if err != nil {
		return err
	}
	in.Extra = sortExtras(in.Extra)
	cur, err := h.svc.GetServiceProps(rq.ctx(), rq.info.Account)
	if err != nil {
		return err
	}
	doc, err := storedServiceProps(cur)
	if err != nil {
		return err
	}
	doc.Merge(in)
	doc.Extra = sortExtras(doc.Extra)
	rules := make([]blob.CorsRule, 0, len(doc.Cors))
	for _, r := range doc.Cors {
		rules = append(rules, blob.CorsRule{AllowedOrigins: cors.List(r.AllowedOrigins), AllowedMethods: cors.List(r.AllowedMethods),
			AllowedHeaders: cors.List(r.AllowedHeaders), ExposedHeaders: cors.List(r.ExposedHeaders), MaxAgeInSeconds: r.MaxAgeInSeconds})
	}
	if err := h.svc.SetServiceProps(rq.ctx(), rq.info.Account, &blob.ServiceProps{XML: []byte(svcprops.Render(doc)), Cors: rules}); err != nil {
		return err
	}
	rq.status(http.StatusAccepted)
	return nil
}

// preflight answers a CORS preflight (OPTIONS) from the stored rules.
// Preflight requests carry no credentials and are never authorized.
func (h *handler) preflight(rq *req) error {
	rq.info.Operation = "CorsPreflight"
	return cors.Answer(rq.w, rq.r, func() ([]cors.Rule, error) {
		p, err := h.svc.GetServiceProps(rq.ctx(), rq.info.Account)
		if err != nil {
			return nil, err
		}
		return corsRules(p), nil
	})
}

// applyCors adds the CORS response headers of an actual cross-origin
// request.
func (h *handler) applyCors(rq *req) {
	p, err := h.svc.GetServiceProps(rq.ctx(), rq.info.Account)
	if err != nil {
		return
	}
	cors.Actual(corsRules(p), rq.r.Method, rq.r.Header, rq.w.Header())
}

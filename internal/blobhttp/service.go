package blobhttp

import (
	"encoding/base64"
	"encoding/xml"
	"net/http"
	"strconv"
	"strings"

	"github.com/lazuli-storage/lazuli/internal/auth"
	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/blob"
)

func encodeB64Marker(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

func decodeB64Marker(s string) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	return string(b), err
}

// rawXML keeps an element's content verbatim.
type rawXML struct {
	Inner string `xml:",innerxml"`
}

type corsRuleXML struct {
	AllowedOrigins  string `xml:"AllowedOrigins"`
	AllowedMethods  string `xml:"AllowedMethods"`
	AllowedHeaders  string `xml:"AllowedHeaders"`
	ExposedHeaders  string `xml:"ExposedHeaders"`
	MaxAgeInSeconds int    `xml:"MaxAgeInSeconds"`
}

type serviceXML struct {
	XMLName       xml.Name `xml:"StorageServiceProperties"`
	Logging       *rawXML  `xml:"Logging"`
	HourMetrics   *rawXML  `xml:"HourMetrics"`
	MinuteMetrics *rawXML  `xml:"MinuteMetrics"`
	Cors          *struct {
		Rules []corsRuleXML `xml:"CorsRule"`
	} `xml:"Cors"`
	DefaultServiceVersion *string `xml:"DefaultServiceVersion"`
	DeleteRetentionPolicy *rawXML `xml:"DeleteRetentionPolicy"`
	StaticWebsite         *rawXML `xml:"StaticWebsite"`
}

func defaultServiceXML() *serviceXML {
	return &serviceXML{
		Logging:               &rawXML{"<Version>1.0</Version><Read>false</Read><Write>false</Write><Delete>false</Delete><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy>"},
		HourMetrics:           &rawXML{"<Version>1.0</Version><Enabled>false</Enabled><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy>"},
		MinuteMetrics:         &rawXML{"<Version>1.0</Version><Enabled>false</Enabled><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy>"},
		DeleteRetentionPolicy: &rawXML{"<Enabled>false</Enabled>"},
		StaticWebsite:         &rawXML{"<Enabled>false</Enabled>"},
	}
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// getServiceProps is Get Blob Service Properties.
func (h *handler) getServiceProps(rq *req) error {
	rq.info.Operation = "GetBlobServiceProperties"
	if err := h.authorize(rq, auth.Access{Resource: auth.ResService, Perms: "r", AccountPerms: "r", ServiceSASDenied: true}); err != nil {
		return err
	}
	p, err := h.svc.GetServiceProps(rq.ctx(), rq.info.Account)
	if err != nil {
		return err
	}
	doc := defaultServiceXML()
	if len(p.XML) > 0 {
		doc = &serviceXML{}
		if err := xml.Unmarshal(p.XML, doc); err != nil {
			return err
		}
	}
	if doc.Cors == nil {
		doc.Cors = &struct {
			Rules []corsRuleXML `xml:"CorsRule"`
		}{}
	}
	out, err := xml.Marshal(doc)
	if err != nil {
		return err
	}
	return writeXML(rq, http.StatusOK, string(out))
}

// setServiceProps is Set Blob Service Properties: elements present replace
// the stored ones, absent ones are kept.
func (h *handler) setServiceProps(rq *req) error {
	rq.info.Operation = "SetBlobServiceProperties"
	if err := h.authorize(rq, auth.Access{Resource: auth.ResService, Perms: "w", AccountPerms: "w", ServiceSASDenied: true}); err != nil {
		return err
	}
	body, err := readBody(rq, 1<<20)
	if err != nil {
		return err
	}
	var in serviceXML
	if err := xml.Unmarshal(body, &in); err != nil {
		return azerr.New("InvalidXmlDocument")
	}
	cur, err := h.svc.GetServiceProps(rq.ctx(), rq.info.Account)
	if err != nil {
		return err
	}
	doc := defaultServiceXML()
	if len(cur.XML) > 0 {
		doc = &serviceXML{}
		if err := xml.Unmarshal(cur.XML, doc); err != nil {
			return err
		}
	}
	if in.Logging != nil {
		doc.Logging = in.Logging
	}
	if in.HourMetrics != nil {
		doc.HourMetrics = in.HourMetrics
	}
	if in.MinuteMetrics != nil {
		doc.MinuteMetrics = in.MinuteMetrics
	}
	if in.DefaultServiceVersion != nil {
		doc.DefaultServiceVersion = in.DefaultServiceVersion
	}
	if in.DeleteRetentionPolicy != nil {
		doc.DeleteRetentionPolicy = in.DeleteRetentionPolicy
	}
	if in.StaticWebsite != nil {
		doc.StaticWebsite = in.StaticWebsite
	}
	rules := cur.Cors
	if in.Cors != nil {
		if len(in.Cors.Rules) > 5 {
			return azerr.New("InvalidXmlDocument")
		}
		rules = nil
		for _, r := range in.Cors.Rules {
			cr := blob.CorsRule{AllowedOrigins: splitList(r.AllowedOrigins), AllowedMethods: splitList(r.AllowedMethods),
				AllowedHeaders: splitList(r.AllowedHeaders), ExposedHeaders: splitList(r.ExposedHeaders), MaxAgeInSeconds: r.MaxAgeInSeconds}
			if len(cr.AllowedOrigins) == 0 || len(cr.AllowedMethods) == 0 || r.MaxAgeInSeconds < 0 {
				return azerr.New("InvalidXmlNodeValue")
			}
			for _, m := range cr.AllowedMethods {
				switch strings.ToUpper(m) {
				case "DELETE", "GET", "HEAD", "MERGE", "POST", "OPTIONS", "PUT", "PATCH":
				default:
					return azerr.New("InvalidXmlNodeValue")
				}
			}
			rules = append(rules, cr)
		}
		doc.Cors = in.Cors
	}
	out, err := xml.Marshal(doc)
	if err != nil {
		return err
	}
	if err := h.svc.SetServiceProps(rq.ctx(), rq.info.Account, &blob.ServiceProps{XML: out, Cors: rules}); err != nil {
		return err
	}
	rq.status(http.StatusAccepted)
	return nil
}

func originMatches(rule blob.CorsRule, origin string) bool {
	for _, o := range rule.AllowedOrigins {
		if o == "*" || strings.EqualFold(o, origin) {
			return true
		}
	}
	return false
}

func methodMatches(rule blob.CorsRule, method string) bool {
	for _, m := range rule.AllowedMethods {
		if strings.EqualFold(m, method) {
			return true
		}
	}
	return false
}

func headerMatches(allowed []string, h string) bool {
	h = strings.ToLower(strings.TrimSpace(h))
	for _, a := range allowed {
		a = strings.ToLower(a)
		if a == "*" || a == h || strings.HasSuffix(a, "*") && strings.HasPrefix(h, strings.TrimSuffix(a, "*")) {
			return true
		}
	}
	return false
}

// preflight answers a CORS preflight (OPTIONS) from the stored rules.
func (h *handler) preflight(rq *req) error {
	rq.info.Operation = "CorsPreflight"
	origin := rq.r.Header.Get("Origin")
	method := rq.r.Header.Get("Access-Control-Request-Method")
	if origin == "" {
		return h.fail(rq, azerr.MissingHeader("Origin"))
	}
	if method == "" {
		return h.fail(rq, azerr.MissingHeader("Access-Control-Request-Method"))
	}
	p, err := h.svc.GetServiceProps(rq.ctx(), rq.info.Account)
	if err != nil {
		return h.fail(rq, err)
	}
	reqHeaders := splitList(rq.r.Header.Get("Access-Control-Request-Headers"))
	for _, rule := range p.Cors {
		if !originMatches(rule, origin) || !methodMatches(rule, method) {
			continue
		}
		ok := true
		for _, hd := range reqHeaders {
			if !headerMatches(rule.AllowedHeaders, hd) {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		hd := rq.w.Header()
		allowOrigin := origin
		if len(rule.AllowedOrigins) == 1 && rule.AllowedOrigins[0] == "*" {
			allowOrigin = "*"
		} else {
			hd.Set("Access-Control-Allow-Credentials", "true")
		}
		hd.Set("Access-Control-Allow-Origin", allowOrigin)
		hd.Set("Access-Control-Allow-Methods", strings.ToUpper(method))
		if len(reqHeaders) > 0 {
			hd.Set("Access-Control-Allow-Headers", strings.Join(reqHeaders, ","))
		}
		hd.Set("Access-Control-Max-Age", strconv.Itoa(rule.MaxAgeInSeconds))
		hd.Set("Vary", "Origin")
		rq.status(http.StatusOK)
		return nil
	}
	return h.fail(rq, azerr.New("CorsPreflightFailure"))
}

func (h *handler) fail(_ *req, err error) error { return err }

// applyCors adds the CORS response headers of the first rule matching the
// request's origin and method.
func (h *handler) applyCors(rq *req, origin string) {
	p, err := h.svc.GetServiceProps(rq.ctx(), rq.info.Account)
	if err != nil {
		return
	}
	for _, rule := range p.Cors {
		if !originMatches(rule, origin) || !methodMatches(rule, rq.r.Method) {
			continue
		}
		hd := rq.w.Header()
		if len(rule.AllowedOrigins) == 1 && rule.AllowedOrigins[0] == "*" {
			hd.Set("Access-Control-Allow-Origin", "*")
		} else {
			hd.Set("Access-Control-Allow-Origin", origin)
			hd.Set("Access-Control-Allow-Credentials", "true")
		}
		if len(rule.ExposedHeaders) > 0 {
			hd.Set("Access-Control-Expose-Headers", strings.Join(rule.ExposedHeaders, ","))
		}
		hd.Set("Vary", "Origin")
		return
	}
}

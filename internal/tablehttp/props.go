package tablehttp

import (
	"encoding/xml"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/lazuli-storage/lazuli/internal/auth"
	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/httpx"
	"github.com/lazuli-storage/lazuli/internal/table"
)

// XML shapes of Table ACL (the SignedIdentifiers document shared with
// Blob, Queue and File) and of the service properties.

type xmlAccessPolicy struct {
	Start      *string `xml:"Start"`
	Expiry     *string `xml:"Expiry"`
	Permission *string `xml:"Permission"`
}

type xmlSignedIdentifier struct {
	ID           string           `xml:"Id"`
	AccessPolicy *xmlAccessPolicy `xml:"AccessPolicy"`
}

type xmlSignedIdentifiers struct {
	XMLName     xml.Name              `xml:"SignedIdentifiers"`
	Identifiers []xmlSignedIdentifier `xml:"SignedIdentifier"`
}

const aclTime = "2006-01-02T15:04:05.0000000Z"

func parseACLTime(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04Z", "2006-01-02", "2006-01-02T15:04:05"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, azerr.Newf("InvalidXmlNodeValue", "The date %q is not valid.", s)
}

func writeXML(w http.ResponseWriter, status int, v any) {
	out, _ := xml.Marshal(v)
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	w.Write([]byte(xml.Header[:len(xml.Header)-1]))
	w.Write(out)
}

// Get Table ACL.
func (h *handler) getACL(w http.ResponseWriter, r *http.Request, info *httpx.Info, name string) error {
	if err := h.authorize(r, info, auth.Access{Resource: auth.ResContainer, Perms: "-", AccountPerms: "r", ServiceSASDenied: true, Container: name}); err != nil {
		return err
	}
	acl, err := h.svc.GetACL(r.Context(), info.Account, name)
	if err != nil {
		return err
	}
	doc := xmlSignedIdentifiers{Identifiers: []xmlSignedIdentifier{}}
	for _, si := range acl {
		x := xmlSignedIdentifier{ID: si.ID, AccessPolicy: &xmlAccessPolicy{}}
		if si.HasStart {
			s := si.Start.UTC().Format(aclTime)
			x.AccessPolicy.Start = &s
		}
		if si.HasExpiry {
			s := si.Expiry.UTC().Format(aclTime)
			x.AccessPolicy.Expiry = &s
		}
		if si.HasPermission {
			p := si.Permission
			x.AccessPolicy.Permission = &p
		}
		doc.Identifiers = append(doc.Identifiers, x)
	}
	writeXML(w, http.StatusOK, doc)
	return nil
}

// Set Table ACL.
func (h *handler) setACL(w http.ResponseWriter, r *http.Request, info *httpx.Info, name string) error {
	if err := h.authorize(r, info, auth.Access{Resource: auth.ResContainer, Perms: "-", AccountPerms: "w", ServiceSASDenied: true, Container: name}); err != nil {
		return err
	}
	body, err := readBody(r, 64<<10)
	if err != nil {
		return err
	}
	var acl []table.SignedIdentifier
	if len(strings.TrimSpace(string(body))) > 0 {
		var doc xmlSignedIdentifiers
		if err := xml.Unmarshal(body, &doc); err != nil {
			return azerr.New("InvalidXmlDocument")
		}
		for _, x := range doc.Identifiers {
			si := table.SignedIdentifier{ID: x.ID}
			if ap := x.AccessPolicy; ap != nil {
				if ap.Start != nil && strings.TrimSpace(*ap.Start) != "" {
					if si.Start, err = parseACLTime(*ap.Start); err != nil {
						return err
					}
					si.HasStart = true
				}
				if ap.Expiry != nil && strings.TrimSpace(*ap.Expiry) != "" {
					if si.Expiry, err = parseACLTime(*ap.Expiry); err != nil {
						return err
					}
					si.HasExpiry = true
				}
				if ap.Permission != nil {
					si.Permission, si.HasPermission = *ap.Permission, true
				}
			}
			acl = append(acl, si)
		}
	}
	if err := h.svc.SetACL(r.Context(), info.Account, name, acl); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

type xmlRetention struct {
	Enabled bool `xml:"Enabled"`
	Days    *int `xml:"Days,omitempty"`
}

type xmlLogging struct {
	Version         string       `xml:"Version"`
	Delete          bool         `xml:"Delete"`
	Read            bool         `xml:"Read"`
	Write           bool         `xml:"Write"`
	RetentionPolicy xmlRetention `xml:"RetentionPolicy"`
}

type xmlMetrics struct {
	Version         string       `xml:"Version"`
	Enabled         bool         `xml:"Enabled"`
	IncludeAPIs     *bool        `xml:"IncludeAPIs,omitempty"`
	RetentionPolicy xmlRetention `xml:"RetentionPolicy"`
}

type xmlCorsRule struct {
	AllowedOrigins  string `xml:"AllowedOrigins"`
	AllowedMethods  string `xml:"AllowedMethods"`
	MaxAgeInSeconds int    `xml:"MaxAgeInSeconds"`
	ExposedHeaders  string `xml:"ExposedHeaders"`
	AllowedHeaders  string `xml:"AllowedHeaders"`
}

type xmlCors struct {
	Rules []xmlCorsRule `xml:"CorsRule"`
}

type xmlServiceProperties struct {
	XMLName       xml.Name    `xml:"StorageServiceProperties"`
	Logging       *xmlLogging `xml:"Logging"`
	HourMetrics   *xmlMetrics `xml:"HourMetrics"`
	MinuteMetrics *xmlMetrics `xml:"MinuteMetrics"`
	Cors          *xmlCors    `xml:"Cors"`
}

func retention(enabled bool, days int) xmlRetention {
	r := xmlRetention{Enabled: enabled}
	if enabled {
		d := days
		r.Days = &d
	}
	return r
}

func metricsToXML(m *table.Metrics) *xmlMetrics {
	if m == nil {
		return nil
	}
	x := &xmlMetrics{Version: m.Version, Enabled: m.Enabled, RetentionPolicy: retention(m.RetentionEnabled, m.RetentionDays)}
	if m.Enabled {
		x.IncludeAPIs = m.IncludeAPIs
		if x.IncludeAPIs == nil {
			f := false
			x.IncludeAPIs = &f
		}
	}
	return x
}

func metricsFromXML(x *xmlMetrics) (*table.Metrics, error) {
	if x == nil {
		return nil, nil
	}
	m := &table.Metrics{Version: x.Version, Enabled: x.Enabled, IncludeAPIs: x.IncludeAPIs, RetentionEnabled: x.RetentionPolicy.Enabled}
	if x.RetentionPolicy.Days != nil {
		m.RetentionDays = *x.RetentionPolicy.Days
	}
	if m.RetentionEnabled && (m.RetentionDays < 1 || m.RetentionDays > 365) {
		return nil, azerr.New("InvalidXmlDocument")
	}
	if m.Version == "" {
		m.Version = "1.0"
	}
	return m, nil
}

// Get Table Service Properties.
func (h *handler) getServiceProperties(w http.ResponseWriter, r *http.Request, info *httpx.Info) error {
	if err := h.authorize(r, info, auth.Access{Resource: auth.ResService, Perms: "r", AccountPerms: "r", ServiceSASDenied: true}); err != nil {
		return err
	}
	p, err := h.svc.GetServiceProperties(r.Context(), info.Account)
	if err != nil {
		return err
	}
	doc := xmlServiceProperties{Cors: &xmlCors{}}
	if l := p.Logging; l != nil {
		doc.Logging = &xmlLogging{Version: l.Version, Delete: l.Delete, Read: l.Read, Write: l.Write, RetentionPolicy: retention(l.RetentionEnabled, l.RetentionDays)}
	}
	doc.HourMetrics = metricsToXML(p.HourMetrics)
	doc.MinuteMetrics = metricsToXML(p.MinuteMetrics)
	for _, c := range p.Cors {
		doc.Cors.Rules = append(doc.Cors.Rules, xmlCorsRule{AllowedOrigins: c.AllowedOrigins, AllowedMethods: c.AllowedMethods,
			MaxAgeInSeconds: c.MaxAgeInSeconds, ExposedHeaders: c.ExposedHeaders, AllowedHeaders: c.AllowedHeaders})
	}
	writeXML(w, http.StatusOK, doc)
	return nil
}

// Set Table Service Properties.
func (h *handler) setServiceProperties(w http.ResponseWriter, r *http.Request, info *httpx.Info) error {
	if err := h.authorize(r, info, auth.Access{Resource: auth.ResService, Perms: "w", AccountPerms: "w", ServiceSASDenied: true}); err != nil {
		return err
	}
	body, err := readBody(r, 64<<10)
	if err != nil {
		return err
	}
	var doc xmlServiceProperties
	if err := xml.Unmarshal(body, &doc); err != nil {
		return azerr.New("InvalidXmlDocument")
	}
	p := &table.ServiceProperties{}
	if l := doc.Logging; l != nil {
		p.Logging = &table.Logging{Version: l.Version, Delete: l.Delete, Read: l.Read, Write: l.Write, RetentionEnabled: l.RetentionPolicy.Enabled}
		if l.RetentionPolicy.Days != nil {
			p.Logging.RetentionDays = *l.RetentionPolicy.Days
		}
		if p.Logging.Version == "" {
			p.Logging.Version = "1.0"
		}
	}
	if p.HourMetrics, err = metricsFromXML(doc.HourMetrics); err != nil {
		return err
	}
	if p.MinuteMetrics, err = metricsFromXML(doc.MinuteMetrics); err != nil {
		return err
	}
	if doc.Cors != nil {
		p.CorsSet = true
		p.Cors = []table.CorsRule{}
		for _, c := range doc.Cors.Rules {
			if c.AllowedOrigins == "" || c.AllowedMethods == "" || c.MaxAgeInSeconds < 0 {
				return azerr.New("InvalidXmlNodeValue")
			}
			for _, m := range strings.Split(c.AllowedMethods, ",") {
				switch strings.ToUpper(strings.TrimSpace(m)) {
				case "DELETE", "GET", "HEAD", "MERGE", "POST", "OPTIONS", "PUT", "PATCH", "CONNECT", "TRACE":
				default:
					return azerr.New("InvalidXmlNodeValue")
				}
			}
			p.Cors = append(p.Cors, table.CorsRule{AllowedOrigins: c.AllowedOrigins, AllowedMethods: c.AllowedMethods,
				AllowedHeaders: c.AllowedHeaders, ExposedHeaders: c.ExposedHeaders, MaxAgeInSeconds: c.MaxAgeInSeconds})
		}
	}
	if err := h.svc.SetServiceProperties(r.Context(), info.Account, p); err != nil {
		return err
	}
	w.WriteHeader(http.StatusAccepted)
	return nil
}

// Get Table Service Stats: an emulator has one live location.
func (h *handler) getServiceStats(w http.ResponseWriter, r *http.Request, info *httpx.Info) error {
	if err := h.authorize(r, info, auth.Access{Resource: auth.ResService, Perms: "r", AccountPerms: "r", ServiceSASDenied: true}); err != nil {
		return err
	}
	type geo struct {
		Status       string `xml:"Status"`
		LastSyncTime string `xml:"LastSyncTime"`
	}
	type stats struct {
		XMLName xml.Name `xml:"StorageServiceStats"`
		Geo     geo      `xml:"GeoReplication"`
	}
	writeXML(w, http.StatusOK, stats{Geo: geo{Status: "live", LastSyncTime: h.d.Now().UTC().Format(http.TimeFormat)}})
	return nil
}

// matchCors finds the first rule allowing origin and method.
func matchCors(rules []table.CorsRule, origin, method string, headers []string) *table.CorsRule {
	for i := range rules {
		rule := &rules[i]
		if !listMatch(rule.AllowedOrigins, origin, false) || !listMatch(rule.AllowedMethods, method, false) {
			continue
		}
		ok := true
		for _, hname := range headers {
			if hname = strings.TrimSpace(hname); hname != "" && !listMatch(rule.AllowedHeaders, hname, true) {
				ok = false
				break
			}
		}
		if ok {
			return rule
		}
	}
	return nil
}

// listMatch matches v against a comma-separated CORS list ("*" matches
// all; with prefixes, "x-ms-meta*" matches by prefix).
func listMatch(list, v string, prefixes bool) bool {
	for _, item := range strings.Split(list, ",") {
		item = strings.TrimSpace(item)
		switch {
		case item == "*":
			return true
		case strings.EqualFold(item, v):
			return true
		case prefixes && strings.HasSuffix(item, "*") && len(v) >= len(item)-1 && strings.EqualFold(v[:len(item)-1], item[:len(item)-1]):
			return true
		}
	}
	return false
}

// preflight answers a CORS OPTIONS request from the stored rules.
func (h *handler) preflight(w http.ResponseWriter, r *http.Request, info *httpx.Info) {
	origin := r.Header.Get("Origin")
	method := r.Header.Get("Access-Control-Request-Method")
	if origin == "" {
		httpx.WriteError(w, r, azerr.MissingHeader("Origin"))
		return
	}
	if method == "" {
		httpx.WriteError(w, r, azerr.MissingHeader("Access-Control-Request-Method"))
		return
	}
	p, err := h.svc.GetServiceProperties(r.Context(), info.Account)
	if err != nil {
		httpx.WriteError(w, r, err)
		return
	}
	var reqHeaders []string
	if v := r.Header.Get("Access-Control-Request-Headers"); v != "" {
		reqHeaders = strings.Split(v, ",")
	}
	rule := matchCors(p.Cors, origin, method, reqHeaders)
	if rule == nil {
		httpx.WriteError(w, r, azerr.New("CorsPreflightFailure"))
		return
	}
	hd := w.Header()
	if strings.TrimSpace(rule.AllowedOrigins) == "*" {
		hd.Set("Access-Control-Allow-Origin", "*")
	} else {
		hd.Set("Access-Control-Allow-Origin", origin)
		hd.Set("Access-Control-Allow-Credentials", "true")
		hd.Set("Vary", "Origin")
	}
	hd.Set("Access-Control-Allow-Methods", method)
	if v := r.Header.Get("Access-Control-Request-Headers"); v != "" {
		hd.Set("Access-Control-Allow-Headers", v)
	}
	hd.Set("Access-Control-Max-Age", itoa(rule.MaxAgeInSeconds))
	w.WriteHeader(http.StatusOK)
}

// corsHeaders adds the CORS response headers to an actual request whose
// Origin a rule allows.
func (h *handler) corsHeaders(w http.ResponseWriter, r *http.Request, info *httpx.Info) {
	p, err := h.svc.GetServiceProperties(r.Context(), info.Account)
	if err != nil || len(p.Cors) == 0 {
		return
	}
	origin := r.Header.Get("Origin")
	rule := matchCors(p.Cors, origin, r.Method, nil)
	if rule == nil {
		return
	}
	hd := w.Header()
	if strings.TrimSpace(rule.AllowedOrigins) == "*" {
		hd.Set("Access-Control-Allow-Origin", "*")
	} else {
		hd.Set("Access-Control-Allow-Origin", origin)
		hd.Set("Access-Control-Allow-Credentials", "true")
		hd.Add("Vary", "Origin")
	}
	if rule.ExposedHeaders != "" {
		hd.Set("Access-Control-Expose-Headers", rule.ExposedHeaders)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

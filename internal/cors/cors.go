// Package cors holds the Cross-Origin Resource Sharing rules of the Azure
// Storage services: the <Cors> element of Set/Get Service Properties, its
// validation, the evaluation of preflight (OPTIONS) requests and the
// Access-Control-* headers of actual cross-origin requests.
//
// Blob, Queue and Table (and later Files) keep their rules in their own
// stores; each converts them to Rule and lets this package decide.
package cors

import (
	"encoding/xml"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/lazuli-storage/lazuli/internal/azerr"
)

// MaxRules is how many CORS rules a service accepts.
const MaxRules = 5

// Rule is one CORS rule. The list fields keep the comma-separated text the
// client sent, so Get Service Properties returns it unchanged.
type Rule struct {
	AllowedOrigins  string
	AllowedMethods  string
	AllowedHeaders  string
	ExposedHeaders  string
	MaxAgeInSeconds int
}

// ruleXML is a <CorsRule> as decoded; pointers tell absent from empty.
type ruleXML struct {
	AllowedOrigins  *string `xml:"AllowedOrigins"`
	AllowedMethods  *string `xml:"AllowedMethods"`
	MaxAgeInSeconds *int    `xml:"MaxAgeInSeconds"`
	ExposedHeaders  *string `xml:"ExposedHeaders"`
	AllowedHeaders  *string `xml:"AllowedHeaders"`
}

// Element is the <Cors> element of a service properties document, as a
// field of the document's decoding struct.
type Element struct {
	Rules []ruleXML `xml:"CorsRule"`
}

// Decode parses a standalone <Cors> element. Syntax errors are
// InvalidXmlDocument; the rules are validated as by Element.Rules.
func Decode(body []byte) ([]Rule, error) {
	var e Element
	if err := xml.Unmarshal(body, &e); err != nil {
		return nil, azerr.New(azerr.InvalidXmlDocument)
	}
	return e.Validate()
}

// Validate checks the decoded rules and returns them: at most MaxRules
// (InvalidXmlDocument), and in each rule non-empty AllowedOrigins and
// AllowedMethods, a MaxAgeInSeconds of zero or more, and only the methods
// Azure allows (InvalidXmlNodeValue naming the element). AllowedHeaders
// and ExposedHeaders may be empty or absent.
func (e *Element) Validate() ([]Rule, error) {
	if len(e.Rules) > MaxRules {
		return nil, azerr.New(azerr.InvalidXmlDocument)
	}
	rules := e.Lenient()
	for i, x := range e.Rules {
		r := rules[i]
		if x.MaxAgeInSeconds == nil || r.MaxAgeInSeconds < 0 || len(List(r.AllowedOrigins)) == 0 || len(List(r.AllowedMethods)) == 0 {
			return nil, azerr.New(azerr.InvalidXmlNodeValue).WithDetail("XmlNodeName", "CorsRule")
		}
		for _, m := range List(r.AllowedMethods) {
			if !AllowedMethod(m) {
				return nil, azerr.New(azerr.InvalidXmlNodeValue).WithDetail("XmlNodeName", "AllowedMethods").WithDetail("XmlNodeValue", r.AllowedMethods)
			}
		}
	}
	return rules, nil
}

// Lenient returns the decoded rules without validating them, for
// documents that were validated when they were stored.
func (e *Element) Lenient() []Rule {
	rules := make([]Rule, 0, len(e.Rules))
	for _, x := range e.Rules {
		r := Rule{
			AllowedOrigins: deref(x.AllowedOrigins), AllowedMethods: deref(x.AllowedMethods),
			AllowedHeaders: deref(x.AllowedHeaders), ExposedHeaders: deref(x.ExposedHeaders),
		}
		if x.MaxAgeInSeconds != nil {
			r.MaxAgeInSeconds = *x.MaxAgeInSeconds
		}
		rules = append(rules, r)
	}
	return rules
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// AllowedMethod reports whether a CORS rule may name method. Azure takes
// the names in any case.
func AllowedMethod(m string) bool {
	switch strings.ToUpper(m) {
	case "DELETE", "GET", "HEAD", "MERGE", "POST", "OPTIONS", "PUT", "PATCH", "CONNECT", "TRACE":
		return true
	}
	return false
}

// Render writes the <Cors> element in Azure's element order; no rules
// render as <Cors />.
func Render(b *strings.Builder, rules []Rule) {
	esc := azerr.EscapeXMLText
	if len(rules) == 0 {
		b.WriteString("<Cors />")
		return
	}
	b.WriteString("<Cors>")
	for _, r := range rules {
		b.WriteString("<CorsRule><AllowedOrigins>")
		b.WriteString(esc(r.AllowedOrigins))
		b.WriteString("</AllowedOrigins><AllowedMethods>")
		b.WriteString(esc(r.AllowedMethods))
		b.WriteString("</AllowedMethods><MaxAgeInSeconds>")
		b.WriteString(strconv.Itoa(r.MaxAgeInSeconds))
		b.WriteString("</MaxAgeInSeconds><ExposedHeaders>")
		b.WriteString(esc(r.ExposedHeaders))
		b.WriteString("</ExposedHeaders><AllowedHeaders>")
		b.WriteString(esc(r.AllowedHeaders))
		b.WriteString("</AllowedHeaders></CorsRule>")
	}
	b.WriteString("</Cors>")
}

// List splits a comma-separated CORS list or header value, trimming blanks
// and dropping empty items.
func List(s string) []string {
	var out []string
	for p := range strings.SplitSeq(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// allowsAnyOrigin reports whether the rule's origins include "*".
func (r *Rule) allowsAnyOrigin() bool {
	return slices.Contains(List(r.AllowedOrigins), "*")
}

// originAllowed: "*", the origin itself, or a wildcard subdomain origin
// ("http://*.contoso.com", which matches any depth of subdomain of
// contoso.com with that scheme), all compared without case.
func (r *Rule) originAllowed(origin string) bool {
	for _, o := range List(r.AllowedOrigins) {
		if o == "*" || strings.EqualFold(o, origin) || wildcardOrigin(o, origin) {
			return true
		}
	}
	return false
}

// wildcardOrigin reports whether origin is a subdomain, at any depth, of
// the pattern "scheme://*.domain[:port]".
func wildcardOrigin(pattern, origin string) bool {
	scheme, rest, ok := strings.Cut(pattern, "://*.")
	if !ok || rest == "" {
		return false
	}
	prefix := scheme + "://"
	if len(origin) <= len(prefix) || !strings.EqualFold(origin[:len(prefix)], prefix) {
		return false
	}
	host := origin[len(prefix):]
	suffix := "." + rest
	return len(host) > len(suffix) && strings.EqualFold(host[len(host)-len(suffix):], suffix)
}

func (r *Rule) methodAllowed(method string) bool {
	for _, m := range List(r.AllowedMethods) {
		if strings.EqualFold(m, method) {
			return true
		}
	}
	return false
}

// headerAllowed: "*", the name itself, or a prefix ending in "*" such as
// "x-ms-meta-*"; names compare without case.
func (r *Rule) headerAllowed(name string) bool {
	for _, a := range List(r.AllowedHeaders) {
		if a == "*" || strings.EqualFold(a, name) {
			return true
		}
		if p, ok := strings.CutSuffix(a, "*"); ok && len(name) >= len(p) && strings.EqualFold(name[:len(p)], p) {
			return true
		}
	}
	return false
}

// Match returns the first rule allowing origin, method and every header
// of requestHeaders (a comma-separated list), or nil.
func Match(rules []Rule, origin, method, requestHeaders string) *Rule {
	headers := List(requestHeaders)
	for i := range rules {
		r := &rules[i]
		if !r.originAllowed(origin) || !r.methodAllowed(method) {
			continue
		}
		ok := true
		for _, h := range headers {
			if !r.headerAllowed(h) {
				ok = false
				break
			}
		}
		if ok {
			return r
		}
	}
	return nil
}

// missingHeader is Azure's 400 for a preflight without a CORS header.
func missingHeader(name string) error {
	return azerr.Newf(azerr.InvalidHeaderValue, "A required CORS header is not present.").WithDetail("HeaderName", name)
}

// CheckPreflight returns the 400 for a preflight request lacking Origin or
// Access-Control-Request-Method, before any rule is looked up.
func CheckPreflight(req http.Header) error {
	if req.Get("Origin") == "" {
		return missingHeader("Origin")
	}
	if req.Get("Access-Control-Request-Method") == "" {
		return missingHeader("Access-Control-Request-Method")
	}
	return nil
}

// Preflight evaluates a preflight (OPTIONS) request with headers req
// against rules. On a match it sets the Access-Control-* answer in out
// and returns nil; the caller then sends 200 with an empty body. It
// returns 400 InvalidHeaderValue when a CORS request header is missing
// and 403 CorsPreflightFailure when no rule matches.
//
// The answer echoes the origin (with Allow-Credentials), the requested
// method and the requested headers as sent, whether the rule names the
// origin or "*".
func Preflight(rules []Rule, req, out http.Header) error {
	if err := CheckPreflight(req); err != nil {
		return err
	}
	origin := req.Get("Origin")
	method := req.Get("Access-Control-Request-Method")
	reqHeaders := req.Get("Access-Control-Request-Headers")
	r := Match(rules, origin, method, reqHeaders)
	if r == nil {
		return azerr.New(azerr.CorsPreflightFailure)
	}
	out.Set("Access-Control-Allow-Origin", origin)
	out.Set("Access-Control-Allow-Methods", method)
	if reqHeaders != "" {
		out.Set("Access-Control-Allow-Headers", reqHeaders)
	}
	out.Set("Access-Control-Max-Age", strconv.Itoa(r.MaxAgeInSeconds))
	out.Set("Access-Control-Allow-Credentials", "true")
	out.Set("Vary", "Origin")
	out.Set("Content-Length", "0")
	return nil
}

// Answer answers a preflight request: it checks the CORS request headers
// before loading anything, then evaluates the rules load returns and, on
// a match, sends 200 with the Access-Control-* headers and no body. Any
// error is for the caller to render.
func Answer(w http.ResponseWriter, r *http.Request, load func() ([]Rule, error)) error {
	if err := CheckPreflight(r.Header); err != nil {
		return err
	}
	rules, err := load()
	if err != nil {
		return err
	}
	if err := Preflight(rules, r.Header, w.Header()); err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

// Actual sets the Access-Control-* headers of an actual request (one that
// is not a preflight) into out. method is the request's method; req its
// headers. Nothing is set without an Origin header or without rules.
//
// As Azure does: a rule allowing any origin answers "*" without
// credentials; a rule naming the origin echoes it with
// Allow-Credentials; the rule's ExposedHeaders are exposed; and GET and
// HEAD answers carry "Vary: Origin" unless the match was by "*", so a
// cache never hands one origin's answer to another.
func Actual(rules []Rule, method string, req, out http.Header) {
	origin := req.Get("Origin")
	if origin == "" || len(rules) == 0 {
		return
	}
	cacheable := method == http.MethodGet || method == http.MethodHead
	r := Match(rules, origin, method, "")
	if r == nil {
		if cacheable {
			out.Set("Vary", "Origin")
		}
		return
	}
	if r.allowsAnyOrigin() {
		out.Set("Access-Control-Allow-Origin", "*")
	} else {
		out.Set("Access-Control-Allow-Origin", origin)
		out.Set("Access-Control-Allow-Credentials", "true")
		if cacheable {
			out.Set("Vary", "Origin")
		}
	}
	if r.ExposedHeaders != "" {
		out.Set("Access-Control-Expose-Headers", r.ExposedHeaders)
	}
}

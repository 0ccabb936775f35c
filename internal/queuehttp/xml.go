package queuehttp

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/queue"
)

const xmlHeader = `<?xml version="1.0" encoding="utf-8"?>`

// rfc1123 is the HTTP date format Azure uses in queue bodies and headers.
const rfc1123 = "Mon, 02 Jan 2006 15:04:05 GMT"

// iso8601 is the format of access policy times in ACL bodies.
const iso8601 = "2006-01-02T15:04:05.0000000Z"

func fmtTime(t time.Time) string { return t.UTC().Format(rfc1123) }

// textEscaper escapes element text. Besides the five markup characters it
// escapes carriage return, which an XML reader would otherwise turn into a
// line feed, so message text comes back byte for byte.
var textEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&apos;", "\r", "&#xD;")

func esc(s string) string { return textEscaper.Replace(strings.Map(xmlChar, s)) }

// xmlChar replaces what XML 1.0 cannot carry (control characters other
// than tab, line feed and carriage return, U+FFFE, U+FFFF, invalid UTF-8)
// with U+FFFD, so that an echoed prefix, marker or metadata value never
// makes the document malformed.
func xmlChar(r rune) rune {
	if r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r == 0xFFFE || r == 0xFFFF {
		return '\uFFFD'
	}
	return r
}

func elem(b *strings.Builder, name, text string) {
	b.WriteString("<" + name + ">")
	b.WriteString(esc(text))
	b.WriteString("</" + name + ">")
}

// errBadXML is the 400 for a body that is not the XML the operation needs.
func errBadXML() error { return azerr.New("InvalidXmlDocument") }

// parsedMessage is the outcome of parsing a QueueMessage body.
type parsedMessage struct {
	Text string
	// RawLen is the length of the MessageText content as sent, before
	// entity decoding: what the 64 KiB limit counts.
	RawLen int
}

// parseMessage parses <QueueMessage><MessageText>...</MessageText></QueueMessage>.
// ok is false for an empty body (Update Message may omit it). Text may
// not contain child elements.
func parseMessage(body []byte) (pm parsedMessage, ok bool, err error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return pm, false, nil
	}
	d := xml.NewDecoder(bytes.NewReader(body))
	d.Strict = true
	depth := 0
	inText, found, rootSeen := false, false, false
	var text strings.Builder
	start := int64(0)
	for {
		before := d.InputOffset()
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return pm, true, errBadXML()
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			switch {
			case depth == 1:
				if rootSeen || t.Name.Local != "QueueMessage" {
					return pm, true, errBadXML()
				}
				rootSeen = true
			case inText:
				return pm, true, azerr.New("InvalidXmlNodeValue").WithDetail("XmlNodeName", "MessageText")
			case depth == 2 && t.Name.Local == "MessageText":
				if found {
					return pm, true, errBadXML()
				}
				inText, found = true, true
				start = d.InputOffset()
			}
		case xml.EndElement:
			if inText && depth == 2 {
				inText = false
				pm.RawLen = int(before - start)
			}
			depth--
		case xml.CharData:
			if inText {
				text.Write(t)
			} else if depth == 0 && len(bytes.TrimSpace(t)) > 0 {
				return pm, true, errBadXML()
			}
		}
	}
	if !rootSeen || !found || depth != 0 {
		return pm, true, errBadXML()
	}
	pm.Text = text.String()
	return pm, true, nil
}

// renderMessages renders a QueueMessagesList. peek selects the Peek shape
// (no receipt, no TimeNextVisible); put the Put shape (no dequeue count,
// no text).
func renderMessages(ms []queue.Message, peek, put bool) string {
	var b strings.Builder
	b.WriteString(xmlHeader)
	if len(ms) == 0 {
		b.WriteString("<QueueMessagesList />")
		return b.String()
	}
	b.WriteString("<QueueMessagesList>")
	for _, m := range ms {
		b.WriteString("<QueueMessage>")
		elem(&b, "MessageId", m.ID.String())
		elem(&b, "InsertionTime", fmtTime(m.InsertionTime))
		elem(&b, "ExpirationTime", fmtTime(m.ExpirationTime))
		if !peek {
			elem(&b, "PopReceipt", m.PopReceipt)
			elem(&b, "TimeNextVisible", fmtTime(m.TimeNextVisible))
		}
		if !put {
			elem(&b, "DequeueCount", strconv.FormatInt(m.DequeueCount, 10))
			elem(&b, "MessageText", m.Text)
		}
		b.WriteString("</QueueMessage>")
	}
	b.WriteString("</QueueMessagesList>")
	return b.String()
}

// ACL bodies.

type xmlSignedIdentifiers struct {
	XMLName xml.Name              `xml:"SignedIdentifiers"`
	Items   []xmlSignedIdentifier `xml:"SignedIdentifier"`
}

type xmlSignedIdentifier struct {
	ID     *string `xml:"Id"`
	Policy *struct {
		Start      *string `xml:"Start"`
		Expiry     *string `xml:"Expiry"`
		Permission *string `xml:"Permission"`
	} `xml:"AccessPolicy"`
}

// parseTime accepts the ISO 8601 forms clients send for access policies.
func parseTime(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04Z07:00", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			// Azure keeps 100 ns ticks, the precision it renders.
			return t.UTC().Truncate(100 * time.Nanosecond), true
		}
	}
	return time.Time{}, false
}

// parseACL parses a Set Queue ACL body; an empty body clears the ACL.
func parseACL(body []byte) ([]queue.SignedIdentifier, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, nil
	}
	var in xmlSignedIdentifiers
	if err := xml.Unmarshal(body, &in); err != nil {
		return nil, errBadXML()
	}
	if len(in.Items) > queue.MaxSignedIdentifiers {
		return nil, errBadXML()
	}
	out := make([]queue.SignedIdentifier, 0, len(in.Items))
	for _, it := range in.Items {
		if it.ID == nil || *it.ID == "" || len(*it.ID) > 64 {
			return nil, errBadXML()
		}
		si := queue.SignedIdentifier{ID: *it.ID}
		if p := it.Policy; p != nil {
			if p.Start != nil && strings.TrimSpace(*p.Start) != "" {
				t, ok := parseTime(*p.Start)
				if !ok {
					return nil, azerr.New("InvalidXmlNodeValue").WithDetail("XmlNodeName", "Start").WithDetail("XmlNodeValue", *p.Start)
				}
				si.Start = t
			}
			if p.Expiry != nil && strings.TrimSpace(*p.Expiry) != "" {
				t, ok := parseTime(*p.Expiry)
				if !ok {
					return nil, azerr.New("InvalidXmlNodeValue").WithDetail("XmlNodeName", "Expiry").WithDetail("XmlNodeValue", *p.Expiry)
				}
				si.Expiry = t
			}
			if p.Permission != nil {
				perm := strings.TrimSpace(*p.Permission)
				for _, c := range perm {
					if !strings.ContainsRune("raup", c) {
						// The reference emulator rejects the document as a whole.
						return nil, errBadXML()
					}
				}
				si.Permission = perm
			}
		}
		out = append(out, si)
	}
	return out, nil
}

func renderACL(acl []queue.SignedIdentifier) string {
	var b strings.Builder
	b.WriteString(xmlHeader)
	if len(acl) == 0 {
		b.WriteString("<SignedIdentifiers />")
		return b.String()
	}
	b.WriteString("<SignedIdentifiers>")
	for _, si := range acl {
		b.WriteString("<SignedIdentifier>")
		elem(&b, "Id", si.ID)
		b.WriteString("<AccessPolicy>")
		if !si.Start.IsZero() {
			elem(&b, "Start", si.Start.UTC().Format(iso8601))
		}
		if !si.Expiry.IsZero() {
			elem(&b, "Expiry", si.Expiry.UTC().Format(iso8601))
		}
		if si.Permission != "" {
			elem(&b, "Permission", si.Permission)
		}
		b.WriteString("</AccessPolicy></SignedIdentifier>")
	}
	b.WriteString("</SignedIdentifiers>")
	return b.String()
}

// Service properties bodies.

type xmlRetention struct {
	Enabled *bool `xml:"Enabled"`
	Days    *int  `xml:"Days"`
}

type xmlLogging struct {
	Version   *string       `xml:"Version"`
	Delete    *bool         `xml:"Delete"`
	Read      *bool         `xml:"Read"`
	Write     *bool         `xml:"Write"`
	Retention *xmlRetention `xml:"RetentionPolicy"`
}

type xmlMetrics struct {
	Version     *string       `xml:"Version"`
	Enabled     *bool         `xml:"Enabled"`
	IncludeAPIs *bool         `xml:"IncludeAPIs"`
	Retention   *xmlRetention `xml:"RetentionPolicy"`
}

type xmlCorsRule struct {
	AllowedOrigins  string `xml:"AllowedOrigins"`
	AllowedMethods  string `xml:"AllowedMethods"`
	MaxAgeInSeconds *int   `xml:"MaxAgeInSeconds"`
	ExposedHeaders  string `xml:"ExposedHeaders"`
	AllowedHeaders  string `xml:"AllowedHeaders"`
}

type xmlServiceProperties struct {
	XMLName       xml.Name    `xml:"StorageServiceProperties"`
	Logging       *xmlLogging `xml:"Logging"`
	HourMetrics   *xmlMetrics `xml:"HourMetrics"`
	MinuteMetrics *xmlMetrics `xml:"MinuteMetrics"`
	Cors          *struct {
		Rules []xmlCorsRule `xml:"CorsRule"`
	} `xml:"Cors"`
}

var corsMethods = map[string]bool{"DELETE": true, "GET": true, "HEAD": true, "MERGE": true, "POST": true, "OPTIONS": true, "PUT": true, "PATCH": true}

func retention(in *xmlRetention) (queue.RetentionPolicy, error) {
	var rp queue.RetentionPolicy
	if in == nil || in.Enabled == nil {
		return rp, errBadXML()
	}
	rp.Enabled = *in.Enabled
	if rp.Enabled {
		if in.Days == nil || *in.Days < 1 || *in.Days > 365 {
			return rp, errBadXML()
		}
		d := *in.Days
		rp.Days = &d
	}
	return rp, nil
}

func metrics(in *xmlMetrics) (*queue.Metrics, error) {
	if in == nil {
		return nil, nil
	}
	if in.Version == nil || in.Enabled == nil {
		return nil, errBadXML()
	}
	m := &queue.Metrics{Version: *in.Version, Enabled: *in.Enabled}
	if m.Enabled {
		if in.IncludeAPIs == nil {
			return nil, errBadXML()
		}
		v := *in.IncludeAPIs
		m.IncludeAPIs = &v
	}
	rp, err := retention(in.Retention)
	if err != nil {
		return nil, err
	}
	m.RetentionPolicy = rp
	return m, nil
}

// parseServiceProperties parses a Set Queue Service Properties body. setCors
// reports whether the body carried a Cors element.
func parseServiceProperties(body []byte) (p queue.ServiceProperties, setCors bool, err error) {
	var in xmlServiceProperties
	if err := xml.Unmarshal(body, &in); err != nil {
		return p, false, errBadXML()
	}
	if l := in.Logging; l != nil {
		if l.Version == nil || l.Delete == nil || l.Read == nil || l.Write == nil {
			return p, false, errBadXML()
		}
		rp, err := retention(l.Retention)
		if err != nil {
			return p, false, err
		}
		p.Logging = &queue.Logging{Version: *l.Version, Delete: *l.Delete, Read: *l.Read, Write: *l.Write, RetentionPolicy: rp}
	}
	if p.HourMetrics, err = metrics(in.HourMetrics); err != nil {
		return p, false, err
	}
	if p.MinuteMetrics, err = metrics(in.MinuteMetrics); err != nil {
		return p, false, err
	}
	if in.Cors != nil {
		setCors = true
		if len(in.Cors.Rules) > 5 {
			return p, false, errBadXML()
		}
		for _, r := range in.Cors.Rules {
			if r.MaxAgeInSeconds == nil || *r.MaxAgeInSeconds < 0 || strings.TrimSpace(r.AllowedOrigins) == "" || strings.TrimSpace(r.AllowedMethods) == "" {
				return p, false, azerr.New("InvalidXmlNodeValue").WithDetail("XmlNodeName", "CorsRule")
			}
			for _, m := range splitList(r.AllowedMethods) {
				if !corsMethods[m] {
					return p, false, azerr.New("InvalidXmlNodeValue").WithDetail("XmlNodeName", "AllowedMethods").WithDetail("XmlNodeValue", r.AllowedMethods)
				}
			}
			p.Cors = append(p.Cors, queue.CorsRule{
				AllowedOrigins: r.AllowedOrigins, AllowedMethods: r.AllowedMethods,
				AllowedHeaders: r.AllowedHeaders, ExposedHeaders: r.ExposedHeaders,
				MaxAgeInSeconds: *r.MaxAgeInSeconds,
			})
		}
	}
	return p, setCors, nil
}

func boolText(v bool) string { return strconv.FormatBool(v) }

func renderRetention(b *strings.Builder, rp queue.RetentionPolicy) {
	b.WriteString("<RetentionPolicy>")
	elem(b, "Enabled", boolText(rp.Enabled))
	if rp.Enabled && rp.Days != nil {
		elem(b, "Days", strconv.Itoa(*rp.Days))
	}
	b.WriteString("</RetentionPolicy>")
}

func renderMetrics(b *strings.Builder, name string, m *queue.Metrics) {
	if m == nil {
		m = &queue.Metrics{Version: "1.0"}
	}
	b.WriteString("<" + name + ">")
	elem(b, "Version", m.Version)
	elem(b, "Enabled", boolText(m.Enabled))
	if m.Enabled && m.IncludeAPIs != nil {
		elem(b, "IncludeAPIs", boolText(*m.IncludeAPIs))
	}
	renderRetention(b, m.RetentionPolicy)
	b.WriteString("</" + name + ">")
}

func renderServiceProperties(p queue.ServiceProperties) string {
	var b strings.Builder
	b.WriteString(xmlHeader)
	b.WriteString("<StorageServiceProperties>")
	l := p.Logging
	if l == nil {
		l = &queue.Logging{Version: "1.0"}
	}
	b.WriteString("<Logging>")
	elem(&b, "Version", l.Version)
	elem(&b, "Delete", boolText(l.Delete))
	elem(&b, "Read", boolText(l.Read))
	elem(&b, "Write", boolText(l.Write))
	renderRetention(&b, l.RetentionPolicy)
	b.WriteString("</Logging>")
	renderMetrics(&b, "HourMetrics", p.HourMetrics)
	renderMetrics(&b, "MinuteMetrics", p.MinuteMetrics)
	if len(p.Cors) == 0 {
		b.WriteString("<Cors />")
	} else {
		b.WriteString("<Cors>")
		for _, r := range p.Cors {
			b.WriteString("<CorsRule>")
			elem(&b, "AllowedOrigins", r.AllowedOrigins)
			elem(&b, "AllowedMethods", r.AllowedMethods)
			elem(&b, "MaxAgeInSeconds", strconv.Itoa(r.MaxAgeInSeconds))
			elem(&b, "ExposedHeaders", r.ExposedHeaders)
			elem(&b, "AllowedHeaders", r.AllowedHeaders)
			b.WriteString("</CorsRule>")
		}
		b.WriteString("</Cors>")
	}
	b.WriteString("</StorageServiceProperties>")
	return b.String()
}

// splitList splits a comma-separated header or CORS list, trimming blanks.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

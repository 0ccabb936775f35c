package queuehttp

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/lazuli-storage/lazuli/internal/acl"
	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/cors"
	"github.com/lazuli-storage/lazuli/internal/httpx"
	"github.com/lazuli-storage/lazuli/internal/queue"
	"github.com/lazuli-storage/lazuli/internal/svcprops"
)

// fmtTime renders t as the HTTP date Azure uses in queue bodies and
// headers (httpx.FormatHTTPTime, which caches recent seconds).
func fmtTime(t time.Time) string { return httpx.FormatHTTPTime(t) }

// esc escapes element text so that it reads back byte for byte. Text of
// printable ASCII without markup characters (ids, times, receipts, most
// message text) is returned as is.
func esc(s string) string {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c >= 0x7F, c == '<', c == '>', c == '&', c == '"', c == '\'':
			return azerr.EscapeXMLText(s)
		}
	}
	return s
}

func elem(b *strings.Builder, name, text string) {
	b.WriteByte('<')
	b.WriteString(name)
	b.WriteByte('>')
	b.WriteString(esc(text))
	b.WriteString("</")
	b.WriteString(name)
	b.WriteByte('>')
}

// errBadXML is the 400 for a body that is not the XML the operation needs.
func errBadXML() error { return azerr.New(azerr.InvalidXmlDocument) }

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
	if pm, ok := scanMessage(body); ok {
		return pm, true, nil
	}
	return decodeMessage(body)
}

// decodeMessage is parseMessage's general path, for a non-empty body.
func decodeMessage(body []byte) (pm parsedMessage, ok bool, err error) {
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
				return pm, true, azerr.New(azerr.InvalidXmlNodeValue).WithDetail("XmlNodeName", "MessageText")
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

// scanMessage is the fast path of parseMessage for the bodies clients
// send: an optional plain XML declaration, then
// <QueueMessage><MessageText>text</MessageText></QueueMessage> with only
// whitespace between the tags and printable ASCII text free of markup and
// entity references (base64 or plain text). ok is false for anything else,
// which the encoding/xml path then parses (or refuses) as before.
func scanMessage(body []byte) (parsedMessage, bool) {
	b := trimXMLSpace(body)
	for _, decl := range []string{`<?xml version="1.0" encoding="utf-8"?>`, `<?xml version="1.0" encoding="UTF-8"?>`, `<?xml version="1.0"?>`} {
		if rest, ok := bytes.CutPrefix(b, []byte(decl)); ok {
			b = trimXMLSpace(rest)
			break
		}
	}
	var ok bool
	if b, ok = bytes.CutPrefix(b, []byte("<QueueMessage>")); !ok {
		return parsedMessage{}, false
	}
	if b, ok = bytes.CutPrefix(trimXMLSpace(b), []byte("<MessageText>")); !ok {
		return parsedMessage{}, false
	}
	end := bytes.IndexByte(b, '<')
	if end < 0 {
		return parsedMessage{}, false
	}
	text := b[:end]
	for _, c := range text {
		if (c < 0x20 && c != '\t' && c != '\n') || c >= 0x7F || c == '&' || c == ']' {
			return parsedMessage{}, false
		}
	}
	if b, ok = bytes.CutPrefix(b[end:], []byte("</MessageText>")); !ok {
		return parsedMessage{}, false
	}
	if b, ok = bytes.CutPrefix(trimXMLSpace(b), []byte("</QueueMessage>")); !ok || len(trimXMLSpace(b)) != 0 {
		return parsedMessage{}, false
	}
	return parsedMessage{Text: string(text), RawLen: len(text)}, true
}

// trimXMLSpace drops leading and trailing XML whitespace.
func trimXMLSpace(b []byte) []byte {
	return bytes.Trim(b, " \t\r\n")
}

// appendMessages appends a QueueMessagesList to dst. peek selects the
// Peek shape (no receipt, no TimeNextVisible); put the Put shape (no
// dequeue count, no text).
func appendMessages(dst []byte, ms []queue.Message, peek, put bool) []byte {
	if len(ms) == 0 {
		return append(dst, "<QueueMessagesList />"...)
	}
	dst = append(dst, "<QueueMessagesList>"...)
	for i := range ms {
		m := &ms[i]
		dst = append(dst, "<QueueMessage><MessageId>"...)
		dst = m.ID.AppendTo(dst)
		dst = append(dst, "</MessageId><InsertionTime>"...)
		dst = appendTime(dst, m.InsertionTime)
		dst = append(dst, "</InsertionTime><ExpirationTime>"...)
		dst = appendTime(dst, m.ExpirationTime)
		dst = append(dst, "</ExpirationTime>"...)
		if !peek {
			dst = appendElem(dst, "PopReceipt", m.PopReceipt)
			dst = append(dst, "<TimeNextVisible>"...)
			dst = appendTime(dst, m.TimeNextVisible)
			dst = append(dst, "</TimeNextVisible>"...)
		}
		if !put {
			dst = append(dst, "<DequeueCount>"...)
			dst = strconv.AppendInt(dst, m.DequeueCount, 10)
			dst = append(dst, "</DequeueCount>"...)
			dst = appendElem(dst, "MessageText", m.Text)
		}
		dst = append(dst, "</QueueMessage>"...)
	}
	return append(dst, "</QueueMessagesList>"...)
}

// appendTime appends t as fmtTime renders it.
func appendTime(dst []byte, t time.Time) []byte { return append(dst, httpx.FormatHTTPTime(t)...) }

// appendElem is elem for byte slices.
func appendElem(dst []byte, name, text string) []byte {
	dst = append(dst, '<')
	dst = append(dst, name...)
	dst = append(dst, '>')
	dst = append(dst, esc(text)...)
	dst = append(dst, "</"...)
	dst = append(dst, name...)
	return append(dst, '>')
}

// ACL bodies.

// parseACL parses a Set Queue ACL body (package acl checks the document);
// an empty body clears the ACL. Queue policies grant r, a, u and p.
func parseACL(body []byte) ([]queue.SignedIdentifier, error) {
	ids, err := acl.Parse(body)
	if err != nil || ids == nil {
		return nil, err
	}
	out := make([]queue.SignedIdentifier, 0, len(ids))
	for _, id := range ids {
		si := queue.SignedIdentifier{ID: id.ID}
		if p := id.Policy; p != nil {
			if p.Start != nil {
				si.Start, _ = acl.ParseTime(*p.Start)
			}
			if p.Expiry != nil {
				si.Expiry, _ = acl.ParseTime(*p.Expiry)
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

func renderACL(ids []queue.SignedIdentifier) string {
	doc := make([]acl.Identifier, 0, len(ids))
	for _, si := range ids {
		p := &acl.Policy{}
		if !si.Start.IsZero() {
			s := acl.FormatTime(si.Start)
			p.Start = &s
		}
		if !si.Expiry.IsZero() {
			s := acl.FormatTime(si.Expiry)
			p.Expiry = &s
		}
		if si.Permission != "" {
			p.Permission = &si.Permission
		}
		doc = append(doc, acl.Identifier{ID: si.ID, Policy: p})
	}
	return acl.Render(doc)
}

// Service properties bodies: the document is package svcprops; queue
// stores its parts in its own types.

func toRetention(r svcprops.Retention) queue.RetentionPolicy {
	rp := queue.RetentionPolicy{Enabled: r.Enabled}
	if r.Enabled {
		d := r.Days
		rp.Days = &d
	}
	return rp
}

func fromRetention(rp queue.RetentionPolicy) svcprops.Retention {
	r := svcprops.Retention{Enabled: rp.Enabled}
	if rp.Enabled && rp.Days != nil {
		r.Days = *rp.Days
	}
	return r
}

func toMetrics(m *svcprops.Metrics) *queue.Metrics {
	if m == nil {
		return nil
	}
	return &queue.Metrics{Version: m.Version, Enabled: m.Enabled, IncludeAPIs: m.IncludeAPIs, RetentionPolicy: toRetention(m.RetentionPolicy)}
}

func fromMetrics(m *queue.Metrics) *svcprops.Metrics {
	if m == nil {
		return nil
	}
	return &svcprops.Metrics{Version: m.Version, Enabled: m.Enabled, IncludeAPIs: m.IncludeAPIs, RetentionPolicy: fromRetention(m.RetentionPolicy)}
}

// parseServiceProperties parses a Set Queue Service Properties body. setCors
// reports whether the body carried a Cors element.
func parseServiceProperties(body []byte) (p queue.ServiceProperties, setCors bool, err error) {
	in, err := svcprops.Parse(body)
	if err != nil {
		return p, false, err
	}
	if l := in.Logging; l != nil {
		p.Logging = &queue.Logging{Version: l.Version, Delete: l.Delete, Read: l.Read, Write: l.Write, RetentionPolicy: toRetention(l.RetentionPolicy)}
	}
	p.HourMetrics, p.MinuteMetrics = toMetrics(in.HourMetrics), toMetrics(in.MinuteMetrics)
	for _, r := range in.Cors {
		p.Cors = append(p.Cors, queue.CorsRule(r))
	}
	return p, in.HasCors, nil
}

// corsRules converts the stored rules for package cors.
func corsRules(rules []queue.CorsRule) []cors.Rule {
	out := make([]cors.Rule, 0, len(rules))
	for _, r := range rules {
		out = append(out, cors.Rule(r))
	}
	return out
}

func renderServiceProperties(p queue.ServiceProperties) string {
	doc := svcprops.Properties{HourMetrics: fromMetrics(p.HourMetrics), MinuteMetrics: fromMetrics(p.MinuteMetrics), Cors: corsRules(p.Cors)}
	if l := p.Logging; l != nil {
		doc.Logging = &svcprops.Logging{Version: l.Version, Delete: l.Delete, Read: l.Read, Write: l.Write, RetentionPolicy: fromRetention(l.RetentionPolicy)}
	}
	return svcprops.Render(doc)
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

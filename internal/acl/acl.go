// Package acl is the SignedIdentifiers document of Get/Set Container ACL,
// Queue ACL, Table ACL (and later Share ACL): stored access policies,
// parsed and rendered once with Azure's limits. Which permission letters a
// policy may hold is the service's business.
package acl

import (
	"bytes"
	"encoding/xml"
	"strings"
	"time"

	"github.com/lazuli-storage/lazuli/internal/azerr"
)

const (
	// MaxIdentifiers is how many signed identifiers one resource keeps.
	MaxIdentifiers = 5
	// MaxIDLength bounds an identifier's Id.
	MaxIDLength = 64
)

// TimeFormat is how Azure renders policy times: seven fractional digits.
const TimeFormat = "2006-01-02T15:04:05.0000000Z"

// Identifier is one <SignedIdentifier>. Policy is nil when the element
// had no <AccessPolicy>; a nil field of Policy was absent.
type Identifier struct {
	ID     string
	Policy *Policy
}

// Policy is an <AccessPolicy> with its values as sent.
type Policy struct {
	Start, Expiry, Permission *string
}

type identifierXML struct {
	ID     *string `xml:"Id"`
	Policy *struct {
		Start      *string `xml:"Start"`
		Expiry     *string `xml:"Expiry"`
		Permission *string `xml:"Permission"`
	} `xml:"AccessPolicy"`
}

type documentXML struct {
	XMLName     xml.Name        `xml:"SignedIdentifiers"`
	Identifiers []identifierXML `xml:"SignedIdentifier"`
}

// Parse decodes a Set ACL body; an empty (or blank) body is an empty ACL.
// Malformed XML, more than MaxIdentifiers identifiers, or an Id that is
// empty or longer than MaxIDLength is InvalidXmlDocument; a Start or
// Expiry that is present and not blank must be an ISO 8601 time
// (InvalidXmlNodeValue naming the element).
func Parse(body []byte) ([]Identifier, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, nil
	}
	var in documentXML
	if err := xml.Unmarshal(body, &in); err != nil {
		return nil, azerr.New(azerr.InvalidXmlDocument)
	}
	if len(in.Identifiers) > MaxIdentifiers {
		return nil, azerr.New(azerr.InvalidXmlDocument)
	}
	out := make([]Identifier, 0, len(in.Identifiers))
	for _, x := range in.Identifiers {
		if x.ID == nil || *x.ID == "" || len(*x.ID) > MaxIDLength {
			return nil, azerr.New(azerr.InvalidXmlDocument)
		}
		id := Identifier{ID: *x.ID}
		if p := x.Policy; p != nil {
			for _, t := range []struct {
				name string
				v    *string
			}{{"Start", p.Start}, {"Expiry", p.Expiry}} {
				if t.v != nil && strings.TrimSpace(*t.v) != "" {
					if _, ok := ParseTime(*t.v); !ok {
						return nil, azerr.New(azerr.InvalidXmlNodeValue).WithDetail("XmlNodeName", t.name).WithDetail("XmlNodeValue", *t.v)
					}
				}
			}
			id.Policy = &Policy{Start: p.Start, Expiry: p.Expiry, Permission: p.Permission}
		}
		out = append(out, id)
	}
	return out, nil
}

// ParseTime reads a policy time: RFC 3339 with or without fraction,
// minutes-only with a zone, a date-time without a zone (UTC), or a date.
// Azure keeps 100 ns ticks, so finer digits are dropped.
func ParseTime(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04Z07:00", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC().Truncate(100 * time.Nanosecond), true
		}
	}
	return time.Time{}, false
}

// FormatTime renders a policy time as Azure does.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeFormat) }

// Render writes the document without the XML declaration; an empty ACL
// is <SignedIdentifiers />. Policy values are written as given.
func Render(ids []Identifier) string {
	if len(ids) == 0 {
		return "<SignedIdentifiers />"
	}
	var b strings.Builder
	b.WriteString("<SignedIdentifiers>")
	for _, id := range ids {
		b.WriteString("<SignedIdentifier>")
		elem(&b, "Id", &id.ID)
		if p := id.Policy; p != nil {
			b.WriteString("<AccessPolicy>")
			elem(&b, "Start", p.Start)
			elem(&b, "Expiry", p.Expiry)
			elem(&b, "Permission", p.Permission)
			b.WriteString("</AccessPolicy>")
		}
		b.WriteString("</SignedIdentifier>")
	}
	b.WriteString("</SignedIdentifiers>")
	return b.String()
}

// elem writes <name>v</name>, or nothing for a nil v.
func elem(b *strings.Builder, name string, v *string) {
	if v == nil {
		return
	}
	b.WriteString("<" + name + ">")
	b.WriteString(azerr.EscapeXMLText(*v))
	b.WriteString("</" + name + ">")
}

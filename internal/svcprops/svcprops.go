// Package svcprops is the StorageServiceProperties document of Set and Get
// Service Properties, shared by the Blob, Queue and Table services (and
// later Files): Logging, HourMetrics, MinuteMetrics and Cors, validated as
// Azure validates them. Elements only one service knows (DefaultServiceVersion,
// DeleteRetentionPolicy, StaticWebsite for Blob) travel as Extra elements
// that the service checks and stores itself.
package svcprops

import (
	"encoding/xml"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/cors"
)

// Retention is the RetentionPolicy of logging and metrics; Days is
// meaningful only when Enabled.
type Retention struct {
	Enabled bool
	Days    int
}

// Logging is the Storage Analytics logging setting.
type Logging struct {
	Version             string
	Delete, Read, Write bool
	RetentionPolicy     Retention
}

// Metrics is an hour or minute metrics setting. IncludeAPIs is sent only
// while Enabled.
type Metrics struct {
	Version         string
	Enabled         bool
	IncludeAPIs     *bool
	RetentionPolicy Retention
}

// Extra is an element only some services know, kept as sent.
type Extra struct {
	XMLName xml.Name
	Inner   string `xml:",innerxml"`
}

// Properties is a parsed document. On Set, a nil part (or HasCors false)
// means the element was absent, so the stored value stays.
type Properties struct {
	Logging       *Logging
	HourMetrics   *Metrics
	MinuteMetrics *Metrics
	HasCors       bool
	Cors          []cors.Rule
	Extra         []Extra
}

// Defaults is what a service reports before any Set: everything off,
// version 1.0, no CORS rules.
func Defaults() Properties {
	return Properties{
		Logging:       &Logging{Version: "1.0"},
		HourMetrics:   &Metrics{Version: "1.0"},
		MinuteMetrics: &Metrics{Version: "1.0"},
	}
}

// Merge lays the parts present in in over p: Set Service Properties keeps
// the stored value of every absent element. Extra elements replace the
// stored ones of the same name and keep their order otherwise.
func (p *Properties) Merge(in Properties) {
	if in.Logging != nil {
		p.Logging = in.Logging
	}
	if in.HourMetrics != nil {
		p.HourMetrics = in.HourMetrics
	}
	if in.MinuteMetrics != nil {
		p.MinuteMetrics = in.MinuteMetrics
	}
	if in.HasCors {
		p.HasCors, p.Cors = true, in.Cors
	}
	for _, e := range in.Extra {
		replaced := false
		for i := range p.Extra {
			if p.Extra[i].XMLName.Local == e.XMLName.Local {
				p.Extra[i], replaced = e, true
			}
		}
		if !replaced {
			p.Extra = append(p.Extra, e)
		}
	}
}

type retentionXML struct {
	Enabled *bool `xml:"Enabled"`
	Days    *int  `xml:"Days"`
}

type loggingXML struct {
	Version   *string       `xml:"Version"`
	Delete    *bool         `xml:"Delete"`
	Read      *bool         `xml:"Read"`
	Write     *bool         `xml:"Write"`
	Retention *retentionXML `xml:"RetentionPolicy"`
}

type metricsXML struct {
	Version     *string       `xml:"Version"`
	Enabled     *bool         `xml:"Enabled"`
	IncludeAPIs *bool         `xml:"IncludeAPIs"`
	Retention   *retentionXML `xml:"RetentionPolicy"`
}

type documentXML struct {
	XMLName       xml.Name      `xml:"StorageServiceProperties"`
	Logging       *loggingXML   `xml:"Logging"`
	HourMetrics   *metricsXML   `xml:"HourMetrics"`
	MinuteMetrics *metricsXML   `xml:"MinuteMetrics"`
	Cors          *cors.Element `xml:"Cors"`
	Extra         []Extra       `xml:",any"`
}

func errBadXML() error { return azerr.New(azerr.InvalidXmlDocument) }

// Parse decodes and validates a Set Service Properties body as Azure
// does: malformed XML, a missing required child (Version, Delete, Read,
// Write, Enabled, IncludeAPIs while enabled, RetentionPolicy) or retention
// days outside 1..365 (also in Blob's DeleteRetentionPolicy) are
// InvalidXmlDocument; CORS rules are checked by
// package cors. Unknown elements come back in Extra for the service.
func Parse(body []byte) (Properties, error) {
	var in documentXML
	if err := xml.Unmarshal(body, &in); err != nil {
		return Properties{}, errBadXML()
	}
	var p Properties
	if l := in.Logging; l != nil {
		if l.Version == nil || l.Delete == nil || l.Read == nil || l.Write == nil {
			return Properties{}, errBadXML()
		}
		rp, err := retention(l.Retention)
		if err != nil {
			return Properties{}, err
		}
		p.Logging = &Logging{Version: *l.Version, Delete: *l.Delete, Read: *l.Read, Write: *l.Write, RetentionPolicy: rp}
	}
	var err error
	if p.HourMetrics, err = metrics(in.HourMetrics); err != nil {
		return Properties{}, err
	}
	if p.MinuteMetrics, err = metrics(in.MinuteMetrics); err != nil {
		return Properties{}, err
	}
	if in.Cors != nil {
		if p.Cors, err = in.Cors.Validate(); err != nil {
			return Properties{}, err
		}
		p.HasCors = true
	}
	for _, e := range in.Extra {
		// Blob soft delete keeps deleted blobs 1 to 365 days, like the
		// other retention policies.
		if e.XMLName.Local == "DeleteRetentionPolicy" {
			var rx retentionXML
			if err := xml.Unmarshal([]byte("<r>"+e.Inner+"</r>"), &rx); err != nil {
				return Properties{}, errBadXML()
			}
			if _, err := retention(&rx); err != nil {
				return Properties{}, err
			}
		}
		// A static website says whether it is on.
		if e.XMLName.Local == "StaticWebsite" {
			var sw struct {
				Enabled *bool `xml:"Enabled"`
			}
			if err := xml.Unmarshal([]byte("<s>"+e.Inner+"</s>"), &sw); err != nil || sw.Enabled == nil {
				return Properties{}, errBadXML()
			}
		}
	}
	p.Extra = in.Extra
	return p, nil
}

func retention(in *retentionXML) (Retention, error) {
	if in == nil || in.Enabled == nil {
		return Retention{}, errBadXML()
	}
	rp := Retention{Enabled: *in.Enabled}
	if rp.Enabled {
		if in.Days == nil || *in.Days < 1 || *in.Days > 365 {
			return Retention{}, errBadXML()
		}
		rp.Days = *in.Days
	}
	return rp, nil
}

func metrics(in *metricsXML) (*Metrics, error) {
	if in == nil {
		return nil, nil
	}
	if in.Version == nil || in.Enabled == nil {
		return nil, errBadXML()
	}
	m := &Metrics{Version: *in.Version, Enabled: *in.Enabled}
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

// ParseStored decodes a document this package rendered earlier (or an
// older stored form) without validating it: absent values read as their
// zero value and absent parts keep the defaults.
func ParseStored(body []byte) (Properties, error) {
	var in documentXML
	if err := xml.Unmarshal(body, &in); err != nil {
		return Properties{}, err
	}
	p := Defaults()
	if l := in.Logging; l != nil {
		p.Logging = &Logging{Version: derefStr(l.Version), Delete: derefBool(l.Delete), Read: derefBool(l.Read), Write: derefBool(l.Write), RetentionPolicy: storedRetention(l.Retention)}
	}
	for _, m := range []struct {
		in  *metricsXML
		out **Metrics
	}{{in.HourMetrics, &p.HourMetrics}, {in.MinuteMetrics, &p.MinuteMetrics}} {
		if m.in != nil {
			*m.out = &Metrics{Version: derefStr(m.in.Version), Enabled: derefBool(m.in.Enabled), IncludeAPIs: m.in.IncludeAPIs, RetentionPolicy: storedRetention(m.in.Retention)}
		}
	}
	if in.Cors != nil {
		p.HasCors, p.Cors = true, in.Cors.Lenient()
	}
	for _, e := range in.Extra {
		// Blob soft delete keeps deleted blobs 1 to 365 days, like the
		// other retention policies.
		if e.XMLName.Local == "DeleteRetentionPolicy" {
			var rx retentionXML
			if err := xml.Unmarshal([]byte("<r>"+e.Inner+"</r>"), &rx); err != nil {
				return Properties{}, errBadXML()
			}
			if _, err := retention(&rx); err != nil {
				return Properties{}, err
			}
		}
	}
	p.Extra = in.Extra
	return p, nil
}

func storedRetention(in *retentionXML) Retention {
	if in == nil {
		return Retention{}
	}
	rp := Retention{Enabled: derefBool(in.Enabled)}
	if rp.Enabled && in.Days != nil {
		rp.Days = *in.Days
	}
	return rp
}

func derefStr(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func derefBool(p *bool) bool { return p != nil && *p }

// Render writes the document (without the XML declaration) in Azure's
// element order: Logging, HourMetrics, MinuteMetrics, Cors, then the Extra
// elements in their order. Nil parts render as their defaults.
func Render(p Properties) string {
	var b strings.Builder
	b.WriteString("<StorageServiceProperties>")
	l := p.Logging
	if l == nil {
		l = &Logging{Version: "1.0"}
	}
	b.WriteString("<Logging>")
	elem(&b, "Version", l.Version)
	elem(&b, "Delete", strconv.FormatBool(l.Delete))
	elem(&b, "Read", strconv.FormatBool(l.Read))
	elem(&b, "Write", strconv.FormatBool(l.Write))
	renderRetention(&b, l.RetentionPolicy)
	b.WriteString("</Logging>")
	renderMetrics(&b, "HourMetrics", p.HourMetrics)
	renderMetrics(&b, "MinuteMetrics", p.MinuteMetrics)
	cors.Render(&b, p.Cors)
	for _, e := range p.Extra {
		b.WriteString("<" + e.XMLName.Local + ">")
		b.WriteString(e.Inner)
		b.WriteString("</" + e.XMLName.Local + ">")
	}
	b.WriteString("</StorageServiceProperties>")
	return b.String()
}

func renderRetention(b *strings.Builder, rp Retention) {
	b.WriteString("<RetentionPolicy>")
	elem(b, "Enabled", strconv.FormatBool(rp.Enabled))
	if rp.Enabled {
		elem(b, "Days", strconv.Itoa(rp.Days))
	}
	b.WriteString("</RetentionPolicy>")
}

func renderMetrics(b *strings.Builder, name string, m *Metrics) {
	if m == nil {
		m = &Metrics{Version: "1.0"}
	}
	b.WriteString("<" + name + ">")
	elem(b, "Version", m.Version)
	elem(b, "Enabled", strconv.FormatBool(m.Enabled))
	if m.Enabled {
		elem(b, "IncludeAPIs", strconv.FormatBool(m.IncludeAPIs != nil && *m.IncludeAPIs))
	}
	renderRetention(b, m.RetentionPolicy)
	b.WriteString("</" + name + ">")
}

func elem(b *strings.Builder, name, text string) {
	b.WriteString("<" + name + ">")
	b.WriteString(azerr.EscapeXMLText(text))
	b.WriteString("</" + name + ">")
}

// RenderStats renders the StorageServiceStats document of Get Service
// Stats (without the XML declaration). An emulator has one live location,
// synchronized as of now.
func RenderStats(now time.Time) string {
	return "<StorageServiceStats><GeoReplication><Status>live</Status><LastSyncTime>" +
		now.UTC().Format(http.TimeFormat) + "</LastSyncTime></GeoReplication></StorageServiceStats>"
}

package svcprops

import (
	"strings"
	"testing"

	"github.com/lazuli-storage/lazuli/internal/azerr"
)

const defaultDoc = `<StorageServiceProperties><Logging><Version>1.0</Version><Delete>false</Delete><Read>false</Read><Write>false</Write><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></Logging><HourMetrics><Version>1.0</Version><Enabled>false</Enabled><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></HourMetrics><MinuteMetrics><Version>1.0</Version><Enabled>false</Enabled><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></MinuteMetrics><Cors /></StorageServiceProperties>`

func TestDefaultsRender(t *testing.T) {
	if got := Render(Defaults()); got != defaultDoc {
		t.Fatalf("defaults\n%s\nwant\n%s", got, defaultDoc)
	}
	if got := Render(Properties{}); got != defaultDoc {
		t.Fatalf("zero value\n%s", got)
	}
}

func TestParseRoundTrip(t *testing.T) {
	in := `<?xml version="1.0" encoding="utf-8"?><StorageServiceProperties><Logging><Version>1.0</Version><Delete>true</Delete><Read>false</Read><Write>true</Write><RetentionPolicy><Enabled>true</Enabled><Days>7</Days></RetentionPolicy></Logging><HourMetrics><Version>1.0</Version><Enabled>true</Enabled><IncludeAPIs>false</IncludeAPIs><RetentionPolicy><Enabled>false</Enabled><Days>9</Days></RetentionPolicy></HourMetrics><Cors><CorsRule><AllowedOrigins>http://a&amp;b</AllowedOrigins><AllowedMethods>GET</AllowedMethods><MaxAgeInSeconds>3</MaxAgeInSeconds><ExposedHeaders /><AllowedHeaders>x-*</AllowedHeaders></CorsRule></Cors><DefaultServiceVersion>2020-10-02</DefaultServiceVersion><Unknown><A>1</A></Unknown></StorageServiceProperties>`
	p, err := Parse([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if p.Logging == nil || !p.Logging.Delete || p.Logging.RetentionPolicy.Days != 7 || p.HourMetrics == nil || p.HourMetrics.IncludeAPIs == nil ||
		p.MinuteMetrics != nil || !p.HasCors || len(p.Cors) != 1 || p.Cors[0].AllowedOrigins != "http://a&b" || len(p.Extra) != 2 {
		t.Fatalf("parsed %+v", p)
	}
	cur := Defaults()
	cur.Merge(p)
	got := Render(cur)
	want := `<StorageServiceProperties><Logging><Version>1.0</Version><Delete>true</Delete><Read>false</Read><Write>true</Write><RetentionPolicy><Enabled>true</Enabled><Days>7</Days></RetentionPolicy></Logging><HourMetrics><Version>1.0</Version><Enabled>true</Enabled><IncludeAPIs>false</IncludeAPIs><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></HourMetrics><MinuteMetrics><Version>1.0</Version><Enabled>false</Enabled><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></MinuteMetrics><Cors><CorsRule><AllowedOrigins>http://a&amp;b</AllowedOrigins><AllowedMethods>GET</AllowedMethods><MaxAgeInSeconds>3</MaxAgeInSeconds><ExposedHeaders></ExposedHeaders><AllowedHeaders>x-*</AllowedHeaders></CorsRule></Cors><DefaultServiceVersion>2020-10-02</DefaultServiceVersion><Unknown><A>1</A></Unknown></StorageServiceProperties>`
	if got != want {
		t.Fatalf("render\n%s\nwant\n%s", got, want)
	}
	back, err := ParseStored([]byte(got))
	if err != nil || Render(back) != got {
		t.Fatalf("stored form does not round-trip: %v\n%s", err, Render(back))
	}
	// A later Set without Cors keeps the rules; with an empty Cors clears them.
	next, _ := Parse([]byte(`<StorageServiceProperties><DefaultServiceVersion>2021-01-01</DefaultServiceVersion></StorageServiceProperties>`))
	back.Merge(next)
	if len(back.Cors) != 1 || len(back.Extra) != 2 || back.Extra[0].Inner != "2021-01-01" {
		t.Fatalf("merge %+v", back)
	}
	clear, _ := Parse([]byte(`<StorageServiceProperties><Cors/></StorageServiceProperties>`))
	back.Merge(clear)
	if len(back.Cors) != 0 || !strings.Contains(Render(back), "<Cors />") {
		t.Fatalf("cleared %s", Render(back))
	}
}

func TestParseRejects(t *testing.T) {
	const ok = `<RetentionPolicy><Enabled>false</Enabled></RetentionPolicy>`
	cases := map[string]string{
		"not xml":                 "nope",
		"truncated":               "<StorageServiceProperties><Logging>",
		"wrong root":              "<ServiceProperties><Logging/></ServiceProperties>",
		"logging without write":   "<StorageServiceProperties><Logging><Version>1.0</Version><Delete>true</Delete><Read>false</Read>" + ok + "</Logging></StorageServiceProperties>",
		"logging without policy":  "<StorageServiceProperties><Logging><Version>1.0</Version><Delete>true</Delete><Read>false</Read><Write>true</Write></Logging></StorageServiceProperties>",
		"metrics no version":      "<StorageServiceProperties><HourMetrics><Enabled>false</Enabled>" + ok + "</HourMetrics></StorageServiceProperties>",
		"enabled without apis":    "<StorageServiceProperties><HourMetrics><Version>1.0</Version><Enabled>true</Enabled>" + ok + "</HourMetrics></StorageServiceProperties>",
		"days out of range":       "<StorageServiceProperties><MinuteMetrics><Version>1.0</Version><Enabled>false</Enabled><RetentionPolicy><Enabled>true</Enabled><Days>366</Days></RetentionPolicy></MinuteMetrics></StorageServiceProperties>",
		"days missing":            "<StorageServiceProperties><MinuteMetrics><Version>1.0</Version><Enabled>false</Enabled><RetentionPolicy><Enabled>true</Enabled></RetentionPolicy></MinuteMetrics></StorageServiceProperties>",
		"boolean garbage":         "<StorageServiceProperties><MinuteMetrics><Version>1.0</Version><Enabled>perhaps</Enabled></MinuteMetrics></StorageServiceProperties>",
		"website without enabled": "<StorageServiceProperties><StaticWebsite><IndexDocument>index.html</IndexDocument></StaticWebsite></StorageServiceProperties>",
		"website enabled garbage": "<StorageServiceProperties><StaticWebsite><Enabled>yes</Enabled></StaticWebsite></StorageServiceProperties>",
	}
	for name, body := range cases {
		if _, err := Parse([]byte(body)); err == nil {
			t.Errorf("%s: accepted", name)
		} else if e, ok := azerr.As(err); !ok || e.Code != azerr.InvalidXmlDocument {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := Parse([]byte(`<StorageServiceProperties><Cors><CorsRule><AllowedOrigins>*</AllowedOrigins><AllowedMethods>FLY</AllowedMethods><MaxAgeInSeconds>1</MaxAgeInSeconds></CorsRule></Cors></StorageServiceProperties>`)); err == nil {
		t.Fatal("bad CORS method accepted")
	}
}

// FuzzParse: Parse never panics and fails only with Azure errors; what it
// accepts renders to a document that parses back to the same rendering.
func FuzzParse(f *testing.F) {
	f.Add([]byte(defaultDoc))
	f.Add([]byte(`<StorageServiceProperties><HourMetrics><Version>1.0</Version><Enabled>true</Enabled><IncludeAPIs>true</IncludeAPIs><RetentionPolicy><Enabled>true</Enabled><Days>7</Days></RetentionPolicy></HourMetrics><StaticWebsite><Enabled>false</Enabled></StaticWebsite></StorageServiceProperties>`))
	f.Fuzz(func(t *testing.T, body []byte) {
		p, err := Parse(body)
		if err != nil {
			if _, ok := azerr.As(err); !ok {
				t.Fatalf("non-Azure error %v", err)
			}
			return
		}
		p.Extra = nil
		out := Render(p)
		again, err := Parse([]byte(out))
		if err != nil || Render(again) != out {
			t.Fatalf("rendering does not parse back: %v\n%s", err, out)
		}
	})
}

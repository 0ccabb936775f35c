package cors

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/lazuli-storage/lazuli/internal/azerr"
)

func code(err error) string {
	if e, ok := azerr.As(err); ok {
		return e.Code.String()
	}
	return ""
}

func TestDecodeValidates(t *testing.T) {
	rule := func(origins, methods, age string) string {
		s := "<CorsRule>"
		if origins != "-" {
			s += "<AllowedOrigins>" + origins + "</AllowedOrigins>"
		}
		if methods != "-" {
			s += "<AllowedMethods>" + methods + "</AllowedMethods>"
		}
		if age != "-" {
			s += "<MaxAgeInSeconds>" + age + "</MaxAgeInSeconds>"
		}
		return s + "<ExposedHeaders></ExposedHeaders><AllowedHeaders /></CorsRule>"
	}
	cases := []struct {
		body, code string
		n          int
	}{
		{"<Cors />", "", 0},
		{"<Cors>" + rule("*", "GET", "0") + "</Cors>", "", 1},
		{"<Cors>" + rule("http://a, http://b", "get,Put,TRACE,CONNECT", "60") + "</Cors>", "", 1},
		{"<Cors>" + strings.Repeat(rule("*", "GET", "1"), 5) + "</Cors>", "", 5},
		{"<Cors>" + strings.Repeat(rule("*", "GET", "1"), 6) + "</Cors>", "InvalidXmlDocument", 0},
		{"<Cors>" + rule("*", "FETCH", "1") + "</Cors>", "InvalidXmlNodeValue", 0},
		{"<Cors>" + rule("*", "GET,", "1") + "</Cors>", "", 1},
		{"<Cors>" + rule("", "GET", "1") + "</Cors>", "InvalidXmlNodeValue", 0},
		{"<Cors>" + rule("*", " , ", "1") + "</Cors>", "InvalidXmlNodeValue", 0},
		{"<Cors>" + rule("-", "GET", "1") + "</Cors>", "InvalidXmlNodeValue", 0},
		{"<Cors>" + rule("*", "GET", "-") + "</Cors>", "InvalidXmlNodeValue", 0},
		{"<Cors>" + rule("*", "GET", "-1") + "</Cors>", "InvalidXmlNodeValue", 0},
		{"<Cors>" + rule("*", "GET", "soon") + "</Cors>", "InvalidXmlDocument", 0},
		{"<Cors><CorsRule>", "InvalidXmlDocument", 0},
	}
	for _, c := range cases {
		rules, err := Decode([]byte(c.body))
		if code(err) != c.code || (err == nil) != (c.code == "") || len(rules) != c.n {
			t.Errorf("%s: %d rules, %v; want %d, %q", c.body, len(rules), err, c.n, c.code)
		}
	}
}

func TestRenderKeepsListsAndAzureOrder(t *testing.T) {
	var b strings.Builder
	Render(&b, nil)
	if b.String() != "<Cors />" {
		t.Fatalf("empty: %s", b.String())
	}
	b.Reset()
	Render(&b, []Rule{{AllowedOrigins: "http://a, http://b", AllowedMethods: "GET", AllowedHeaders: "x-ms-meta-*", ExposedHeaders: "x-ms-request-id", MaxAgeInSeconds: 9}})
	want := "<Cors><CorsRule><AllowedOrigins>http://a, http://b</AllowedOrigins><AllowedMethods>GET</AllowedMethods><MaxAgeInSeconds>9</MaxAgeInSeconds><ExposedHeaders>x-ms-request-id</ExposedHeaders><AllowedHeaders>x-ms-meta-*</AllowedHeaders></CorsRule></Cors>"
	if b.String() != want {
		t.Fatalf("render\n%s\nwant\n%s", b.String(), want)
	}
	rules, err := Decode([]byte(b.String()))
	if err != nil || len(rules) != 1 || rules[0].AllowedOrigins != "http://a, http://b" || rules[0].MaxAgeInSeconds != 9 {
		t.Fatalf("round trip %+v %v", rules, err)
	}
}

func hdr(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return h
}

func TestPreflight(t *testing.T) {
	rules := []Rule{
		{AllowedOrigins: "http://example.com", AllowedMethods: "GET,PUT", AllowedHeaders: "x-ms-meta-*,content-type", MaxAgeInSeconds: 60},
		{AllowedOrigins: "*", AllowedMethods: "DELETE", MaxAgeInSeconds: 5},
	}
	cases := []struct {
		name string
		req  http.Header
		code string
		age  string
	}{
		{"no origin", hdr("Access-Control-Request-Method", "GET"), "InvalidHeaderValue", ""},
		{"no method", hdr("Origin", "http://example.com"), "InvalidHeaderValue", ""},
		{"match", hdr("Origin", "http://example.com", "Access-Control-Request-Method", "PUT", "Access-Control-Request-Headers", "x-ms-meta-abc, Content-Type"), "", "60"},
		{"origin case", hdr("Origin", "HTTP://EXAMPLE.COM", "Access-Control-Request-Method", "get"), "", "60"},
		{"other origin", hdr("Origin", "http://evil.com", "Access-Control-Request-Method", "PUT"), "CorsPreflightFailure", ""},
		{"other method", hdr("Origin", "http://example.com", "Access-Control-Request-Method", "POST"), "CorsPreflightFailure", ""},
		{"header not allowed", hdr("Origin", "http://example.com", "Access-Control-Request-Method", "GET", "Access-Control-Request-Headers", "x-other"), "CorsPreflightFailure", ""},
		{"prefix needs the prefix", hdr("Origin", "http://example.com", "Access-Control-Request-Method", "GET", "Access-Control-Request-Headers", "x-ms-meta"), "CorsPreflightFailure", ""},
		{"wildcard rule", hdr("Origin", "http://any.example", "Access-Control-Request-Method", "DELETE"), "", "5"},
		{"wildcard rule no headers allowed", hdr("Origin", "http://any.example", "Access-Control-Request-Method", "DELETE", "Access-Control-Request-Headers", "x-a"), "CorsPreflightFailure", ""},
	}
	for _, c := range cases {
		out := http.Header{}
		err := Preflight(rules, c.req, out)
		if code(err) != c.code || (err == nil) != (c.code == "") {
			t.Errorf("%s: %v, want %q", c.name, err, c.code)
			continue
		}
		if err != nil {
			if len(out) != 0 {
				t.Errorf("%s: headers set on failure: %v", c.name, out)
			}
			continue
		}
		if out.Get("Access-Control-Allow-Origin") != c.req.Get("Origin") || out.Get("Access-Control-Allow-Methods") != c.req.Get("Access-Control-Request-Method") ||
			out.Get("Access-Control-Allow-Headers") != c.req.Get("Access-Control-Request-Headers") || out.Get("Access-Control-Max-Age") != c.age ||
			out.Get("Access-Control-Allow-Credentials") != "true" || out.Get("Vary") != "Origin" {
			t.Errorf("%s: headers %v", c.name, out)
		}
	}
	if err := Preflight(nil, hdr("Origin", "http://a", "Access-Control-Request-Method", "GET"), http.Header{}); code(err) != "CorsPreflightFailure" {
		t.Fatalf("no rules: %v", err)
	}
}

func TestActual(t *testing.T) {
	rules := []Rule{
		{AllowedOrigins: "http://example.com", AllowedMethods: "GET,PUT", ExposedHeaders: "x-ms-meta-*", MaxAgeInSeconds: 60},
		{AllowedOrigins: "*", AllowedMethods: "GET,HEAD", ExposedHeaders: "x-ms-request-id"},
	}
	cases := []struct {
		name, method, origin       string
		rules                      []Rule
		allow, creds, expose, vary string
	}{
		{"no origin", "GET", "", rules, "", "", "", ""},
		{"no rules", "GET", "http://example.com", nil, "", "", "", ""},
		{"exact", "GET", "http://example.com", rules, "http://example.com", "true", "x-ms-meta-*", "Origin"},
		{"exact PUT has no Vary", "PUT", "http://example.com", rules, "http://example.com", "true", "x-ms-meta-*", ""},
		{"wildcard", "HEAD", "http://other", rules, "*", "", "x-ms-request-id", ""},
		{"no match GET", "GET", "http://other", rules[:1], "", "", "", "Origin"},
		{"no match DELETE", "DELETE", "http://other", rules, "", "", "", ""},
	}
	for _, c := range cases {
		req := http.Header{}
		if c.origin != "" {
			req.Set("Origin", c.origin)
		}
		out := http.Header{}
		Actual(c.rules, c.method, req, out)
		if out.Get("Access-Control-Allow-Origin") != c.allow || out.Get("Access-Control-Allow-Credentials") != c.creds ||
			out.Get("Access-Control-Expose-Headers") != c.expose || out.Get("Vary") != c.vary {
			t.Errorf("%s: %v", c.name, out)
		}
	}
}

// FuzzDecode: a <Cors> body either fails with an Azure error or yields at
// most MaxRules valid rules that render and decode back unchanged.
func FuzzDecode(f *testing.F) {
	f.Add([]byte("<Cors><CorsRule><AllowedOrigins>*</AllowedOrigins><AllowedMethods>GET</AllowedMethods><MaxAgeInSeconds>5</MaxAgeInSeconds></CorsRule></Cors>"))
	f.Add([]byte("<Cors><CorsRule><AllowedOrigins>a&amp;b</AllowedOrigins><AllowedMethods>PUT,MERGE</AllowedMethods><MaxAgeInSeconds>0</MaxAgeInSeconds><AllowedHeaders>x-*</AllowedHeaders></CorsRule></Cors>"))
	f.Add([]byte("<Cors/>"))
	f.Fuzz(func(t *testing.T, body []byte) {
		rules, err := Decode(body)
		if err != nil {
			if _, ok := azerr.As(err); !ok {
				t.Fatalf("non-Azure error %v", err)
			}
			return
		}
		if len(rules) > MaxRules {
			t.Fatalf("%d rules accepted", len(rules))
		}
		var b strings.Builder
		Render(&b, rules)
		back, err := Decode([]byte(b.String()))
		if err != nil || len(back) != len(rules) {
			t.Fatalf("rendered rules do not decode: %v\n%s", err, b.String())
		}
		for i := range rules {
			if back[i] != rules[i] {
				t.Fatalf("rule %d: %+v became %+v", i, rules[i], back[i])
			}
		}
	})
}

// Answer checks the CORS headers before loading any rule, and sends 200
// with no body on a match.
func TestAnswer(t *testing.T) {
	loads := 0
	load := func() ([]Rule, error) {
		loads++
		return []Rule{{AllowedOrigins: "*", AllowedMethods: "GET", MaxAgeInSeconds: 7}}, nil
	}
	r := httptest.NewRequest("OPTIONS", "/c", nil)
	r.Header.Set("Access-Control-Request-Method", "GET")
	if err := Answer(httptest.NewRecorder(), r, load); code(err) != "InvalidHeaderValue" || loads != 0 {
		t.Fatalf("missing origin: %v after %d loads", err, loads)
	}
	r.Header.Set("Origin", "http://a")
	w := httptest.NewRecorder()
	if err := Answer(w, r, load); err != nil || w.Code != 200 || w.Body.Len() != 0 || w.Header().Get("Access-Control-Max-Age") != "7" {
		t.Fatalf("match: %v %d %v", err, w.Code, w.Header())
	}
	r.Header.Set("Access-Control-Request-Method", "PUT")
	if err := Answer(httptest.NewRecorder(), r, load); code(err) != "CorsPreflightFailure" {
		t.Fatalf("no match: %v", err)
	}
}

// TestWildcardSubdomainOrigin pins Azure's wildcard subdomain origins:
// "http://*.contoso.com" matches a subdomain at any depth, without case,
// and neither the bare domain nor another scheme or domain.
func TestWildcardSubdomainOrigin(t *testing.T) {
	rules := []Rule{{AllowedOrigins: "http://*.contoso.com", AllowedMethods: "GET"}}
	for origin, want := range map[string]bool{
		"http://www.contoso.com":      true,
		"http://a.b.c.contoso.com":    true,
		"HTTP://WWW.Contoso.COM":      true,
		"http://contoso.com":          false,
		"https://www.contoso.com":     false,
		"http://www.notcontoso.com":   false,
		"http://www.contoso.com.evil": false,
		"http://.contoso.com":         false,
	} {
		if got := Match(rules, origin, "GET", "") != nil; got != want {
			t.Errorf("%s: matched %v, want %v", origin, got, want)
		}
	}
}

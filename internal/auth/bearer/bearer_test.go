package bearer

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func token(t testing.TB, claims map[string]any) string {
	enc := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return base64.RawURLEncoding.EncodeToString(b)
	}
	return enc(map[string]string{"alg": "RS256", "typ": "JWT"}) + "." + enc(claims) + ".c2ln"
}

func TestCheck(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	good := func() map[string]any {
		return map[string]any{"iss": "https://sts.windows.net/tid/", "aud": "https://storage.azure.com/",
			"nbf": now.Add(-time.Minute).Unix(), "exp": now.Add(time.Hour).Unix(), "iat": now.Add(-time.Minute).Unix(), "oid": "o", "tid": "tid"}
	}
	cases := []struct {
		name   string
		change func(map[string]any)
		svc    string
		detail string // "" accepted
	}{
		{"storage audience", nil, "blob", ""},
		{"app id audience", func(c map[string]any) { c["aud"] = StorageAppID }, "queue", ""},
		{"account endpoint", func(c map[string]any) { c["aud"] = "https://acct.table.core.windows.net" }, "table", ""},
		{"audience list", func(c map[string]any) { c["aud"] = []string{"x", "https://acct.blob.core.chinacloudapi.cn/"} }, "blob", ""},
		{"ppe issuer", func(c map[string]any) { c["iss"] = "https://sts.windows-ppe.net/tid/" }, "blob", ""},
		{"fractional times", func(c map[string]any) { c["exp"] = float64(now.Unix()) + 0.5 }, "blob", ""},
		{"other service endpoint", func(c map[string]any) { c["aud"] = "https://acct.blob.core.windows.net" }, "queue", "Audience validation failed"},
		{"other account", func(c map[string]any) { c["aud"] = "https://other.blob.core.windows.net" }, "blob", "Audience validation failed"},
		{"http audience", func(c map[string]any) { c["aud"] = "http://storage.azure.com" }, "blob", "Audience validation failed"},
		{"no audience", func(c map[string]any) { delete(c, "aud") }, "blob", "Audience validation failed"},
		{"issuer", func(c map[string]any) { c["iss"] = "https://login.example.com/" }, "blob", "Issuer validation failed"},
		{"issuer lookalike", func(c map[string]any) { c["iss"] = "https://sts.windows.net.evil.com/" }, "blob", "Issuer validation failed"},
		{"expired", func(c map[string]any) { c["exp"] = now.Add(-time.Second).Unix() }, "blob", "The token is expired"},
		{"not yet", func(c map[string]any) { c["nbf"] = now.Add(time.Minute).Unix() }, "blob", "not yet valid"},
		{"no iat", func(c map[string]any) { delete(c, "iat") }, "blob", "nbf, exp and iat"},
		{"no exp", func(c map[string]any) { delete(c, "exp") }, "blob", "nbf, exp and iat"},
	}
	for _, tc := range cases {
		c := good()
		if tc.change != nil {
			tc.change(c)
		}
		claims, err := Parse(token(t, c))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		err = Check(claims, tc.svc, "acct", now)
		switch {
		case tc.detail == "" && err != nil:
			t.Errorf("%s: refused: %v", tc.name, err)
		case tc.detail != "" && (err == nil || !strings.Contains(err.Error(), tc.detail)):
			t.Errorf("%s: %v, want %q", tc.name, err, tc.detail)
		}
	}
}

func TestParseRefusesWhatIsNoJWT(t *testing.T) {
	for _, s := range []string{"", "abc", "a.b", "a.b.c.d", "e30.e30.", "eyJhbGciOiJSUzI1NiJ9.bm90IGpzb24.", "!!.e30.x"} {
		if _, err := Parse(s); err == nil {
			t.Errorf("Parse(%q) accepted", s)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add(token(f, map[string]any{"iss": "https://sts.windows.net/t/", "aud": "https://storage.azure.com", "nbf": 1, "exp": 2, "iat": 1}))
	f.Add(token(f, map[string]any{"aud": []string{"a", "b"}, "nbf": 1.5}))
	f.Add("e30.e30.")
	f.Add("a.b.c")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := Parse(s)
		if err != nil {
			return
		}
		// Whatever parses can be checked without panicking.
		Check(c, "blob", "acct", time.Unix(1, 0))
	})
}

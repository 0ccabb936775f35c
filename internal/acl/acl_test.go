package acl

import (
	"strings"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/azerr"
)

func si(id, policy string) string {
	return "<SignedIdentifier><Id>" + id + "</Id>" + policy + "</SignedIdentifier>"
}

func TestParse(t *testing.T) {
	cases := []struct {
		name, body, code string
		n                int
	}{
		{"empty body", "", "", 0},
		{"blank body", " \n ", "", 0},
		{"empty document", "<SignedIdentifiers />", "", 0},
		{"five", "<SignedIdentifiers>" + strings.Repeat(si("a", ""), 5) + "</SignedIdentifiers>", "", 5},
		{"six", "<SignedIdentifiers>" + strings.Repeat(si("a", ""), 6) + "</SignedIdentifiers>", "InvalidXmlDocument", 0},
		{"id 64", "<SignedIdentifiers>" + si(strings.Repeat("i", 64), "") + "</SignedIdentifiers>", "", 1},
		{"id 65", "<SignedIdentifiers>" + si(strings.Repeat("i", 65), "") + "</SignedIdentifiers>", "InvalidXmlDocument", 0},
		{"no id", "<SignedIdentifiers><SignedIdentifier /></SignedIdentifiers>", "InvalidXmlDocument", 0},
		{"empty id", "<SignedIdentifiers>" + si("", "") + "</SignedIdentifiers>", "InvalidXmlDocument", 0},
		{"truncated", "<SignedIdentifiers><Signed", "InvalidXmlDocument", 0},
		{"wrong root", "<Identifiers>" + si("a", "") + "</Identifiers>", "InvalidXmlDocument", 0},
		{"bad start", "<SignedIdentifiers>" + si("a", "<AccessPolicy><Start>soon</Start></AccessPolicy>") + "</SignedIdentifiers>", "InvalidXmlNodeValue", 0},
		{"bad expiry", "<SignedIdentifiers>" + si("a", "<AccessPolicy><Expiry>2026-13-01</Expiry></AccessPolicy>") + "</SignedIdentifiers>", "InvalidXmlNodeValue", 0},
		{"blank start", "<SignedIdentifiers>" + si("a", "<AccessPolicy><Start> </Start><Permission>r</Permission></AccessPolicy>") + "</SignedIdentifiers>", "", 1},
		{"time forms", "<SignedIdentifiers>" + si("a", "<AccessPolicy><Start>2026-01-01</Start><Expiry>2026-01-01T10:00Z</Expiry></AccessPolicy>") +
			si("b", "<AccessPolicy><Start>2026-01-01T10:00:00</Start><Expiry>2026-01-01T10:00:00.123+02:00</Expiry></AccessPolicy>") + "</SignedIdentifiers>", "", 2},
	}
	for _, c := range cases {
		ids, err := Parse([]byte(c.body))
		got := ""
		if e, ok := azerr.As(err); ok {
			got = e.Code.String()
		} else if err != nil {
			got = err.Error()
		}
		if got != c.code || len(ids) != c.n {
			t.Errorf("%s: %d identifiers, %v; want %d, %q", c.name, len(ids), err, c.n, c.code)
		}
	}
	_, err := Parse([]byte("<SignedIdentifiers>" + si("a", "<AccessPolicy><Start>soon</Start></AccessPolicy>") + "</SignedIdentifiers>"))
	if e, ok := azerr.As(err); !ok || !strings.Contains(detailString(e), "XmlNodeName=Start;") {
		t.Errorf("bad start error does not name the element: %v", err)
	}
}

func detailString(e *azerr.Error) string {
	var b strings.Builder
	for _, d := range e.Details {
		b.WriteString(d.Name + "=" + d.Value + ";")
	}
	return b.String()
}

func TestParseTime(t *testing.T) {
	want := time.Date(2026, 2, 1, 0, 0, 0, 500000000, time.UTC)
	for _, s := range []string{"2026-02-01T00:00:00.5Z", " 2026-02-01T00:00:00.50000009Z ", "2026-02-01T01:00:00.5+01:00"} {
		if got, ok := ParseTime(s); !ok || !got.Equal(want) {
			t.Errorf("%q: %v %v", s, got, ok)
		}
	}
	if FormatTime(want) != "2026-02-01T00:00:00.5000000Z" {
		t.Fatalf("format %s", FormatTime(want))
	}
}

func TestRender(t *testing.T) {
	if got := Render(nil); got != "<SignedIdentifiers />" {
		t.Fatalf("empty %s", got)
	}
	start, perm := "2026-01-01T00:00:00.0000000Z", "r&w"
	got := Render([]Identifier{{ID: "p<1>", Policy: &Policy{Start: &start, Permission: &perm}}, {ID: "bare"}, {ID: "empty", Policy: &Policy{}}})
	want := "<SignedIdentifiers><SignedIdentifier><Id>p&lt;1&gt;</Id><AccessPolicy><Start>2026-01-01T00:00:00.0000000Z</Start><Permission>r&amp;w</Permission></AccessPolicy></SignedIdentifier>" +
		"<SignedIdentifier><Id>bare</Id></SignedIdentifier><SignedIdentifier><Id>empty</Id><AccessPolicy></AccessPolicy></SignedIdentifier></SignedIdentifiers>"
	if got != want {
		t.Fatalf("render\n%s\nwant\n%s", got, want)
	}
}

// FuzzParse: Parse never panics and fails only with Azure errors; an
// accepted document renders to one that parses back to the same
// identifiers.
func FuzzParse(f *testing.F) {
	f.Add([]byte("<SignedIdentifiers>" + si("a", "<AccessPolicy><Start>2026-01-01T00:00:00Z</Start><Permission>r</Permission></AccessPolicy>") + "</SignedIdentifiers>"))
	f.Add([]byte("<SignedIdentifiers>" + si("b", "<AccessPolicy><Expiry>2026-01-01T00:00:00.123456789Z</Expiry></AccessPolicy>") + si("c", "") + "</SignedIdentifiers>"))
	f.Fuzz(func(t *testing.T, body []byte) {
		ids, err := Parse(body)
		if err != nil {
			if _, ok := azerr.As(err); !ok {
				t.Fatalf("non-Azure error %v", err)
			}
			return
		}
		back, err := Parse([]byte(Render(ids)))
		if err != nil || len(back) != len(ids) {
			t.Fatalf("rendered ACL does not parse back: %v", err)
		}
		for i := range ids {
			if Render(ids[i:i+1]) != Render(back[i:i+1]) {
				t.Fatalf("identifier %d: %+v became %+v", i, ids[i], back[i])
			}
		}
	})
}

package guid

import (
	"regexp"
	"testing"
)

var v4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestNewIsVersion4(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		s := NewString()
		if !v4.MatchString(s) {
			t.Fatalf("%q is not a lowercase version-4 GUID", s)
		}
		if seen[s] {
			t.Fatalf("%q twice", s)
		}
		seen[s] = true
	}
}

func TestParse(t *testing.T) {
	g := New()
	for _, s := range []string{g.String(), "ABCDEF01-2345-4789-ABCD-EF0123456789"} {
		back, ok := Parse(s)
		if !ok {
			t.Fatalf("Parse(%q) failed", s)
		}
		if got := back.String(); len(got) != 36 || (s == g.String() && got != s) {
			t.Fatalf("Parse(%q).String() = %q", s, got)
		}
	}
	for _, bad := range []string{"", "abcdef01-2345-4789-abcd-ef012345678", "abcdef01x2345-4789-abcd-ef0123456789", "abcdef01-2345-4789-abcd-ef012345678g"} {
		if _, ok := Parse(bad); ok {
			t.Errorf("Parse(%q) succeeded", bad)
		}
	}
}

func TestValid(t *testing.T) {
	for s, ok := range map[string]bool{
		"aaaaaaaa-1111-2222-3333-444444444444": true, "{aaaaaaaa-1111-2222-3333-444444444444}": true,
		"(AAAAAAAA-1111-2222-3333-444444444444)": true, "aaaaaaaa111122223333444444444444": true,
		"aaaaaaaa-1111-2222-3333-44444444444": false, "not-a-guid": false, "": false, "gggggggg-1111-2222-3333-444444444444": false,
	} {
		if Valid(s) != ok {
			t.Errorf("Valid(%q)", s)
		}
	}
}

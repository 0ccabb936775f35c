package file

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/lazuli-storage/lazuli/internal/azerr"
)

func TestSplitPath(t *testing.T) {
	for in, want := range map[string]string{
		"":        "",
		"/":       "",
		"a":       "a",
		"a/b/c":   "a|b|c",
		`a\b`:     "a|b",
		"/a/b/":   "a|b",
		"Über/日本": "Über|日本",
	} {
		parts, err := SplitPath(in)
		if err != nil || strings.Join(parts, "|") != want {
			t.Errorf("%q: %v %v", in, parts, err)
		}
	}
	for in, code := range map[string]azerr.Code{
		"a//b":                          azerr.InvalidResourceName,
		"a/./b":                         azerr.InvalidResourceName,
		"a/../b":                        azerr.InvalidResourceName,
		"a:b":                           azerr.InvalidResourceName,
		"con":                           azerr.InvalidResourceName,
		"COM1.txt":                      azerr.InvalidResourceName,
		"x/CLOCK$":                      azerr.InvalidResourceName,
		strings.Repeat("n", 256):        azerr.InvalidResourceName,
		strings.Repeat("d/", 250) + "f": azerr.InvalidFileOrDirectoryPathName,
		strings.Repeat("n", 2049):       azerr.InvalidFileOrDirectoryPathName,
	} {
		_, err := SplitPath(in)
		wantCode(t, in[:min(len(in), 20)], err, code)
	}
	if _, err := SplitPath(strings.Repeat("d/", 249) + "f"); err != nil {
		t.Errorf("250 levels refused: %v", err)
	}
}

// FuzzSplitPath: any input is either refused with an Azure error or split
// into valid components that join back to the trimmed input.
func FuzzSplitPath(f *testing.F) {
	for _, s := range []string{"", "a", "a/b", `a\b`, "//", "a//b", "con", "a:b", "\x00", "Ünï/cödé", strings.Repeat("x/", 300)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		parts, err := SplitPath(s)
		if err != nil {
			if _, ok := azerrCode(err); !ok {
				t.Fatalf("non-Azure error %v", err)
			}
			return
		}
		if len(parts) > MaxDepth {
			t.Fatalf("%d levels accepted", len(parts))
		}
		for _, p := range parts {
			if !ValidComponent(p) || !utf8.ValidString(p) {
				t.Fatalf("invalid component %q accepted", p)
			}
		}
		trimmed := strings.Trim(s, `/\`)
		if strings.ReplaceAll(trimmed, `\`, "/") != JoinPath(parts) {
			t.Fatalf("%q split into %q", s, parts)
		}
	})
}

func azerrCode(err error) (string, bool) {
	e, ok := azerr.As(err)
	if !ok {
		return "", false
	}
	return e.Code.String(), true
}

func TestParseAttr(t *testing.T) {
	a, ok := ParseAttr("ReadOnly | Hidden|Archive", false)
	if !ok || a != AttrReadOnly|AttrHidden|AttrArchive || a.String() != "ReadOnly | Hidden | Archive" {
		t.Fatalf("%v %v", a, ok)
	}
	if _, ok := ParseAttr("Directory", false); ok {
		t.Fatal("Directory on a file accepted")
	}
	if a, ok := ParseAttr("None", false); !ok || a.String() != "None" {
		t.Fatal("None")
	}
	if _, ok := ParseAttr("Bogus", true); ok {
		t.Fatal("unknown attribute accepted")
	}
}

// FuzzParseAttr: accepted attribute lists render to a string that parses
// back to the same set.
func FuzzParseAttr(f *testing.F) {
	for _, s := range []string{"None", "ReadOnly|Hidden", " Archive | System ", "Directory", "", "|", "Bogus"} {
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, s string, dir bool) {
		a, ok := ParseAttr(s, dir)
		if !ok {
			return
		}
		b, ok := ParseAttr(a.String(), true)
		if !ok || a != b {
			t.Fatalf("%q -> %v -> %q -> %v", s, a, a.String(), b)
		}
	})
}

// FuzzValidateSDDL: the checker never panics and refuses anything with
// unbalanced parentheses.
func FuzzValidateSDDL(f *testing.F) {
	for _, s := range []string{DefaultSDDL, "O:BA", "D:(A;;FA;;;BA", "((", "", "X:Y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if ValidateSDDL(s) == nil && strings.Count(s, "(") != strings.Count(s, ")") {
			t.Fatalf("unbalanced %q accepted", s)
		}
	})
}

package conditional

import (
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/azerr"
)

const (
	lmtText = "Mon, 27 Jan 2014 22:33:35 GMT"
	before  = "Mon, 27 Jan 2014 22:33:34 GMT"
	after   = "Mon, 27 Jan 2014 22:33:36 GMT"
)

var lmt = time.Date(2014, 1, 27, 22, 33, 35, 600_000_000, time.UTC) // sub-second part must not matter

func vals(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

func mustParse(t *testing.T, im, inm, ims, ius string) Conditions {
	t.Helper()
	c, err := Parse(vals(im), vals(inm), vals(ims), vals(ius))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return c
}

func TestParse(t *testing.T) {
	c := mustParse(t, `"0x1", 0x2 ,W/"0x3"`, "*", lmtText, "")
	if len(c.IfMatch) != 3 || c.IfMatch[0] != "0x1" || c.IfMatch[1] != "0x2" || c.IfMatch[2] != "0x3" {
		t.Fatalf("IfMatch = %q", c.IfMatch)
	}
	if len(c.IfNoneMatch) != 1 || c.IfNoneMatch[0] != "*" {
		t.Fatalf("IfNoneMatch = %q", c.IfNoneMatch)
	}
	if !c.IfModifiedSince.Equal(time.Date(2014, 1, 27, 22, 33, 35, 0, time.UTC)) {
		t.Fatalf("IMS = %v", c.IfModifiedSince)
	}
	if !c.Any() {
		t.Fatal("Any = false")
	}
	if (Conditions{}).Any() {
		t.Fatal("empty Any = true")
	}
	// Unparsable dates are ignored.
	for _, d := range []string{"yesterday", "Mon, 32 Jan 2014 22:33:35 GMT"} {
		c, err := Parse(nil, nil, []string{d}, []string{d})
		if err != nil || c.Any() {
			t.Errorf("Parse(date %q) = %+v, %v; want ignored", d, c, err)
		}
	}
	for _, bad := range [][4][]string{
		{nil, nil, {lmtText, lmtText}, nil},
		{nil, nil, {lmtText + ", " + before}, nil},
		{nil, nil, nil, {lmtText, before}},
		{{`""`}, nil, nil, nil},
		{nil, {" , "}, nil, nil},
	} {
		_, err := Parse(bad[0], bad[1], bad[2], bad[3])
		e, ok := azerr.As(err)
		if !ok || e.Code != azerr.InvalidHeaderValue || e.Status != 400 {
			t.Errorf("Parse(%q) = %v, want 400 InvalidHeaderValue", bad, err)
		}
	}
}

func TestEvalRead(t *testing.T) {
	s := State{Exists: true, ETag: "0xA", LastModified: lmt}
	cases := []struct {
		name              string
		im, inm, ims, ius string
		want              Outcome
	}{
		{"none", "", "", "", "", Pass},
		{"im match", `"0xA"`, "", "", "", Pass},
		{"im unquoted", "0xA", "", "", "", Pass},
		{"im star", "*", "", "", "", Pass},
		{"im list any", `"0xB", "0xA"`, "", "", "", Pass},
		{"im miss", `"0xB"`, "", "", "", Failed},
		{"inm match", "", `"0xA"`, "", "", NotModified},
		{"inm miss", "", `"0xB"`, "", "", Pass},
		{"inm list none match", "", `"0xB","0xC"`, "", "", Pass},
		{"inm list one matches", "", `"0xB","0xA"`, "", "", NotModified},
		{"ims before", "", "", before, "", Pass},
		{"ims equal second", "", "", lmtText, "", NotModified},
		{"ims after", "", "", after, "", NotModified},
		{"ius before", "", "", "", before, Failed},
		{"ius equal second", "", "", "", lmtText, Pass},
		{"ius after", "", "", "", after, Pass},
		{"im ok ius fail", `"0xA"`, "", "", before, Failed},
		{"im fail inm fail: 412 wins", `"0xB"`, `"0xA"`, "", "", Failed},
		{"ius fail ims fail: 412 wins", "", "", after, before, Failed},
		{"inm fail ims ok", "", `"0xA"`, before, "", Pass},
		{"inm ok ims fail", "", `"0xB"`, after, "", Pass},
		{"inm fail ims fail", "", `"0xA"`, after, "", NotModified},
		{"all ok", `"0xA"`, `"0xB"`, before, after, Pass},
	}
	for _, tc := range cases {
		c := mustParse(t, tc.im, tc.inm, tc.ims, tc.ius)
		got, err := EvalRead(c, s, "2021-10-04")
		if err != nil || got != tc.want {
			t.Errorf("%s: EvalRead = %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
	// If-None-Match: * on a read is unsatisfiable.
	for _, st := range []State{s, {}} {
		_, err := EvalRead(mustParse(t, "", "*", "", ""), st, "2021-10-04")
		if e, ok := azerr.As(err); !ok || e.Code != azerr.UnsatisfiableCondition || e.Status != 400 {
			t.Errorf("inm star read: %v", err)
		}
	}
	// A missing resource passes every condition; the caller answers 404.
	got, err := EvalRead(mustParse(t, `"0xA"`, "", "", before), State{}, "2021-10-04")
	if err != nil || got != Pass {
		t.Errorf("missing: %v %v", got, err)
	}
	// Old versions use the write combination rules.
	_, err = EvalRead(mustParse(t, `"0xA"`, `"0xB"`, "", ""), s, "2012-02-12")
	if e, ok := azerr.As(err); !ok || e.Code != azerr.MultipleConditionHeadersNotSupported {
		t.Errorf("old version combination: %v", err)
	}
	got, err = EvalRead(mustParse(t, "", `"0xA"`, "", ""), s, "2012-02-12")
	if err != nil || got != NotModified {
		t.Errorf("old version inm: %v %v", got, err)
	}
}

func TestCheckWriteCombination(t *testing.T) {
	cases := []struct {
		im, inm, ims, ius string
		ok                bool
	}{
		{"", "", "", "", true},
		{`"a"`, "", "", "", true},
		{"", `"a"`, "", "", true},
		{"", "", lmtText, "", true},
		{"", "", "", lmtText, true},
		{`"a"`, "", "", lmtText, true},
		{"", `"a"`, lmtText, "", true},
		{`"a"`, `"b"`, "", "", false},
		{`"a"`, "", lmtText, "", false},
		{"", `"a"`, "", lmtText, false},
		{"", "", lmtText, lmtText, false},
		{`"a"`, `"b"`, lmtText, lmtText, false},
		{`"a"`, "", lmtText, lmtText, false},
		{`"a","b"`, "", "", "", false},
		{"", `"a","b"`, "", "", false},
	}
	for _, tc := range cases {
		err := CheckWriteCombination(mustParse(t, tc.im, tc.inm, tc.ims, tc.ius))
		if tc.ok && err != nil {
			t.Errorf("%+v: unexpected %v", tc, err)
		}
		if !tc.ok {
			e, ok := azerr.As(err)
			if !ok || e.Code != azerr.MultipleConditionHeadersNotSupported || e.Status != 400 {
				t.Errorf("%+v: got %v, want 400 MultipleConditionHeadersNotSupported", tc, err)
			}
		}
	}
}

func TestEvalWrite(t *testing.T) {
	s := State{Exists: true, ETag: "0xA", LastModified: lmt}
	cases := []struct {
		name              string
		exists            bool
		im, inm, ims, ius string
		want              Outcome
	}{
		{"none", true, "", "", "", "", Pass},
		{"im match", true, `"0xA"`, "", "", "", Pass},
		{"im star", true, "*", "", "", "", Pass},
		{"im miss", true, `"0xB"`, "", "", "", Failed},
		{"inm match", true, "", `"0xA"`, "", "", Failed},
		{"inm miss", true, "", `"0xB"`, "", "", Pass},
		{"inm star exists", true, "", "*", "", "", ExistsButNoneMatchStar},
		{"ims before", true, "", "", before, "", Pass},
		{"ims same second", true, "", "", lmtText, "", Failed},
		{"ius before", true, "", "", "", before, Failed},
		{"ius same second", true, "", "", "", lmtText, Pass},
		{"im+ius only im counts", true, `"0xA"`, "", "", before, Pass},
		{"im+ius im fails", true, `"0xB"`, "", "", after, Failed},
		{"inm+ims only inm counts", true, "", `"0xB"`, after, "", Pass},
		{"inm+ims inm fails", true, "", `"0xA"`, before, "", Failed},
		{"missing im", false, `"0xA"`, "", "", "", Failed},
		{"missing im star", false, "*", "", "", "", Failed},
		{"missing inm star", false, "", "*", "", "", Pass},
		{"missing inm", false, "", `"0xA"`, "", "", Pass},
		{"missing ims", false, "", "", after, "", Pass},
		{"missing ius", false, "", "", "", before, Pass},
	}
	for _, tc := range cases {
		st := s
		st.Exists = tc.exists
		got, err := EvalWrite(mustParse(t, tc.im, tc.inm, tc.ims, tc.ius), st)
		if err != nil || got != tc.want {
			t.Errorf("%s: EvalWrite = %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
	if _, err := EvalWrite(mustParse(t, `"0xA"`, `"0xB"`, "", ""), s); err == nil {
		t.Error("bad combination accepted")
	}
}

func TestEvalDates(t *testing.T) {
	s := State{Exists: true, ETag: "0xA", LastModified: lmt}
	if EvalDates(mustParse(t, "", "", before, after), s) != Pass {
		t.Error("both met")
	}
	if EvalDates(mustParse(t, "", "", lmtText, ""), s) != Failed {
		t.Error("ims same second")
	}
	if EvalDates(mustParse(t, "", "", "", before), s) != Failed {
		t.Error("ius before")
	}
	if EvalDates(mustParse(t, "", "", "", before), State{}) != Pass {
		t.Error("missing")
	}
}

func TestOutcomeErr(t *testing.T) {
	if Pass.Err(azerr.ConditionNotMet, 0) != nil {
		t.Error("pass")
	}
	check := func(err error, code azerr.Code, status int) {
		t.Helper()
		e, ok := azerr.As(err)
		if !ok || e.Code != code || e.Status != status {
			t.Errorf("got %v, want %d %s", err, status, code)
		}
	}
	check(NotModified.Err(azerr.ConditionNotMet, 0), azerr.ConditionNotMet, 304)
	check(Failed.Err(azerr.ConditionNotMet, 0), azerr.ConditionNotMet, 412)
	check(Failed.Err(azerr.TargetConditionNotMet, 0), azerr.TargetConditionNotMet, 412)
	check(ExistsButNoneMatchStar.Err(azerr.ConditionNotMet, azerr.BlobAlreadyExists), azerr.BlobAlreadyExists, 409)
	check(ExistsButNoneMatchStar.Err(azerr.ConditionNotMet, 0), azerr.ConditionNotMet, 412)
}

func FuzzParse(f *testing.F) {
	f.Add(`"0x1"`, "*", lmtText, before)
	f.Add(`W/"x", y`, `,,`, "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994")
	f.Fuzz(func(t *testing.T, im, inm, ims, ius string) {
		c, err := Parse(vals(im), vals(inm), vals(ims), vals(ius))
		if err != nil {
			if _, ok := azerr.As(err); !ok {
				t.Fatalf("non-Azure error %v", err)
			}
			return
		}
		s := State{Exists: true, ETag: "0x1", LastModified: lmt}
		if _, err := EvalRead(c, s, "2021-10-04"); err != nil {
			if e, ok := azerr.As(err); !ok || e.Code != azerr.UnsatisfiableCondition {
				t.Fatalf("EvalRead: %v", err)
			}
		}
		if _, err := EvalWrite(c, s); err != nil {
			if _, ok := azerr.As(err); !ok {
				t.Fatalf("non-Azure error %v", err)
			}
		}
	})
}

package odata

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

type ent map[string]Value

func (e ent) Lookup(n string) (Value, bool) { v, ok := e[n]; return v, ok }

func str(s string) Value     { return Value{Type: String, Str: s} }
func i32(n int64) Value      { return Value{Type: Int32, Int: n} }
func i64(n int64) Value      { return Value{Type: Int64, Int: n} }
func dbl(f float64) Value    { return Value{Type: Double, Float: f} }
func boolean(b bool) Value   { return Value{Type: Boolean, Bool: b} }
func dt(s string) Value      { t, _ := ParseDateTime(s); return Value{Type: DateTime, Int: t} }
func guid(s string) Value    { return Value{Type: Guid, Str: s} }
func binary(b ...byte) Value { return Value{Type: Binary, Bytes: b} }
func mustParse(t *testing.T, s string) *Expr {
	t.Helper()
	e, err := Parse(s)
	if err != nil {
		t.Fatalf("Parse(%q): %v", s, err)
	}
	return e
}

var sample = ent{
	"PartitionKey": str("p1"),
	"RowKey":       str("r'1"),
	"Name":         str("Smith"),
	"Age":          i32(42),
	"Big":          i64(1 << 40),
	"Price":        dbl(9.5),
	"Active":       boolean(true),
	"Born":         dt("1980-05-06T07:08:09.1234567Z"),
	"Id":           guid("4185404A-5818-48c3-b9be-f217df0dba6f"),
	"Blob":         binary(0x0a, 0x1b),
	"Nan":          dbl(math.NaN()),
}

func TestMatch(t *testing.T) {
	cases := []struct {
		filter string
		want   bool
	}{
		{"", true},
		{"Name eq 'Smith'", true},
		{"Name ne 'Smith'", false},
		{"Name gt 'Sm'", true},
		{"Name lt 'Sm'", false},
		{"RowKey eq 'r''1'", true},
		{"Age eq 42", true},
		{"Age ge 42 and Age le 42", true},
		{"Age gt 42", false},
		{"42 lt Age", false},
		{"41 lt Age", true},
		{"Age eq 42L", false}, // Int32 property, Int64 literal: types differ
		{"Big eq 1099511627776L", true},
		{"Big eq 1099511627776", true}, // too large for Int32: read as Int64
		{"Big gt 5", false},
		{"Price eq 9.5", true},
		{"Price gt 9.4 and Price lt 9.6", true},
		{"Price eq 9.5d", true},
		{"Price gt 1e0", true},
		{"Active eq true", true},
		{"Active eq false", false},
		{"Active ne false", true},
		{"Born eq datetime'1980-05-06T07:08:09.1234567Z'", true},
		{"Born gt datetime'1980-05-06T07:08:09Z'", true},
		{"Id eq guid'4185404a-5818-48c3-b9be-f217df0dba6f'", true},
		{"Blob eq X'0A1B'", true},
		{"Blob eq binary'0a1b'", true},
		{"Blob gt X'0A'", true},
		{"Missing eq 'x'", false},
		{"Missing ne 'x'", false},
		{"not (Missing eq 'x')", true},
		{"Name eq 'Smith' or Missing eq 1", true},
		{"not Name eq 'Smith'", false},
		{"(Age eq 1 or Age eq 42) and (Name eq 'Smith')", true},
		{"Age eq 1 or Age eq 2 and Name eq 'Smith'", false},
		{"Age eq 42 or Age eq 2 and Name eq 'Nobody'", true}, // and binds tighter
		{"Name eq 42", false},
		{"true", true},
		{"false or Age eq 42", true},
		{"  Name   eq   'Smith'  ", true},
		{"Nan eq 1.0", false},
		{"PartitionKey eq 'p1' and RowKey ge 'r'", true},
		{"Timestamp gt datetime'2000-01-01T00:00:00Z'", false},
		{"Age eq -5", false},
		{"'Smith' eq Name", true},
	}
	for _, c := range cases {
		e := mustParse(t, c.filter)
		if got := e.Match(sample); got != c.want {
			t.Errorf("%q: got %v want %v", c.filter, got, c.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	bad := []string{
		"Name eq", "eq 'x'", "Name 'x'", "Name eq 'x", "(Name eq 'x'", "Name eq 'x')",
		"Name eq 'x' and", "Name eq 'x' xor Age eq 1", "Name eq Other", "Age eq 1.2.3",
		"Born eq datetime'notadate'", "Id eq guid'123'", "Blob eq X'0G'", "Age eq 99999999999999999999",
		"Name eq 'x' and and Age eq 1", "not", "Name == 'x'", "Name eq foo'bar'", "Age eq 0x10",
		"Born eq datetime'2020-01-01T00:00:00.12345678Z'", "Born eq datetime'1500-01-01T00:00:00Z'",
		strings.Repeat("(", 200) + "Age eq 1" + strings.Repeat(")", 200),
	}
	for _, s := range bad {
		if _, err := Parse(s); err == nil || !errors.Is(err, ErrSyntax) {
			t.Errorf("Parse(%q) = %v, want a syntax error", s, err)
		}
	}
}

func TestMaxComparisons(t *testing.T) {
	parts := make([]string, MaxComparisons)
	for i := range parts {
		parts[i] = "Age eq 1"
	}
	if _, err := Parse(strings.Join(parts, " or ")); err != nil {
		t.Fatalf("%d comparisons: %v", MaxComparisons, err)
	}
	parts = append(parts, "Age eq 2")
	if _, err := Parse(strings.Join(parts, " or ")); err == nil {
		t.Fatalf("%d comparisons accepted", len(parts))
	}
}

func TestConjuncts(t *testing.T) {
	e := mustParse(t, "PartitionKey eq 'a' and (RowKey ge 'b' and RowKey lt 'c') and (Age eq 1 or Age eq 2)")
	var props []string
	for _, c := range e.Conjuncts() {
		props = append(props, c.Property+" "+c.Op.String())
	}
	if got := strings.Join(props, ","); got != "PartitionKey eq,RowKey ge,RowKey lt" {
		t.Fatalf("conjuncts %s", got)
	}
	if len(mustParse(t, "PartitionKey eq 'a' or RowKey eq 'b'").Conjuncts()) != 0 {
		t.Fatal("or produced conjuncts")
	}
}

func TestDateTimeFormatting(t *testing.T) {
	for in, want := range map[string]string{
		"2021-10-15T16:13:06.0167921Z": "2021-10-15T16:13:06.0167921Z",
		"2021-10-15T16:13:06Z":         "2021-10-15T16:13:06Z",
		"2021-10-15T16:13:06.5Z":       "2021-10-15T16:13:06.5Z",
		"2021-10-15T18:13:06+02:00":    "2021-10-15T16:13:06Z",
		"1601-01-01T00:00:00Z":         "1601-01-01T00:00:00Z",
		"9999-12-31T23:59:59.9999999Z": "9999-12-31T23:59:59.9999999Z",
	} {
		ticks, err := ParseDateTime(in)
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if got := FormatDateTime(ticks); got != want {
			t.Errorf("%s -> %s, want %s", in, got, want)
		}
	}
	ticks, _ := ParseDateTime("2021-10-15T16:13:06.01Z")
	if got := FormatTicks(ticks); got != "2021-10-15T16:13:06.0100000Z" {
		t.Fatalf("FormatTicks %s", got)
	}
}

func TestFormatDouble(t *testing.T) {
	for f, want := range map[float64]string{2: "2.0", 1.5: "1.5", -0.25: "-0.25", 1e21: "1e+21", 3e9: "3000000000.0", 1e-7: "1e-07", math.Inf(1): "Infinity"} {
		if got := FormatDouble(f); got != want {
			t.Errorf("FormatDouble(%v) = %s, want %s", f, got, want)
		}
	}
}

// FuzzParse: any input either parses or fails with ErrSyntax, never
// panics, and a parsed expression evaluates without panicking.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"Name eq 'Smith'", "Age gt 30 and not (Active eq false)", "Big eq 12L or Price le 1.5e3",
		"Born ge datetime'2008-07-10T00:00:00Z'", "Id eq guid'a455c695-df98-5678-aaaa-81d3367e5a34'",
		"Blob eq X'0A1B' or Blob eq binary'FF'", "(((a eq 1)))", "RowKey eq 'it''s'", "true", "-1 lt x",
		"PartitionKey eq 'a' and RowKey ge 'b' and RowKey lt 'c'", "x eq 1.5d", "'", "(", "not not not x eq 1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := Parse(s)
		if err != nil {
			if !errors.Is(err, ErrSyntax) {
				t.Fatalf("error without ErrSyntax: %v", err)
			}
			return
		}
		e.Match(sample)
		e.Conjuncts()
	})
}

func TestDateTimeRange(t *testing.T) {
	if got := TimeToTicks(time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC)); got != minTicks {
		t.Fatalf("minTicks %d, want %d", minTicks, got)
	}
	if got := TimeToTicks(time.Date(9999, 12, 31, 23, 59, 59, 999999900, time.UTC)); got != maxTicks {
		t.Fatalf("maxTicks %d, want %d", maxTicks, got)
	}
	for _, s := range []string{"1600-12-31T23:59:59.9999999Z", "10000-01-01T00:00:00Z", "0001-01-01T00:00:00Z"} {
		if _, err := ParseDateTime(s); err == nil {
			t.Errorf("%s accepted", s)
		}
	}
}

func TestAppendTicksMatchesTimeFormat(t *testing.T) {
	for _, ticks := range []int64{0, 1, minTicks, maxTicks, unixEpochTicks, 638328979860167921, 638328979860000000, 3155378975999999999} {
		tm := TicksToTime(ticks)
		want := tm.Format("2006-01-02T15:04:05") + "." + fmt.Sprintf("%07d", tm.Nanosecond()/100) + "Z"
		if got := FormatTicks(ticks); got != want {
			t.Errorf("FormatTicks(%d) = %q, want %q", ticks, got, want)
		}
		if got, w := string(AppendTicks([]byte("x"), ticks, "%3A")), "x"+strings.ReplaceAll(want, ":", "%3A"); got != w {
			t.Errorf("AppendTicks(%d) = %q, want %q", ticks, got, w)
		}
	}
}

// TestAppendTicksFast: the direct calendar computation renders every
// four-digit year exactly as time.Time does.
func TestAppendTicksFast(t *testing.T) {
	slow := func(ticks int64, sep string) string {
		tm := TicksToTime(ticks)
		return strings.ReplaceAll(tm.Format("2006-01-02T15:04:05"), ":", sep) + fmt.Sprintf(".%07dZ", tm.Nanosecond()/100)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	check := func(ticks int64) {
		for _, sep := range []string{":", "%3A"} {
			if got, want := string(AppendTicks([]byte("x"), ticks, sep)), "x"+slow(ticks, sep); got != want {
				t.Fatalf("%d: %s, want %s", ticks, got, want)
			}
		}
	}
	for _, tk := range []int64{0, 1, ticksPerDay - 1, ticksPerDay, maxFourDigitTicks, maxFourDigitTicks - 1, minTicks, unixEpochTicks, unixEpochTicks - 1} {
		check(tk)
	}
	// Every day boundary of a few leap and century years, and random
	// instants over the whole range.
	for _, y := range []int{1, 4, 100, 1600, 1601, 1900, 2000, 2024, 2100, 9999} {
		start := TimeToTicks(time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC))
		for d := int64(0); d < 366; d++ {
			check(start + d*ticksPerDay)
			check(start + d*ticksPerDay - 1)
		}
	}
	for i := 0; i < 200000; i++ {
		check(rng.Int64N(maxFourDigitTicks + 1))
	}
}

// TestIntegerLiteralAgainstDouble pins that an integer literal compares
// with a Double property by value, as Azure matches doubleField eq 5
// against 5.0; other type mixes still never match.
func TestIntegerLiteralAgainstDouble(t *testing.T) {
	e := ent{"d": {Type: Double, Float: 5}, "i": {Type: Int32, Int: 5}, "b": {Type: Boolean, Bool: true}}
	for f, want := range map[string]bool{
		"d eq 5":              true,
		"d eq 5L":             true,
		"d gt 4":              true,
		"d lt 5":              false,
		"d ne 6":              true,
		"d eq 5.0":            true,
		"i eq 5":              true,
		"i eq '5'":            false,
		"b eq True":           true,
		"b eq TRUE":           true,
		"b ne fAlSe":          true,
		"true and b eq true":  true,
		"FALSE or b eq false": false,
		"not (b eq tRuE)":     false,
	} {
		if got := mustParse(t, f).Match(e); got != want {
			t.Errorf("%s: %v, want %v", f, got, want)
		}
	}
}

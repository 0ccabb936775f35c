// Package odata holds the Table service's Entity Data Model values and its
// OData $filter language: a lexer, a parser producing an expression tree, and
// an evaluator that decides whether an entity matches.
//
// It is a leaf package: it knows nothing about HTTP or storage.
package odata

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Type is an Entity Data Model primitive type.
type Type uint8

// The Edm types the Table service stores.
const (
	String Type = iota + 1
	Int32
	Int64
	Double
	Boolean
	DateTime
	Guid
	Binary
)

var typeNames = [...]string{
	String:   "Edm.String",
	Int32:    "Edm.Int32",
	Int64:    "Edm.Int64",
	Double:   "Edm.Double",
	Boolean:  "Edm.Boolean",
	DateTime: "Edm.DateTime",
	Guid:     "Edm.Guid",
	Binary:   "Edm.Binary",
}

// Name returns the Edm type name, for example "Edm.Int64".
func (t Type) Name() string {
	if int(t) < len(typeNames) && t != 0 {
		return typeNames[t]
	}
	return "Edm.Unknown"
}

// ParseType maps an Edm type name to its Type.
func ParseType(name string) (Type, bool) {
	for i, n := range typeNames {
		if n != "" && n == name {
			return Type(i), true
		}
	}
	return 0, false
}

// Value is one typed property value.
//
//	String, Guid: Str
//	Int32, Int64: Int
//	DateTime:     Int holds 100-nanosecond ticks since 0001-01-01T00:00:00Z
//	Double:       Float
//	Boolean:      Bool
//	Binary:       Bytes
type Value struct {
	Type  Type
	Str   string
	Int   int64
	Float float64
	Bool  bool
	Bytes []byte
}

// Ticks constants: .NET style 100 ns ticks since year 1.
const (
	ticksPerSecond = 10_000_000
	// unixEpochTicks is the tick count of 1970-01-01T00:00:00Z.
	unixEpochTicks = 621355968000000000
)

// minTicks and maxTicks bound the DateTime values the Table service
// accepts: 1601-01-01T00:00:00Z .. 9999-12-31T23:59:59.9999999Z.
const (
	minTicks = 504911232000000000
	maxTicks = 3155378975999999999
)

// TimeToTicks converts t to ticks, truncating below 100 ns.
func TimeToTicks(t time.Time) int64 {
	t = t.UTC()
	sec := t.Unix()
	return unixEpochTicks + sec*ticksPerSecond + int64(t.Nanosecond()/100)
}

// TicksToTime converts ticks to a UTC time.
func TicksToTime(ticks int64) time.Time {
	d := ticks - unixEpochTicks
	sec := d / ticksPerSecond
	rem := d % ticksPerSecond
	if rem < 0 {
		rem += ticksPerSecond
		sec--
	}
	return time.Unix(sec, rem*100).UTC()
}

// FormatTicks renders ticks as ISO 8601 UTC with exactly seven fractional
// digits, the form Azure uses for Timestamp ("2021-10-15T16:13:06.0167921Z").
func FormatTicks(ticks int64) string {
	return string(AppendTicks(make([]byte, 0, 28), ticks, ":"))
}

// AppendTicks appends FormatTicks(ticks) to b, with sep in place of each
// ':' (an ETag carries the time URL-encoded, sep "%3A").
func AppendTicks(b []byte, ticks int64, sep string) []byte {
	if ticks >= 0 && ticks <= maxFourDigitTicks {
		return appendTicksFast(b, ticks, sep)
	}
	t := TicksToTime(ticks)
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		// Out of the four-digit range (never stored): the general form.
		s := t.AppendFormat(nil, "2006-01-02T15:04:05")
		s = []byte(strings.ReplaceAll(string(s), ":", sep))
		b = append(b, s...)
	} else {
		hour, minute, sec := t.Clock()
		b = append(b, byte('0'+year/1000), byte('0'+year/100%10), byte('0'+year/10%10), byte('0'+year%10), '-')
		b = append(b, byte('0'+int(month)/10), byte('0'+int(month)%10), '-', byte('0'+day/10), byte('0'+day%10), 'T')
		b = append(b, byte('0'+hour/10), byte('0'+hour%10))
		b = append(b, sep...)
		b = append(b, byte('0'+minute/10), byte('0'+minute%10))
		b = append(b, sep...)
		b = append(b, byte('0'+sec/10), byte('0'+sec%10))
	}
	b = append(b, '.')
	frac := t.Nanosecond() / 100
	for div := 1_000_000; div > 0; div /= 10 {
		b = append(b, byte('0'+frac/div%10))
	}
	return append(b, 'Z')
}

const (
	ticksPerDay = 24 * 3600 * ticksPerSecond
	// maxFourDigitTicks is 9999-12-31T23:59:59.9999999Z.
	maxFourDigitTicks = 3155378975999999999
	// daysToUnixEpoch is the day number of 1970-01-01 counted from
	// 0001-01-01.
	daysToUnixEpoch = 719162
)

// appendTicksFast is AppendTicks for years 1 to 9999, with the calendar
// computed from the day number directly (H. Hinnant's civil_from_days)
// instead of through time.Time.
func appendTicksFast(b []byte, ticks int64, sep string) []byte {
	days := ticks / ticksPerDay
	rem := ticks % ticksPerDay
	z := days - daysToUnixEpoch + 719468 // days since 0000-03-01
	era := z / 146097                    // z >= 0 for year 1 and later
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	day := int(doy - (153*mp+2)/5 + 1)
	month := int(mp + 3)
	if mp >= 10 {
		month = int(mp - 9)
	}
	year := int(yoe + era*400)
	if month <= 2 {
		year++
	}
	sec := rem / ticksPerSecond
	frac := int(rem % ticksPerSecond)
	hour, minute, second := int(sec/3600), int(sec/60%60), int(sec%60)
	b = append(b, byte('0'+year/1000), byte('0'+year/100%10), byte('0'+year/10%10), byte('0'+year%10), '-')
	b = append(b, byte('0'+month/10), byte('0'+month%10), '-', byte('0'+day/10), byte('0'+day%10), 'T')
	b = append(b, byte('0'+hour/10), byte('0'+hour%10))
	b = append(b, sep...)
	b = append(b, byte('0'+minute/10), byte('0'+minute%10))
	b = append(b, sep...)
	b = append(b, byte('0'+second/10), byte('0'+second%10), '.')
	var d [7]byte
	for i := 6; i >= 0; i-- {
		d[i] = byte('0' + frac%10)
		frac /= 10
	}
	b = append(b, d[:]...)
	return append(b, 'Z')
}

// ParseDateTime parses an ISO 8601 date-time with an optional fraction of
// up to seven digits and a Z or numeric offset, returning ticks. Values
// outside 1601..9999 are rejected.
func ParseDateTime(s string) (int64, error) {
	// The standard parser accepts up to nine fractional digits; the Table
	// service allows seven.
	if i := strings.IndexByte(s, '.'); i >= 0 {
		j := i + 1
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j-i-1 > 7 || j == i+1 {
			return 0, fmt.Errorf("odata: invalid DateTime %q", s)
		}
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		// Tolerate a missing zone, read as UTC.
		t2, err2 := time.Parse("2006-01-02T15:04:05.9999999", s)
		if err2 != nil {
			return 0, fmt.Errorf("odata: invalid DateTime %q", s)
		}
		t = t2
	}
	t = t.UTC()
	if t.Year() < 1601 || t.Year() > 9999 {
		return 0, fmt.Errorf("odata: DateTime %q out of range", s)
	}
	ticks := TimeToTicks(t)
	if ticks < minTicks || ticks > maxTicks {
		return 0, fmt.Errorf("odata: DateTime %q out of range", s)
	}
	return ticks, nil
}

// FormatDateTime renders a DateTime property value: UTC, fractional digits
// only as many as needed (at most seven).
func FormatDateTime(ticks int64) string {
	t := TicksToTime(ticks)
	frac := t.Nanosecond() / 100
	s := t.Format("2006-01-02T15:04:05")
	if frac != 0 {
		f := fmt.Sprintf("%07d", frac)
		s += "." + strings.TrimRight(f, "0")
	}
	return s + "Z"
}

// AppendDateTime appends FormatDateTime(ticks) to b.
func AppendDateTime(b []byte, ticks int64) []byte {
	t := TicksToTime(ticks)
	b = t.AppendFormat(b, "2006-01-02T15:04:05")
	if frac := t.Nanosecond() / 100; frac != 0 {
		b = append(b, '.')
		n := 7
		for frac%10 == 0 {
			frac /= 10
			n--
		}
		var d [7]byte
		for i := n - 1; i >= 0; i-- {
			d[i] = byte('0' + frac%10)
			frac /= 10
		}
		b = append(b, d[:n]...)
	}
	return append(b, 'Z')
}

// ValidGuid reports whether s is a GUID in 8-4-4-4-12 hex form.
func ValidGuid(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !isHex(c) {
				return false
			}
		}
	}
	return true
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// FormatDouble renders a finite double as a JSON number that always reads
// back as a Double (it carries a decimal point or an exponent), shortest
// form that round-trips. Special values render as "NaN", "Infinity",
// "-Infinity".
func FormatDouble(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return string(AppendDouble(nil, f))
}

// AppendDouble appends FormatDouble(f) for a finite f.
func AppendDouble(b []byte, f float64) []byte {
	start := len(b)
	// Plain notation in the range where it stays short (as JavaScript and
	// .NET print doubles), exponent notation outside it.
	if a := math.Abs(f); a == 0 || (a >= 1e-6 && a < 1e21) {
		// Plain notation has no exponent: only the point can be missing.
		b = strconv.AppendFloat(b, f, 'f', -1, 64)
		if bytes.IndexByte(b[start:], '.') < 0 {
			b = append(b, ".0"...)
		}
		return b
	}
	b = strconv.AppendFloat(b, f, 'g', -1, 64)
	if !bytes.ContainsAny(b[start:], ".eEn") {
		b = append(b, ".0"...)
	}
	return b
}

// ParseDouble parses a double including the special spellings.
func ParseDouble(s string) (float64, error) {
	switch s {
	case "NaN":
		return math.NaN(), nil
	case "Infinity", "INF":
		return math.Inf(1), nil
	case "-Infinity", "-INF":
		return math.Inf(-1), nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("odata: invalid Double %q", s)
	}
	return f, nil
}

// Compare orders a and b when they have the same type; ok is false when the
// types differ (the comparison then does not match, as on Azure).
func Compare(a, b Value) (c int, ok bool) {
	if a.Type != b.Type {
		return 0, false
	}
	switch a.Type {
	case String:
		return strings.Compare(a.Str, b.Str), true
	case Guid:
		return strings.Compare(strings.ToLower(a.Str), strings.ToLower(b.Str)), true
	case Int32, Int64, DateTime:
		return cmpInt(a.Int, b.Int), true
	case Double:
		if math.IsNaN(a.Float) || math.IsNaN(b.Float) {
			if math.IsNaN(a.Float) && math.IsNaN(b.Float) {
				return 0, true
			}
			return 0, false
		}
		switch {
		case a.Float < b.Float:
			return -1, true
		case a.Float > b.Float:
			return 1, true
		}
		return 0, true
	case Boolean:
		return cmpInt(b2i(a.Bool), b2i(b.Bool)), true
	case Binary:
		return bytes.Compare(a.Bytes, b.Bytes), true
	}
	return 0, false
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

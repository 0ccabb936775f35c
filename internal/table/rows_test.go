package table

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/lazuli-storage/lazuli/internal/table/odata"
)

// keyAlphabet holds keys with shared prefixes, non-ASCII and quotes, so
// key order and string order are exercised where they could differ.
var keyAlphabet = []string{"", "a", "aa", "a b", "ab", "b", "a'", "ä", "zz", "\u00ff", "\uffff", "😀", "a~", "a\u00a0x"}

func quoteLit(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// randomKeyFilter builds a $filter of one to four comparisons, mostly on
// the keys, joined mostly by "and".
func randomKeyFilter(rng *rand.Rand) string {
	ops := []string{"eq", "ne", "gt", "ge", "lt", "le"}
	n := 1 + rng.IntN(4)
	var parts []string
	for range n {
		var c string
		switch k := rng.IntN(10); {
		case k < 4:
			c = "PartitionKey " + ops[rng.IntN(len(ops))] + " " + quoteLit(keyAlphabet[rng.IntN(len(keyAlphabet))])
		case k < 8:
			c = "RowKey " + ops[rng.IntN(len(ops))] + " " + quoteLit(keyAlphabet[rng.IntN(len(keyAlphabet))])
		case k == 8:
			c = "N " + ops[rng.IntN(len(ops))] + " " + []string{"3", "'3'", "7"}[rng.IntN(3)]
		default:
			c = []string{"PartitionKey eq 5", "RowKey gt 1", "true", "not (RowKey lt 'b')"}[rng.IntN(4)]
		}
		parts = append(parts, c)
	}
	f := parts[0]
	for _, p := range parts[1:] {
		if rng.IntN(6) == 0 {
			f = "(" + f + ") or " + p
		} else {
			f = f + " and " + p
		}
	}
	return f
}

type keyPair struct{ pk, rk string }

// TestKeyRangeFilterSkip: a query answers exactly the entities its filter
// matches, whether or not rangeExact lets the scan skip the evaluator;
// QueryRows and QueryEntities agree row for row.
func TestKeyRangeFilterSkip(t *testing.T) {
	forEachEngine(t, func(t *testing.T, s *Service) {
		s.maxScan = 100_000
		ctx := context.Background()
		mustTable(t, s, "keys")
		var all []*Entity
		n := 0
		for _, pk := range keyAlphabet {
			if pk == "" {
				continue
			}
			for _, rk := range keyAlphabet {
				n++
				e, err := s.Apply(ctx, acct, "keys", Op{Kind: OpInsert, PartitionKey: pk, RowKey: rk, Props: []Property{prop("N", i32(n%10))}})
				if err != nil {
					t.Fatal(err)
				}
				all = append(all, e)
			}
		}
		// The empty PartitionKey too, in a partition of its own.
		e, err := s.Apply(ctx, acct, "keys", Op{Kind: OpInsert, PartitionKey: "", RowKey: "x", Props: []Property{prop("N", i32(3))}})
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, e)
		sort.Slice(all, func(i, j int) bool {
			return bytes.Compare(entityKey("u", all[i].PartitionKey, all[i].RowKey), entityKey("u", all[j].PartitionKey, all[j].RowKey)) < 0
		})
		rng := rand.New(rand.NewPCG(7, 11))
		exact := 0
		var rp RowPage
		for i := 0; i < 600; i++ {
			src := randomKeyFilter(rng)
			f, err := odata.Parse(src)
			if err != nil {
				t.Fatalf("%s: %v", src, err)
			}
			if rangeExact(f) {
				exact++
			}
			var want []keyPair
			for _, e := range all {
				if f.Match(e) {
					want = append(want, keyPair{e.PartitionKey, e.RowKey})
				}
			}
			page, err := s.QueryEntities(ctx, acct, "keys", Query{Filter: f})
			if err != nil {
				t.Fatal(err)
			}
			var got []keyPair
			for _, e := range page.Entities {
				got = append(got, keyPair{e.PartitionKey, e.RowKey})
			}
			if !reflect.DeepEqual(got, want) || page.More {
				t.Fatalf("%s (exact %v):\n got %q\nwant %q", src, rangeExact(f), got, want)
			}
			if err := s.QueryRows(ctx, acct, "keys", Query{Filter: f}, &rp, 0, nil); err != nil {
				t.Fatal(err)
			}
			if rp.Len() != len(page.Entities) || rp.More {
				t.Fatalf("%s: QueryRows %d rows, QueryEntities %d", src, rp.Len(), len(page.Entities))
			}
			for j := range rp.Len() {
				r, e := rp.Row(j), page.Entities[j]
				if string(r.PartitionKey) != e.PartitionKey || string(r.RowKey) != e.RowKey || r.Timestamp() != e.Timestamp {
					t.Fatalf("%s: row %d differs", src, j)
				}
			}
			if i%10 != 0 {
				continue
			}
			// A page over the hold bound is streamed: the same rows, in
			// order, none kept in the page (every tenth filter: the
			// second scan is slow on SQLite under the race detector).
			var streamed []Row
			streamErr := s.QueryRows(ctx, acct, "keys", Query{Filter: f}, &rp, 1, func(p *RowPage, rows func(func(Row) error) error) error {
				if p.Len() != 0 || p.More {
					t.Fatalf("%s: streamed page holds %d rows, more %v", src, p.Len(), p.More)
				}
				return rows(func(r Row) error {
					streamed = append(streamed, r)
					return nil
				})
			})
			if streamErr != nil {
				t.Fatal(streamErr)
			}
			if len(streamed) != len(page.Entities) {
				t.Fatalf("%s: streamed %d rows, QueryEntities %d", src, len(streamed), len(page.Entities))
			}
			for j, r := range streamed {
				e := page.Entities[j]
				if string(r.PartitionKey) != e.PartitionKey || string(r.RowKey) != e.RowKey || r.Timestamp() != e.Timestamp {
					t.Fatalf("%s: streamed row %d differs", src, j)
				}
			}
		}
		if exact < 50 || exact > 550 {
			t.Fatalf("%d of 600 filters exact: the generator does not exercise both paths", exact)
		}
	})
}

func TestRangeExact(t *testing.T) {
	for src, want := range map[string]bool{
		"":                    true,
		"PartitionKey eq 'p'": true,
		"PartitionKey ge 'a' and PartitionKey lt 'b'":                 true,
		"PartitionKey eq 'p' and RowKey lt 'r0500'":                   true,
		"RowKey lt 'r' and 'p' eq PartitionKey":                       true,
		"(PartitionKey eq 'p') and (RowKey gt 'a' and RowKey le 'z')": true,
		"RowKey lt 'r'":                               false,
		"PartitionKey gt 'a' and RowKey lt 'r'":       false,
		"PartitionKey ne 'p'":                         false,
		"PartitionKey eq 'p' and RowKey ne 'r'":       false,
		"PartitionKey eq 'p' or RowKey eq 'r'":        false,
		"not (PartitionKey eq 'p')":                   false,
		"PartitionKey eq 'p' and N eq 1":              false,
		"PartitionKey eq 5":                           false,
		"PartitionKey eq 'p' and true":                false,
		"Timestamp gt datetime'2020-01-01T00:00:00Z'": false,
	} {
		f, err := odata.Parse(src)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if got := rangeExact(f); got != want {
			t.Errorf("rangeExact(%s) = %v, want %v", src, got, want)
		}
	}
}

// TestRowPropsMatchDecode: walking a record with Row.Props yields the
// properties decodeEntity builds, for every type.
func TestRowPropsMatchDecode(t *testing.T) {
	e := &Entity{PartitionKey: "p", RowKey: "r", Timestamp: 637000000000000123, Props: []Property{
		prop("S", odata.Value{Type: odata.String, Str: "héllo \"x\""}),
		prop("E", odata.Value{Type: odata.String, Str: ""}),
		prop("I", i32(-5)),
		prop("L", odata.Value{Type: odata.Int64, Int: math.MinInt64}),
		prop("D", odata.Value{Type: odata.Double, Float: math.Inf(-1)}),
		prop("B", odata.Value{Type: odata.Boolean, Bool: true}),
		prop("T", odata.Value{Type: odata.DateTime, Int: 637000000000000001}),
		prop("G", odata.Value{Type: odata.Guid, Str: "4185404a-5818-48c3-b9be-f217df0dba6f"}),
		prop("Y", odata.Value{Type: odata.Binary, Bytes: []byte{0, 1, 2, 255}}),
	}}
	rec := encodeEntity(e)
	if !checkRecord(rec) {
		t.Fatal("checkRecord refused a good record")
	}
	var page RowPage
	page.add([]byte("p"), []byte("r"), rec)
	r := page.Row(0)
	if r.Timestamp() != e.Timestamp {
		t.Fatal("timestamp")
	}
	var got []Property
	var p RawProp
	it := r.Props()
	for it.Next(&p) {
		// Only the field of the property's type is meaningful.
		v := odata.Value{Type: p.Type}
		switch p.Type {
		case odata.Int32, odata.Int64, odata.DateTime:
			v.Int = p.Int
		case odata.Double:
			v.Float = p.Float
		case odata.Boolean:
			v.Bool = p.Bool
		case odata.String, odata.Guid:
			v.Str = string(p.Data)
		case odata.Binary:
			v.Bytes = append([]byte{}, p.Data...)
		}
		got = append(got, Property{string(p.Name), v})
	}
	if !reflect.DeepEqual(got, e.Props) {
		t.Fatalf("got %+v\nwant %+v", got, e.Props)
	}
	if !r.Lookup("G", &p) || string(p.Data) != e.Props[7].Value.Str || r.Lookup("Nope", &p) {
		t.Fatal("Lookup")
	}
	if d, err := decodeEntity("p", "r", rec); err != nil || !reflect.DeepEqual(d, e) {
		t.Fatalf("decode: %+v, %v", d, err)
	}
	for _, pr := range e.Props {
		if v, ok := (&rawEntity{b: rec}).Lookup(pr.Name); !ok || !reflect.DeepEqual(v, pr.Value) {
			t.Fatalf("rawEntity.Lookup(%s) = %+v, %v", pr.Name, v, ok)
		}
	}
	// Every truncation is refused by checkRecord and decodeEntity alike,
	// and a filter's lookup on it finds at most the properties before the
	// cut, without panicking.
	for i := 0; i < len(rec); i++ {
		_, err := decodeEntity("p", "r", rec[:i])
		if checkRecord(rec[:i]) || err == nil {
			t.Fatalf("truncated at %d: checkRecord %v, decode %v", i, checkRecord(rec[:i]), err)
		}
		(&rawEntity{b: rec[:i]}).Lookup("Y")
	}
	bad := append([]byte{}, rec...)
	bad[0] = 9
	if checkRecord(bad) {
		t.Fatal("unknown version accepted")
	}
}

func TestEntityKeyOf(t *testing.T) {
	for _, c := range [][3]string{{"0123abcd", "p", "r"}, {"", "", ""}, {"u\x00id", "ä'", "😀 x"}} {
		p := prepareOp(&Op{Kind: OpDelete, PartitionKey: c[1], RowKey: c[2]})
		if got, want := entityKeyOf([]byte(c[0]), p.keyTail), entityKey(c[0], c[1], c[2]); !bytes.Equal(got, want) {
			t.Errorf("%q: %x, want %x", c, got, want)
		}
	}
}

func TestIsASCII(t *testing.T) {
	for _, s := range []string{"", "a", "abcdefgh", "abcdefghi", "abcdefg\x80", "\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f", "ünï", "abcdefghijklmnoü", "0123456789abcdef\xff"} {
		want := true
		for i := 0; i < len(s); i++ {
			if s[i] >= 0x80 {
				want = false
			}
		}
		if isASCII(s) != want {
			t.Errorf("isASCII(%q) = %v", s, !want)
		}
	}
}

// TestParseCanonicalETag: the fast ETag reader agrees with the general
// one on every ETag the service writes and on damaged ones.
func TestParseCanonicalETag(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	const lo, hi = 504911232000000000, 3155378975999999999 // 1601 .. 9999
	fast := 0
	for i := 0; i < 100000; i++ {
		ticks := lo + rng.Int64N(hi-lo)
		e := ETagFor(ticks)
		if got, ok := parseETag(e); !ok || got != ticks {
			t.Fatalf("%s: %d %v, want %d", e, got, ok, ticks)
		}
		if got, ok := parseCanonicalETag(e); ok {
			fast++
			if got != ticks {
				t.Fatalf("%s: fast %d, want %d", e, got, ticks)
			}
		}
		// Damage one byte: both readers must still agree.
		b := []byte(e)
		b[rng.IntN(len(b))] = "0123456789:%AZT-'\"W/x "[rng.IntN(22)]
		d := string(b)
		g1, ok1 := parseETag(d)
		g2, ok2 := parseETagGeneral(d)
		if ok1 != ok2 || g1 != g2 {
			t.Fatalf("%q: %d %v, general %d %v", d, g1, ok1, g2, ok2)
		}
	}
	if fast < 80000 {
		t.Fatalf("fast path taken %d times of 100000", fast)
	}
	for _, d := range []string{"W/\"datetime'1600-12-31T23%3A59%3A59.9999999Z'\"", "W/\"datetime'2020-02-29T00%3A00%3A00.0000000Z'\"",
		"W/\"datetime'2021-02-29T00%3A00%3A00.0000000Z'\"", "W/\"datetime'2021-13-01T00%3A00%3A00.0000000Z'\"",
		"W/\"datetime'2021-01-01T24%3A00%3A00.0000000Z'\"", "W/\"datetime'2021-01-01T23%3A59%3A60.0000000Z'\"",
		" W/\"datetime'2021-01-01T00%3A00%3A00.0000000Z'\"", "\"datetime'2021-01-01T00%3A00%3A00.0000000Z'\""} {
		g1, ok1 := parseETag(d)
		g2, ok2 := parseETagGeneral(d)
		if ok1 != ok2 || g1 != g2 {
			t.Errorf("%q: %d %v, general %d %v", d, g1, ok1, g2, ok2)
		}
	}
}

// TestQueryRowsStreamedPages: a page too large to hold is streamed with the
// same rows and the same continuation as when it is held, page after page,
// with $top, a filter and the scan cap cutting pages short.
func TestQueryRowsStreamedPages(t *testing.T) {
	forEachEngine(t, func(t *testing.T, s *Service) {
		s.maxScan = 7
		ctx := context.Background()
		mustTable(t, s, "pages")
		for i := range 40 {
			if _, err := s.Apply(ctx, acct, "pages", Op{Kind: OpInsert, PartitionKey: fmt.Sprint("p", i%3), RowKey: fmt.Sprintf("r%02d", i), Props: []Property{prop("N", i32(i%4))}}); err != nil {
				t.Fatal(err)
			}
		}
		f, err := odata.Parse("N ne 1")
		if err != nil {
			t.Fatal(err)
		}
		type result struct {
			keys     []keyPair
			more     bool
			npk, nrk string
			streamed bool
		}
		query := func(q Query, hold int) result {
			var rp RowPage
			var res result
			err := s.QueryRows(ctx, acct, "pages", q, &rp, hold, func(p *RowPage, rows func(func(Row) error) error) error {
				res.streamed = true
				return rows(func(r Row) error {
					res.keys = append(res.keys, keyPair{string(r.PartitionKey), string(r.RowKey)})
					return nil
				})
			})
			if err != nil {
				t.Fatal(err)
			}
			for i := range rp.Len() {
				res.keys = append(res.keys, keyPair{string(rp.Row(i).PartitionKey), string(rp.Row(i).RowKey)})
			}
			res.more, res.npk, res.nrk = rp.More, rp.NextPartitionKey, rp.NextRowKey
			return res
		}
		for _, q := range []Query{{Top: 3}, {Filter: f}, {Filter: f, Top: 2}} {
			held, streamed := q, q
			pages := 0
			for {
				a, b := query(held, 0), query(streamed, 1)
				if a.streamed || len(a.keys) > 0 && !b.streamed {
					t.Fatalf("page %d: held streamed %v, small bound streamed %v", pages, a.streamed, b.streamed)
				}
				b.streamed = a.streamed
				if !reflect.DeepEqual(a, b) {
					t.Fatalf("page %d:\n held %+v\n streamed %+v", pages, a, b)
				}
				pages++
				if !a.more {
					break
				}
				held.Continue, held.NextPartitionKey, held.NextRowKey = true, a.npk, a.nrk
				streamed.Continue, streamed.NextPartitionKey, streamed.NextRowKey = true, b.npk, b.nrk
			}
			if pages < 3 {
				t.Fatalf("%+v: %d pages, want several", q, pages)
			}
		}
	})
}

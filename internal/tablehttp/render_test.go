package tablehttp

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/engine/memstore"
	"github.com/lazuli-storage/lazuli/internal/table"
	"github.com/lazuli-storage/lazuli/internal/table/odata"
)

// TestAppendRowMatchesAppendEntity: a query page rendered from stored
// records is byte for byte what rendering the decoded entities gives, at
// every metadata level, with and without $select.
func TestAppendRowMatchesAppendEntity(t *testing.T) {
	eng := memstore.New()
	defer eng.Close()
	svc := table.New(eng, table.Options{})
	ctx := context.Background()
	if _, err := svc.CreateTable(ctx, "acct", "render"); err != nil {
		t.Fatal(err)
	}
	keys := []string{"p", "", "a b", "q'uote", "ünï", "<&>", "x%y", "tab\u00a0", "emoji 🎉", "\u2028", "dots.and~"}
	values := []odata.Value{
		{Type: odata.String, Str: "plain"},
		{Type: odata.String, Str: ""},
		{Type: odata.String, Str: "esc \"q\" \\ <&> ü \u2028"},
		{Type: odata.Int32, Int: -2147483648},
		{Type: odata.Int64, Int: math.MaxInt64},
		{Type: odata.Double, Float: 0.5},
		{Type: odata.Double, Float: 3},
		{Type: odata.Double, Float: 1e300},
		{Type: odata.Double, Float: math.NaN()},
		{Type: odata.Double, Float: math.Inf(1)},
		{Type: odata.Double, Float: math.Inf(-1)},
		{Type: odata.Boolean, Bool: true},
		{Type: odata.Boolean},
		{Type: odata.DateTime, Int: odata.TimeToTicks(time.Date(2021, 10, 15, 16, 13, 6, 16792100, time.UTC))},
		{Type: odata.DateTime, Int: odata.TimeToTicks(time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC))},
		{Type: odata.DateTime, Int: odata.TimeToTicks(time.Date(9999, 12, 31, 23, 59, 59, 999999900, time.UTC))},
		{Type: odata.Guid, Str: "4185404a-5818-48c3-b9be-f217df0dba6f"},
		{Type: odata.Binary, Bytes: []byte{}},
		{Type: odata.Binary, Bytes: []byte{0, 1, 2, 0xfb, 0xff}},
	}
	names := []string{"A", "Name", "ünïcode", "_x", "B2"}
	rng := rand.New(rand.NewPCG(1, 2))
	for i, pk := range keys {
		for j, rk := range keys {
			var props []table.Property
			used := map[string]bool{}
			for k := rng.IntN(len(names) + 1); k > 0; k-- {
				n := names[rng.IntN(len(names))]
				if used[n] {
					continue
				}
				used[n] = true
				props = append(props, table.Property{Name: n, Value: values[(i*7+j*3+k)%len(values)]})
			}
			if _, err := svc.Apply(ctx, "acct", "render", table.Op{Kind: table.OpInsert, PartitionKey: pk, RowKey: rk, Props: props}); err != nil {
				t.Fatalf("%q %q: %v", pk, rk, err)
			}
		}
	}
	page, err := svc.QueryEntities(ctx, "acct", "render", table.Query{})
	if err != nil {
		t.Fatal(err)
	}
	var rows table.RowPage
	if err := svc.QueryRows(ctx, "acct", "render", table.Query{}, &rows, 0, nil); err != nil {
		t.Fatal(err)
	}
	if rows.Len() != len(page.Entities) || rows.Len() != len(keys)*len(keys) {
		t.Fatalf("%d rows, %d entities", rows.Len(), len(page.Entities))
	}
	selects := [][]string{nil, {"Name"}, {"Timestamp", "RowKey", "PartitionKey", "Missing", "ünïcode", "A", "B2", "_x"}}
	for _, level := range []metadata{noMetadata, minimalMetadata, fullMetadata} {
		for _, sel := range selects {
			for _, baseURL := range []string{"http://127.0.0.1:10002/acct", "http://host/ä\"b"} {
				ew := &entityWriter{level: level, baseURL: baseURL, account: "acct", table: "render", selected: sel}
				rw := &entityWriter{level: level, baseURL: baseURL, account: "acct", table: "render", selected: sel}
				for i, e := range page.Entities {
					want := string(ew.appendEntity([]byte("x"), e, false))
					got := string(rw.appendRow([]byte("x"), rows.Row(i)))
					if got != want {
						t.Fatalf("level %d select %v:\n got %s\nwant %s", level, sel, got, want)
					}
				}
			}
		}
	}
}

func TestAppendDateTime(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 10000; i++ {
		ticks := 504911232000000000 + rng.Int64N(3155378975999999999-504911232000000000)
		switch i % 4 {
		case 1:
			ticks -= ticks % 10_000_000
		case 2:
			ticks -= ticks % 1000
		}
		if got, want := string(odata.AppendDateTime([]byte("x"), ticks)), "x"+odata.FormatDateTime(ticks); got != want {
			t.Fatalf("%d: %s, want %s", ticks, got, want)
		}
	}
}

func TestAppendQuotedKey(t *testing.T) {
	for _, k := range []string{"", "abc", "a'b''", "a b/c?d#e%f", "ünï", "\x00\x1f\x7f\xff", "-._~!$&'()*+,;=:@"} {
		if got, want := string(appendQuotedKey(nil, k)), quoteKey(k); got != want {
			t.Errorf("%q: %q, want %q", k, got, want)
		}
		if got, want := string(appendQuotedKey(nil, []byte(k))), quoteKey(k); got != want {
			t.Errorf("%q bytes: %q, want %q", k, got, want)
		}
		if got, want := string(appendEditLink(nil, "t", k, k+"x")), editLink("t", k, k+"x"); got != want {
			t.Errorf("%q: edit link %q, want %q", k, got, want)
		}
	}
}

// TestJSONPlain: the word-at-a-time test agrees with a byte by byte test on
// every byte value at every position, and on random text, in both modes.
func TestJSONPlain(t *testing.T) {
	for _, ascii := range []bool{false, true} {
		testJSONPlain(t, ascii)
	}
}

func testJSONPlain(t *testing.T, ascii bool) {
	slow := func(s []byte) bool {
		for _, c := range s {
			if c < 0x20 || c == '"' || c == '\\' || ascii && c >= 0x7F {
				return false
			}
		}
		return true
	}
	for n := 0; n <= 24; n++ {
		for pos := 0; pos < n; pos++ {
			for c := 0; c < 256; c++ {
				b := make([]byte, n)
				for i := range b {
					b[i] = 'a' + byte(i%26)
				}
				b[pos] = byte(c)
				if got, want := jsonPlain(b, ascii), slow(b); got != want {
					t.Fatalf("len %d byte %#x at %d: %v, want %v", n, c, pos, got, want)
				}
				if got := jsonPlain(string(b), ascii); got != slow(b) {
					t.Fatalf("string len %d byte %#x at %d: %v", n, c, pos, got)
				}
			}
		}
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 200000; i++ {
		b := make([]byte, rng.IntN(40))
		for j := range b {
			if rng.IntN(8) == 0 {
				b[j] = byte(rng.IntN(256))
			} else {
				b[j] = byte(0x20 + rng.IntN(0x5F))
			}
		}
		if got, want := jsonPlain(b, ascii), slow(b); got != want {
			t.Fatalf("%q: %v, want %v", b, got, want)
		}
	}
}

// TestReadQuoted: the substring fast path reads literals as the general
// loop does.
func TestReadQuoted(t *testing.T) {
	slow := func(s string) (string, string, bool) {
		if s == "" || s[0] != '\'' {
			return "", "", false
		}
		var b []byte
		for i := 1; i < len(s); i++ {
			if s[i] == '\'' {
				if i+1 < len(s) && s[i+1] == '\'' {
					b = append(b, '\'')
					i++
					continue
				}
				return string(b), s[i+1:], true
			}
			b = append(b, s[i])
		}
		return "", "", false
	}
	for _, s := range []string{"", "'", "''", "'''", "''''", "'a'", "'a',RowKey='b'", "'a''b'", "'a''", "'a'''", "'''a'", "x'a'", "'ab", "'a' ", "'a''b'',c'd"} {
		v, rest, err := readQuoted(s)
		wv, wrest, ok := slow(s)
		if (err == nil) != ok || v != wv || rest != wrest {
			t.Errorf("%q: %q %q %v, want %q %q %v", s, v, rest, err, wv, wrest, ok)
		}
	}
}

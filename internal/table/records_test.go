package table

import (
	"encoding/hex"
	"math"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/table/odata"
)

// goldenEntity sets a property of every type.
func goldenEntity() *Entity {
	return &Entity{PartitionKey: "p", RowKey: "r", Timestamp: 638000000000000001, Props: []Property{
		{"S", odata.Value{Type: odata.String, Str: "x\x00yé"}},
		{"I", i32(-7)},
		{"L", odata.Value{Type: odata.Int64, Int: -1 << 62}},
		{"D", odata.Value{Type: odata.Double, Float: math.Inf(-1)}},
		{"B", odata.Value{Type: odata.Boolean, Bool: true}},
		{"F", odata.Value{Type: odata.Boolean}},
		{"T", odata.Value{Type: odata.DateTime, Int: 637000000000000000}},
		{"G", odata.Value{Type: odata.Guid, Str: "4185404a-5818-48c3-b9be-f217df0dba6f"}},
		{"X", odata.Value{Type: odata.Binary, Bytes: []byte{1, 2}}},
		{"E", odata.Value{Type: odata.Binary}},
	}}
}

// TestRecordBytesUnchanged pins the bytes of entity and table records, so
// that a change of the record primitives cannot change what is on disk
// unnoticed.
func TestRecordBytesUnchanged(t *testing.T) {
	for _, g := range []struct {
		name string
		v    []byte
		hex  string
	}{
		{"entity", encodeEntity(goldenEntity()), "0108daa19ea6b300010a01530105780079c3a9014902fffffff9014c03c000000000000000014404fff0000000000000014205010146050001540608d7142001ec80000147072434313835343034612d353831382d343863332d623962652d66323137646630646261366601580802010201450800"},
		{"empty entity", encodeEntity(&Entity{PartitionKey: "p", RowKey: "r", Timestamp: -1}), "01ffffffffffffffff00"},
		{"table", func() []byte {
			v, err := encodeTable(&TableInfo{Name: "tbl", UID: "u1d", Created: time.Date(2026, 11, 28, 1, 2, 3, 4, time.UTC)})
			if err != nil {
				t.Fatal(err)
			}
			return v
		}(), "02037531647b226e616d65223a2274626c222c22756964223a22753164222c2263726561746564223a22323032362d31312d32385430313a30323a30332e3030303030303030345a227d"},
	} {
		if h := hex.EncodeToString(g.v); h != g.hex {
			t.Errorf("%s: record\n%s\nwant\n%s", g.name, h, g.hex)
		}
		if !checkRecord(g.v) && g.name != "table" {
			t.Errorf("%s: checkRecord refuses it", g.name)
		}
	}
}

func BenchmarkEntityRecord(b *testing.B) {
	v := encodeEntity(goldenEntity())
	b.Run("encode", func(b *testing.B) {
		e := goldenEntity()
		b.ReportAllocs()
		for b.Loop() {
			encodeEntity(e)
		}
	})
	b.Run("decode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := decodeEntity("p", "r", v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("check", func(b *testing.B) {
		for b.Loop() {
			if !checkRecord(v) {
				b.Fatal("refused")
			}
		}
	})
	b.Run("lookup", func(b *testing.B) {
		raw := &rawEntity{pk: "p", rk: []byte("r"), b: v}
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := raw.Lookup("E"); !ok {
				b.Fatal("missing")
			}
		}
	})
	b.Run("props", func(b *testing.B) {
		row := Row{rec: v}
		var p RawProp
		for b.Loop() {
			it := row.Props()
			for it.Next(&p) {
			}
		}
	})
	b.Run("table uid", func(b *testing.B) {
		tv, _ := encodeTable(&TableInfo{Name: "tbl", UID: "u1d"})
		for b.Loop() {
			if _, err := tableUIDFrom(tv); err != nil {
				b.Fatal(err)
			}
		}
	})
}

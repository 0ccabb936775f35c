package content

import (
	"bytes"
	"encoding/binary"
	"reflect"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/storage"
)

// The operations of readOps, one per byte of a fuzzed program.
const (
	opByte = iota
	opBool
	opUvarint
	opVarint
	opStr
	opRaw
	opFixed
	opTime
	opUnixNano
	opKVs
	opSeg
	opRest
	numOps
)

// readOps reads rec with the operations of ops in turn, until one fails;
// it returns the values read and the operations that read them. Every
// read leaves the reader with no more bytes than before, and a failure
// leaves it with none and the error set for good.
func readOps(t *testing.T, ops, rec []byte) ([]any, []byte) {
	r := NewReader(rec)
	var vals []any
	for i, op := range ops {
		before := len(r.b)
		var v any
		switch op % numOps {
		case opByte:
			v = r.Byte()
		case opBool:
			v = r.Bool()
		case opUvarint:
			v = r.Uvarint()
		case opVarint:
			v = r.Varint()
		case opStr:
			v = r.Str()
		case opRaw:
			v = bytes.Clone(r.Raw())
		case opFixed:
			v = bytes.Clone(r.Fixed(int(op / numOps)))
		case opTime:
			tm := r.Time()
			if r.Err() == nil && tm.Nanosecond() >= 1e9 {
				t.Fatalf("time %v has %d ns", tm, tm.Nanosecond())
			}
			v = tm
		case opUnixNano:
			v = r.UnixNano()
		case opKVs:
			v = r.KVs()
		case opSeg:
			v = r.Seg()
		case opRest:
			v = bytes.Clone(r.Rest())
		}
		if len(r.b) > before {
			t.Fatalf("op %d: %d bytes left, %d before", i, len(r.b), before)
		}
		if r.Err() != nil {
			if len(r.b) != 0 || r.End() == nil {
				t.Fatalf("op %d failed, yet %d bytes are left", i, len(r.b))
			}
			return vals, ops[:i]
		}
		vals = append(vals, v)
	}
	if left, err := len(r.b), r.End(); (err == nil) != (left == 0) {
		t.Fatalf("End = %v with %d bytes left", err, left)
	}
	return vals, ops
}

// appendOps writes vals, read by ops, back with the writers.
func appendOps(ops []byte, vals []any) []byte {
	var dst []byte
	for i, op := range ops {
		switch v := vals[i].(type) {
		case byte:
			dst = append(dst, v)
		case bool:
			dst = AppendBool(dst, v)
		case uint64:
			dst = binary.AppendUvarint(dst, v)
		case int64:
			dst = binary.AppendVarint(dst, v)
		case string:
			dst = AppendBytes(dst, v)
		case []byte:
			if op%numOps == opRaw {
				dst = AppendBytes(dst, v)
			} else {
				dst = append(dst, v...)
			}
		case time.Time:
			if op%numOps == opTime {
				dst = AppendTime(dst, v)
			} else {
				dst = AppendUnixNano(dst, v)
			}
		case []KV:
			dst = AppendKVs(dst, v)
		case Segment:
			dst = AppendSeg(dst, &v)
		}
	}
	return dst
}

// sameVals compares what two reads returned; times by instant and offset,
// bytes whether nil or empty, the strings of KVs and segments as
// AppendStr writes them.
func sameVals(a, b []any) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		switch x := a[i].(type) {
		case time.Time:
			y := b[i].(time.Time)
			_, xo := x.Zone()
			_, yo := y.Zone()
			if !x.Equal(y) || xo != yo || x.IsZero() != y.IsZero() {
				return false
			}
		case []KV:
			for j := range x {
				x[j] = KV{validUTF8(x[j][0]), validUTF8(x[j][1])}
			}
			if !reflect.DeepEqual(x, b[i]) {
				return false
			}
		case []byte:
			if !bytes.Equal(x, b[i].([]byte)) {
				return false
			}
		case Segment:
			x.Ref = storage.ChunkRef(validUTF8(string(x.Ref)))
			if !reflect.DeepEqual(x, b[i]) {
				return false
			}
		default:
			if !reflect.DeepEqual(a[i], b[i]) {
				return false
			}
		}
	}
	return true
}

// FuzzReader reads arbitrary records with arbitrary sequences of the
// primitives: a bad record is an error, never a panic, and what a read
// returned, written back with the writers, reads back the same.
func FuzzReader(f *testing.F) {
	t0 := time.Date(2026, 11, 28, 1, 2, 3, 4, time.FixedZone("", 3600))
	rec := AppendTime(AppendUnixNano(AppendKVs(AppendStr(binary.AppendVarint(binary.AppendUvarint([]byte{7, 1}, 300), -5), "s\xff"), []KV{{"k", "v"}}), t0), t0)
	rec = AppendSeg(binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint32(rec, 9), 10), &Segment{Ref: "r", Off: 1, Len: 2, Data: []byte("ab")})
	f.Add([]byte{opByte, opBool, opUvarint, opVarint, opStr, opKVs, opUnixNano, opTime, opFixed + 12*numOps, opSeg, opRest}, rec)
	f.Add([]byte{opRaw, opFixed + 3*numOps, opTime, opRest}, []byte{1, 'a', 'b', 'c', 'd', 1, 0x80, 0x80})
	f.Add([]byte{opKVs, opSeg}, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Add([]byte{opTime}, []byte{1, 0, 0xff, 0xff, 0xff, 0xff, 0x0f, 0})
	f.Fuzz(func(t *testing.T, ops, rec []byte) {
		vals, done := readOps(t, ops, rec)
		again := appendOps(done, vals)
		back, _ := readOps(t, done, again)
		if !sameVals(vals, back) {
			t.Fatalf("read %v\nwritten back %x\nreads %v", vals, again, back)
		}
	})
}

// TestReaderTruncated: every prefix of a record fails to decode whole.
func TestReaderTruncated(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 1, 2, 3, 4, time.UTC)
	rec := AppendSeg(AppendTime(AppendUnixNano(AppendKVs(AppendBool(binary.AppendUvarint(nil, 1<<40), true), []KV{{"k", "v"}}), t0), t0),
		&Segment{Ref: "r", Len: 2, Data: []byte("ab")})
	read := func(v []byte) error {
		r := NewReader(v)
		r.Uvarint()
		r.Bool()
		r.KVs()
		r.UnixNano()
		r.Time()
		r.Seg()
		return r.End()
	}
	if err := read(rec); err != nil {
		t.Fatal(err)
	}
	for i := range rec {
		if err := read(rec[:i]); err == nil {
			t.Fatalf("prefix of %d bytes decoded", i)
		}
	}
}

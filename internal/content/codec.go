package content

import (
	"encoding/binary"
	"errors"
	"math"
	"time"
	"unicode/utf8"

	"github.com/lazuli-storage/lazuli/storage"
)

// The binary record primitives, the one encoding of every binary record
// (Blob and page records, File nodes, Queue messages, Table entities and
// tables): strings and byte slices as uvarint length and bytes, integers
// as varints (encoding/binary's Append functions write them; fixed-width
// ones big-endian, written by binary.BigEndian and read with Fixed),
// booleans as one byte 0 or 1, times in one of two layouts
// (AppendTime, AppendUnixNano), slices as uvarint count and elements,
// inline segment bytes in place. Writers append to a byte slice; a Reader
// reads fields in order and fails, never panics, on a truncated or
// damaged record.

// ErrCorrupt is the error of a record that does not decode.
var ErrCorrupt = errors.New("content: corrupt record")

// AppendSeg writes a segment; inline bytes (Data != nil) follow a flag.
func AppendSeg(dst []byte, sg *Segment) []byte {
	dst = AppendStr(dst, string(sg.Ref))
	dst = binary.AppendVarint(dst, sg.Off)
	dst = binary.AppendVarint(dst, sg.Len)
	if sg.Data == nil {
		return append(dst, 0)
	}
	dst = append(dst, 1)
	return AppendBytes(dst, sg.Data)
}

// AppendStr writes s. Invalid UTF-8 is replaced byte by byte with U+FFFD,
// as encoding/json does in the JSON records (containers, staging), so every
// record reads back the same strings.
func AppendStr(dst []byte, s string) []byte {
	if !utf8.ValidString(s) {
		s = validUTF8(s)
	}
	return AppendBytes(dst, s)
}

// validUTF8 replaces each byte of s that is not part of valid UTF-8 with
// U+FFFD, as encoding/json does.
func validUTF8(s string) string {
	out := make([]byte, 0, len(s)+8)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			out = append(out, "\uFFFD"...)
		} else {
			out = append(out, s[i:i+n]...)
		}
		i += n
	}
	return string(out)
}

// AppendBytes writes b, a byte slice or a string, as it is (AppendStr
// is the writer of strings read back as JSON would read them).
func AppendBytes[T ~string | ~[]byte](dst []byte, b T) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(b)))
	return append(dst, b...)
}

// AppendBool writes v as one byte, 1 or 0.
func AppendBool(dst []byte, v bool) []byte {
	if v {
		return append(dst, 1)
	}
	return append(dst, 0)
}

// AppendUnixNano writes t as a varint of Unix nanoseconds, the zero time
// as math.MinInt64: the compact layout for times whose zone is not kept.
func AppendUnixNano(dst []byte, t time.Time) []byte {
	if t.IsZero() {
		return binary.AppendVarint(dst, math.MinInt64)
	}
	return binary.AppendVarint(dst, t.UnixNano())
}

func AppendKVs(dst []byte, kvs []KV) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(kvs)))
	for _, kv := range kvs {
		dst = AppendStr(dst, kv[0])
		dst = AppendStr(dst, kv[1])
	}
	return dst
}

// AppendTime writes the zero time as a single 0; any other time as 1,
// Unix seconds, nanoseconds and the zone offset in seconds (no zone name,
// no monotonic reading, as an RFC 3339 text in a JSON record).
func AppendTime(dst []byte, t time.Time) []byte {
	if t.IsZero() {
		return append(dst, 0)
	}
	_, off := t.Zone()
	dst = append(dst, 1)
	dst = binary.AppendVarint(dst, t.Unix())
	dst = binary.AppendUvarint(dst, uint64(t.Nanosecond()))
	return binary.AppendVarint(dst, int64(off))
}

// Reader decodes a binary record; the first error (ErrCorrupt) sticks.
type Reader struct {
	b   []byte
	err error
}

// NewReader reads the record v.
func NewReader(v []byte) *Reader { return &Reader{b: v} }

// Err returns the error of the reads so far.
func (r *Reader) Err() error { return r.err }

// End returns the error of the reads so far, ErrCorrupt as well when
// bytes are left over.
func (r *Reader) End() error {
	if r.err == nil && len(r.b) != 0 {
		r.Fail()
	}
	return r.err
}

// Fail marks the record corrupt.
func (r *Reader) Fail() {
	if r.err == nil {
		r.err = ErrCorrupt
	}
	r.b = nil
}

func (r *Reader) Byte() byte {
	if len(r.b) == 0 {
		r.Fail()
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *Reader) Uvarint() uint64 {
	v, n := Uvarint(r.b)
	if n <= 0 {
		r.Fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

// Uvarint is binary.Uvarint with a shortcut for one-byte values (most
// lengths and counts), for Reader and for the walks of records that go
// without one (Table's properties).
func Uvarint(b []byte) (uint64, int) {
	if len(b) > 0 && b[0] < 0x80 {
		return uint64(b[0]), 1
	}
	return binary.Uvarint(b)
}

func (r *Reader) Varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.Fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

// Bool reads a byte written by AppendBool; any other value is corrupt.
func (r *Reader) Bool() bool {
	switch r.Byte() {
	case 0:
		return false
	case 1:
		return true
	}
	r.Fail()
	return false
}

// Fixed returns the next n bytes (no length before them), aliasing the
// record; its capacity is cut so that an append cannot write into it.
func (r *Reader) Fixed(n int) []byte {
	if n < 0 || n > len(r.b) {
		r.Fail()
		return nil
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}

// Rest returns the bytes left, aliasing the record, and reads them.
func (r *Reader) Rest() []byte {
	v := r.b
	r.b = r.b[len(r.b):]
	return v
}

// Raw returns the next length-prefixed bytes, aliasing the record. Its
// capacity runs on to the record's end, so a caller can find where in
// the record it lies (Table entities carve their strings so).
func (r *Reader) Raw() []byte {
	n := r.Uvarint()
	if n > uint64(len(r.b)) {
		r.Fail()
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *Reader) Str() string { return string(r.Raw()) }

// StrOf is Str returning one of known (no allocation) when it matches.
func (r *Reader) StrOf(known ...string) string {
	v := r.Raw()
	for _, k := range known {
		if string(v) == k {
			return k
		}
	}
	return string(v)
}

// Count reads a slice length, bounded by the bytes left (every element
// takes at least one byte).
func (r *Reader) Count() int {
	n := r.Uvarint()
	if n > uint64(len(r.b)) {
		r.Fail()
		return 0
	}
	return int(n)
}

func (r *Reader) KVs() []KV {
	n := r.Count()
	if n == 0 {
		return nil
	}
	out := make([]KV, n)
	for i := range out {
		out[i] = KV{r.Str(), r.Str()}
	}
	return out
}

// Time reverses AppendTime. As for an RFC 3339 text, a zero
// offset reads back as UTC, the local zone's offset as Local, and any
// other offset as a fixed zone.
func (r *Reader) Time() time.Time {
	switch r.Byte() {
	case 0:
		return time.Time{}
	case 1:
	default:
		r.Fail()
		return time.Time{}
	}
	sec := r.Varint()
	nsec := r.Uvarint()
	off := r.Varint()
	if nsec >= 1e9 {
		r.Fail()
		return time.Time{}
	}
	t := time.Unix(sec, int64(nsec))
	if off == 0 {
		return t.UTC()
	}
	if _, lo := t.Zone(); int64(lo) == off {
		return t // time.Unix returns Local
	}
	return t.In(time.FixedZone("", int(off)))
}

// UnixNano reverses AppendUnixNano; times read back in UTC.
func (r *Reader) UnixNano() time.Time {
	v := r.Varint()
	if v == math.MinInt64 {
		return time.Time{}
	}
	return time.Unix(0, v).UTC()
}

func (r *Reader) Seg() Segment {
	sg := Segment{Ref: storage.ChunkRef(r.Str()), Off: r.Varint(), Len: r.Varint()}
	switch r.Byte() {
	case 0:
	case 1:
		sg.Data = r.Shared()
	default:
		r.Fail()
	}
	return sg
}

// Shared is bytes without the copy: inline content aliases the record,
// which the engine keeps valid and unchanged after the transaction and
// nothing here modifies. The capacity is cut so that an append can never
// write into the record.
func (r *Reader) Shared() []byte {
	v := r.Raw()
	if len(v) == 0 {
		return nil
	}
	return v[:len(v):len(v)]
}

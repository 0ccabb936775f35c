package content

import (
	"encoding/binary"
	"errors"
	"time"
	"unicode/utf8"

	"github.com/lazuli-storage/lazuli/storage"
)

// The binary record primitives: strings and byte slices as uvarint length
// and bytes, integers as varints, times as described at AppendTime, slices
// as uvarint count and elements, inline segment bytes in place. Blob
// records and page records are written with them.

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
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
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

func AppendBytes(dst []byte, b []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(b)))
	return append(dst, b...)
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
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.Fail()
		return 0
	}
	r.b = r.b[n:]
	return v
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

// Raw returns the next length-prefixed bytes, aliasing the record.
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

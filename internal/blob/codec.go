package blob

import (
	"encoding/binary"
	"errors"
	"time"
	"unicode/utf8"

	"github.com/lazuli-storage/lazuli/internal/lease"
	"github.com/lazuli-storage/lazuli/storage"
)

// blobBinaryTag starts a blob record in the binary layout written by
// encodeBlob: every field of Blob in declaration order, strings and byte
// slices as uvarint length and bytes, integers as varints, times as
// described at appendTime, slices as uvarint count and elements, inline
// segment bytes in place. Blob records are binary, not JSON like the
// other records, because decoding JSON took a third of the writer
// goroutine's time in Put Blob and Lease Blob.
const blobBinaryTag = 0x02

var errCorruptBlob = errors.New("blob: corrupt blob record")

// encodeBlobBinary appends the binary record of b to dst.
func encodeBlobBinary(dst []byte, b *Blob) []byte {
	dst = append(dst, blobBinaryTag)
	dst = appendStr(dst, b.Name)
	dst = appendStr(dst, b.Snapshot)
	dst = appendStr(dst, b.Type)
	dst = appendTime(dst, b.Created)
	dst = appendTime(dst, b.Modified)
	dst = binary.AppendUvarint(dst, b.ETag)
	dst = binary.AppendVarint(dst, b.Size)
	dst = appendStr(dst, b.Props.ContentType)
	dst = appendStr(dst, b.Props.ContentEncoding)
	dst = appendStr(dst, b.Props.ContentLanguage)
	dst = appendBytes(dst, b.Props.ContentMD5)
	dst = appendStr(dst, b.Props.ContentDisposition)
	dst = appendStr(dst, b.Props.CacheControl)
	dst = appendKVs(dst, b.Meta)
	dst = binary.AppendVarint(dst, int64(b.Lease.Phase))
	dst = appendStr(dst, b.Lease.ID)
	dst = binary.AppendVarint(dst, int64(b.Lease.Duration))
	dst = appendTime(dst, b.Lease.Expiry)
	dst = appendTime(dst, b.Lease.BreakTime)
	dst = binary.AppendUvarint(dst, uint64(len(b.Blocks)))
	for i := range b.Blocks {
		bl := &b.Blocks[i]
		dst = appendStr(dst, bl.ID)
		dst = binary.AppendVarint(dst, bl.Size)
		dst = binary.AppendUvarint(dst, uint64(len(bl.Segs)))
		for j := range bl.Segs {
			dst = appendSeg(dst, &bl.Segs[j])
		}
	}
	dst = binary.AppendUvarint(dst, uint64(len(b.Pages)))
	for i := range b.Pages {
		dst = binary.AppendVarint(dst, b.Pages[i].Start)
		dst = appendSeg(dst, &b.Pages[i].Seg)
	}
	dst = binary.AppendVarint(dst, b.Seq)
	dst = appendKVs(dst, b.Tags)
	if b.Copy == nil {
		dst = append(dst, 0)
	} else {
		dst = append(dst, 1)
		dst = appendStr(dst, b.Copy.ID)
		dst = appendStr(dst, b.Copy.Source)
		dst = appendStr(dst, b.Copy.Status)
		dst = appendStr(dst, b.Copy.Progress)
		dst = appendTime(dst, b.Copy.Completion)
		dst = appendStr(dst, b.Copy.Description)
	}
	dst = appendStr(dst, b.AccessTier)
	dst = binary.AppendVarint(dst, int64(b.BlockIDLen))
	dst = binary.AppendVarint(dst, int64(b.AppendCount))
	dst = appendTime(dst, b.TierChanged)
	var flags byte
	if b.ExtBlocks {
		flags |= flagExtBlocks
	}
	if b.Sealed {
		flags |= flagSealed
	}
	// Optional fields follow the flags byte, announced by their flag, so
	// records written before they existed still decode.
	if b.KeySHA256 != "" {
		flags |= flagCPK
	}
	if b.EncryptionScope != "" {
		flags |= flagScope
	}
	if b.RehydrateTo != "" {
		flags |= flagRehydrate
	}
	if b.CopySnapshot != "" {
		flags |= flagIncremental
	}
	dst = append(dst, flags)
	if b.KeySHA256 != "" {
		dst = appendStr(dst, b.KeySHA256)
	}
	if b.EncryptionScope != "" {
		dst = appendStr(dst, b.EncryptionScope)
	}
	if b.RehydrateTo != "" {
		dst = appendTime(appendStr(appendStr(dst, b.RehydrateTo), b.RehydratePriority), b.RehydrateDone)
	}
	if b.CopySnapshot != "" {
		dst = appendStr(appendStr(dst, b.CopySnapshot), b.DestSnapshot)
	}
	return dst
}

// Bits of the flags byte that ends a binary blob record.
const (
	flagExtBlocks = 1 << iota
	flagSealed
	// flagCPK: the customer-provided key's SHA-256 follows the flags.
	flagCPK
	// flagScope: the encryption scope follows (after the key's hash).
	flagScope
	// flagRehydrate: a pending rehydration (tier, priority, completion).
	flagRehydrate
	// flagIncremental: an incremental copy destination's snapshots follow.
	flagIncremental
)

// appendSeg writes a segment; inline bytes (Data != nil) follow a flag.
func appendSeg(dst []byte, sg *Segment) []byte {
	dst = appendStr(dst, string(sg.Ref))
	dst = binary.AppendVarint(dst, sg.Off)
	dst = binary.AppendVarint(dst, sg.Len)
	if sg.Data == nil {
		return append(dst, 0)
	}
	dst = append(dst, 1)
	return appendBytes(dst, sg.Data)
}

// appendStr writes s. Invalid UTF-8 is replaced byte by byte with U+FFFD,
// as encoding/json does in the JSON records (containers, staging), so every
// record reads back the same strings.
func appendStr(dst []byte, s string) []byte {
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

func appendBytes(dst []byte, b []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(b)))
	return append(dst, b...)
}

func appendKVs(dst []byte, kvs []KV) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(kvs)))
	for _, kv := range kvs {
		dst = appendStr(dst, kv[0])
		dst = appendStr(dst, kv[1])
	}
	return dst
}

// appendTime writes the zero time as a single 0; any other time as 1,
// Unix seconds, nanoseconds and the zone offset in seconds (no zone name,
// no monotonic reading, as an RFC 3339 text in a JSON record).
func appendTime(dst []byte, t time.Time) []byte {
	if t.IsZero() {
		return append(dst, 0)
	}
	_, off := t.Zone()
	dst = append(dst, 1)
	dst = binary.AppendVarint(dst, t.Unix())
	dst = binary.AppendUvarint(dst, uint64(t.Nanosecond()))
	return binary.AppendVarint(dst, int64(off))
}

// reader decodes a binary record; the first error sticks.
type reader struct {
	b   []byte
	err error
}

func (r *reader) fail() {
	if r.err == nil {
		r.err = errCorruptBlob
	}
	r.b = nil
}

func (r *reader) byte() byte {
	if len(r.b) == 0 {
		r.fail()
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *reader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

// raw returns the next length-prefixed bytes, aliasing the record.
func (r *reader) raw() []byte {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.fail()
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *reader) str() string { return string(r.raw()) }

// strOf is str returning one of known (no allocation) when it matches.
func (r *reader) strOf(known ...string) string {
	v := r.raw()
	for _, k := range known {
		if string(v) == k {
			return k
		}
	}
	return string(v)
}

// count reads a slice length, bounded by the bytes left (every element
// takes at least one byte).
func (r *reader) count() int {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.fail()
		return 0
	}
	return int(n)
}

func (r *reader) kvs() []KV {
	n := r.count()
	if n == 0 {
		return nil
	}
	out := make([]KV, n)
	for i := range out {
		out[i] = KV{r.str(), r.str()}
	}
	return out
}

// time reverses appendTime. As for an RFC 3339 text, a zero
// offset reads back as UTC, the local zone's offset as Local, and any
// other offset as a fixed zone.
func (r *reader) time() time.Time {
	switch r.byte() {
	case 0:
		return time.Time{}
	case 1:
	default:
		r.fail()
		return time.Time{}
	}
	sec := r.varint()
	nsec := r.uvarint()
	off := r.varint()
	if nsec >= 1e9 {
		r.fail()
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

func (r *reader) seg() Segment {
	sg := Segment{Ref: storage.ChunkRef(r.str()), Off: r.varint(), Len: r.varint()}
	switch r.byte() {
	case 0:
	case 1:
		sg.Data = r.shared()
	default:
		r.fail()
	}
	return sg
}

// shared is bytes without the copy: inline content aliases the record,
// which the engine keeps valid and unchanged after the transaction and
// nothing here modifies. The capacity is cut so that an append can never
// write into the record.
func (r *reader) shared() []byte {
	v := r.raw()
	if len(v) == 0 {
		return nil
	}
	return v[:len(v):len(v)]
}

// decodeBlobBinaryAt decodes a record written by encodeBlobBinary (tag
// included) read under the key of name and snap, whose strings it shares
// instead of copying.
func decodeBlobBinaryAt(v []byte, name, snap string) (*Blob, error) {
	r := &reader{b: v[1:]}
	b := &Blob{}
	b.Name = r.strOf(name)
	b.Snapshot = r.strOf(snap)
	b.Type = r.strOf(BlockBlob, PageBlob, AppendBlob)
	b.Created = r.time()
	b.Modified = r.time()
	b.ETag = r.uvarint()
	b.Size = r.varint()
	b.Props.ContentType = r.strOf("application/octet-stream")
	b.Props.ContentEncoding = r.str()
	b.Props.ContentLanguage = r.str()
	b.Props.ContentMD5 = r.shared()
	b.Props.ContentDisposition = r.str()
	b.Props.CacheControl = r.str()
	b.Meta = r.kvs()
	b.Lease.Phase = lease.Phase(r.varint())
	b.Lease.ID = r.str()
	b.Lease.Duration = int(r.varint())
	b.Lease.Expiry = r.time()
	b.Lease.BreakTime = r.time()
	if n := r.count(); n > 0 {
		b.Blocks = make([]Block, n)
		for i := range b.Blocks {
			bl := &b.Blocks[i]
			bl.ID = r.str()
			bl.Size = r.varint()
			if m := r.count(); m > 0 {
				bl.Segs = make([]Segment, m)
				for j := range bl.Segs {
					bl.Segs[j] = r.seg()
				}
			}
		}
	}
	if n := r.count(); n > 0 {
		b.Pages = make([]Page, n)
		for i := range b.Pages {
			b.Pages[i].Start = r.varint()
			b.Pages[i].Seg = r.seg()
		}
	}
	b.Seq = r.varint()
	b.Tags = r.kvs()
	switch r.byte() {
	case 0:
	case 1:
		b.Copy = &CopyInfo{ID: r.str(), Source: r.str(), Status: r.str(), Progress: r.str(),
			Completion: r.time(), Description: r.str()}
	default:
		r.fail()
	}
	b.AccessTier = r.strOf("", "Hot", "Cool", "Cold", "Archive")
	b.BlockIDLen = int(r.varint())
	b.AppendCount = int(r.varint())
	b.TierChanged = r.time()
	flags := r.byte()
	if flags&^(flagExtBlocks|flagSealed|flagCPK|flagScope|flagRehydrate|flagIncremental) != 0 {
		r.fail()
	}
	b.ExtBlocks = flags&flagExtBlocks != 0
	b.Sealed = flags&flagSealed != 0
	if flags&flagCPK != 0 {
		b.KeySHA256 = r.str()
	}
	if flags&flagScope != 0 {
		b.EncryptionScope = r.str()
	}
	if flags&flagRehydrate != 0 {
		b.RehydrateTo, b.RehydratePriority, b.RehydrateDone = r.str(), r.str(), r.time()
	}
	if flags&flagIncremental != 0 {
		b.CopySnapshot, b.DestSnapshot = r.str(), r.str()
	}
	if r.err == nil && len(r.b) != 0 {
		r.fail()
	}
	if r.err != nil {
		return nil, r.err
	}
	return b, nil
}

package blob

import (
	"encoding/binary"
	"errors"

	"github.com/lazuli-storage/lazuli/internal/content"
	"github.com/lazuli-storage/lazuli/internal/lease"
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
	dst = content.AppendStr(dst, b.Name)
	dst = content.AppendStr(dst, b.Snapshot)
	dst = content.AppendStr(dst, b.Type)
	dst = content.AppendTime(dst, b.Created)
	dst = content.AppendTime(dst, b.Modified)
	dst = binary.AppendUvarint(dst, b.ETag)
	dst = binary.AppendVarint(dst, b.Size)
	dst = content.AppendStr(dst, b.Props.ContentType)
	dst = content.AppendStr(dst, b.Props.ContentEncoding)
	dst = content.AppendStr(dst, b.Props.ContentLanguage)
	dst = content.AppendBytes(dst, b.Props.ContentMD5)
	dst = content.AppendStr(dst, b.Props.ContentDisposition)
	dst = content.AppendStr(dst, b.Props.CacheControl)
	dst = content.AppendKVs(dst, b.Meta)
	dst = binary.AppendVarint(dst, int64(b.Lease.Phase))
	dst = content.AppendStr(dst, b.Lease.ID)
	dst = binary.AppendVarint(dst, int64(b.Lease.Duration))
	dst = content.AppendTime(dst, b.Lease.Expiry)
	dst = content.AppendTime(dst, b.Lease.BreakTime)
	dst = binary.AppendUvarint(dst, uint64(len(b.Blocks)))
	for i := range b.Blocks {
		bl := &b.Blocks[i]
		dst = content.AppendStr(dst, bl.ID)
		dst = binary.AppendVarint(dst, bl.Size)
		dst = binary.AppendUvarint(dst, uint64(len(bl.Segs)))
		for j := range bl.Segs {
			dst = content.AppendSeg(dst, &bl.Segs[j])
		}
	}
	dst = binary.AppendUvarint(dst, uint64(len(b.Pages)))
	for i := range b.Pages {
		dst = binary.AppendVarint(dst, b.Pages[i].Start)
		dst = content.AppendSeg(dst, &b.Pages[i].Seg)
	}
	dst = binary.AppendVarint(dst, b.Seq)
	dst = content.AppendKVs(dst, b.Tags)
	if b.Copy == nil {
		dst = append(dst, 0)
	} else {
		dst = append(dst, 1)
		dst = content.AppendStr(dst, b.Copy.ID)
		dst = content.AppendStr(dst, b.Copy.Source)
		dst = content.AppendStr(dst, b.Copy.Status)
		dst = content.AppendStr(dst, b.Copy.Progress)
		dst = content.AppendTime(dst, b.Copy.Completion)
		dst = content.AppendStr(dst, b.Copy.Description)
	}
	dst = content.AppendStr(dst, b.AccessTier)
	dst = binary.AppendVarint(dst, int64(b.BlockIDLen))
	dst = binary.AppendVarint(dst, int64(b.AppendCount))
	dst = content.AppendTime(dst, b.TierChanged)
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
	if b.VersionID != "" {
		flags |= flagVersion
	}
	ext := b.extFlags()
	if ext != 0 {
		flags |= flagExt
	}
	dst = append(dst, flags)
	if b.KeySHA256 != "" {
		dst = content.AppendStr(dst, b.KeySHA256)
	}
	if b.EncryptionScope != "" {
		dst = content.AppendStr(dst, b.EncryptionScope)
	}
	if b.RehydrateTo != "" {
		dst = content.AppendTime(content.AppendStr(content.AppendStr(dst, b.RehydrateTo), b.RehydratePriority), b.RehydrateDone)
	}
	if b.CopySnapshot != "" {
		dst = content.AppendStr(content.AppendStr(dst, b.CopySnapshot), b.DestSnapshot)
	}
	if b.VersionID != "" {
		dst = content.AppendStr(dst, b.VersionID)
	}
	if ext != 0 {
		dst = b.appendExt(dst, ext)
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
	// flagVersion: the blob's version id follows (records written while
	// versioning was off, or before it existed, have none).
	flagVersion
	// flagExt: a second flags byte follows, announcing the fields of
	// data protection (extFlags); it has room for more.
	flagExt
)

// decodeBlobBinaryAt decodes a record written by encodeBlobBinary (tag
// included) read under the key of name and snap, whose strings it shares
// instead of copying.
func decodeBlobBinaryAt(v []byte, name, snap string) (*Blob, error) {
	r := content.NewReader(v[1:])
	b := &Blob{}
	b.Name = r.StrOf(name)
	b.Snapshot = r.StrOf(snap)
	b.Type = r.StrOf(BlockBlob, PageBlob, AppendBlob)
	b.Created = r.Time()
	b.Modified = r.Time()
	b.ETag = r.Uvarint()
	b.Size = r.Varint()
	b.Props.ContentType = r.StrOf("application/octet-stream")
	b.Props.ContentEncoding = r.Str()
	b.Props.ContentLanguage = r.Str()
	b.Props.ContentMD5 = r.Shared()
	b.Props.ContentDisposition = r.Str()
	b.Props.CacheControl = r.Str()
	b.Meta = r.KVs()
	b.Lease.Phase = lease.Phase(r.Varint())
	b.Lease.ID = r.Str()
	b.Lease.Duration = int(r.Varint())
	b.Lease.Expiry = r.Time()
	b.Lease.BreakTime = r.Time()
	if n := r.Count(); n > 0 {
		b.Blocks = make([]Block, n)
		for i := range b.Blocks {
			bl := &b.Blocks[i]
			bl.ID = r.Str()
			bl.Size = r.Varint()
			if m := r.Count(); m > 0 {
				bl.Segs = make([]Segment, m)
				for j := range bl.Segs {
					bl.Segs[j] = r.Seg()
				}
			}
		}
	}
	if n := r.Count(); n > 0 {
		b.Pages = make([]Page, n)
		for i := range b.Pages {
			b.Pages[i].Start = r.Varint()
			b.Pages[i].Seg = r.Seg()
		}
	}
	b.Seq = r.Varint()
	b.Tags = r.KVs()
	switch r.Byte() {
	case 0:
	case 1:
		b.Copy = &CopyInfo{ID: r.Str(), Source: r.Str(), Status: r.Str(), Progress: r.Str(),
			Completion: r.Time(), Description: r.Str()}
	default:
		r.Fail()
	}
	b.AccessTier = r.StrOf("", "Hot", "Cool", "Cold", "Archive")
	b.BlockIDLen = int(r.Varint())
	b.AppendCount = int(r.Varint())
	b.TierChanged = r.Time()
	flags := r.Byte()
	if flags&^(flagExtBlocks|flagSealed|flagCPK|flagScope|flagRehydrate|flagIncremental|flagVersion|flagExt) != 0 {
		r.Fail()
	}
	b.ExtBlocks = flags&flagExtBlocks != 0
	b.Sealed = flags&flagSealed != 0
	if flags&flagCPK != 0 {
		b.KeySHA256 = r.Str()
	}
	if flags&flagScope != 0 {
		b.EncryptionScope = r.Str()
	}
	if flags&flagRehydrate != 0 {
		b.RehydrateTo, b.RehydratePriority, b.RehydrateDone = r.Str(), r.Str(), r.Time()
	}
	if flags&flagIncremental != 0 {
		b.CopySnapshot, b.DestSnapshot = r.Str(), r.Str()
	}
	if flags&flagVersion != 0 {
		b.VersionID = r.Str()
	}
	if flags&flagExt != 0 {
		b.readExt(r)
	}
	if r.End() != nil {
		return nil, errCorruptBlob
	}
	return b, nil
}

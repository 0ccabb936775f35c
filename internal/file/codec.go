package file

import (
	"bytes"
	"encoding/binary"
	"errors"
	"time"

	"github.com/lazuli-storage/lazuli/internal/content"
	"github.com/lazuli-storage/lazuli/internal/lease"
)

// Node records are read and written by every file operation, so they use
// a compact binary layout rather than JSON (which took an eighth of the
// server's CPU in the create + Put Range benchmark): a version byte, then
// the fields in order in the record primitives of content (uvarints,
// varints, length-prefixed strings, booleans, times as Unix nanoseconds),
// and last the inline extents of a small file.

const nodeRecordV1 = 1

var errCorruptNode = errors.New("file: corrupt node record")

func encodeNode(n *Node) []byte {
	b := make([]byte, 0, 160+len(n.Name)+len(n.PermKey)+len(n.Meta)*32+inlineSize(n))
	b = append(b, nodeRecordV1)
	b = binary.AppendUvarint(b, n.ID)
	b = binary.AppendUvarint(b, n.Parent)
	b = content.AppendBytes(b, n.Name)
	b = content.AppendBool(b, n.Dir)
	b = content.AppendUnixNano(b, n.Modified)
	b = binary.AppendUvarint(b, n.ETag)
	b = binary.AppendVarint(b, n.Size)
	b = binary.AppendUvarint(b, uint64(n.Attrs))
	for _, t := range []time.Time{n.CreationTime, n.LastWriteTime, n.ChangeTime, n.LastAccessTime} {
		b = content.AppendUnixNano(b, t)
	}
	b = content.AppendBytes(b, n.PermKey)
	p := n.Props
	for _, s := range []string{p.ContentType, p.ContentEncoding, p.ContentLanguage, string(p.ContentMD5), p.ContentDisposition, p.CacheControl} {
		b = content.AppendBytes(b, s)
	}
	b = binary.AppendUvarint(b, uint64(len(n.Meta)))
	for _, kv := range n.Meta {
		b = content.AppendBytes(content.AppendBytes(b, kv[0]), kv[1])
	}
	l := n.Lease
	b = binary.AppendUvarint(b, uint64(l.Phase))
	b = content.AppendBytes(b, l.ID)
	b = binary.AppendVarint(b, int64(l.Duration))
	b = content.AppendUnixNano(content.AppendUnixNano(b, l.Expiry), l.BreakTime)
	b = content.AppendBool(b, n.Copy != nil)
	if c := n.Copy; c != nil {
		for _, s := range []string{c.ID, c.Source, c.Status, c.Progress, c.Description} {
			b = content.AppendBytes(b, s)
		}
		b = content.AppendUnixNano(b, c.Completion)
	}
	b = binary.AppendUvarint(b, uint64(n.Handles))
	b = content.AppendBool(b, n.DeletePending)
	// Inline extents: start, length and bytes (none for a zero extent).
	b = content.AppendBool(b, n.Inline)
	if n.Inline {
		b = binary.AppendUvarint(b, uint64(len(n.Exts)))
		for _, e := range n.Exts {
			b = binary.AppendVarint(b, e.Start)
			b = binary.AppendVarint(b, e.Seg.Len)
			b = content.AppendBool(b, e.Seg.Data != nil)
			if e.Seg.Data != nil {
				b = append(b, e.Seg.Data...)
			}
		}
	}
	return b
}

// inlineSize is about what n's inline extents add to its record.
func inlineSize(n *Node) int {
	s := 0
	for _, e := range n.Exts {
		s += 24 + len(e.Seg.Data)
	}
	return s
}

// decodePermKey reads only the permission key of a node record (what a
// new child inherits from its parent) without decoding the rest.
func decodePermKey(v []byte) (string, error) {
	if len(v) == 0 || v[0] != nodeRecordV1 {
		return "", errCorruptNode
	}
	r := content.NewReader(v[1:])
	r.Uvarint()
	r.Uvarint()
	r.Raw()
	r.Bool()
	r.Varint()
	r.Uvarint()
	r.Varint()
	r.Uvarint()
	for range 4 {
		r.Varint()
	}
	k := r.Str()
	if r.Err() != nil {
		return "", errCorruptNode
	}
	return k, nil
}

func decodeNode(v []byte) (*Node, error) {
	if len(v) == 0 || v[0] != nodeRecordV1 {
		return nil, errCorruptNode
	}
	r := content.NewReader(v[1:])
	n := &Node{ID: r.Uvarint(), Parent: r.Uvarint(), Name: r.Str(), Dir: r.Bool(), Modified: r.UnixNano(),
		ETag: r.Uvarint(), Size: r.Varint(), Attrs: Attr(r.Uvarint())}
	n.CreationTime, n.LastWriteTime, n.ChangeTime, n.LastAccessTime = r.UnixNano(), r.UnixNano(), r.UnixNano(), r.UnixNano()
	n.PermKey = r.Str()
	n.Props = content.Props{ContentType: r.Str(), ContentEncoding: r.Str(), ContentLanguage: r.Str()}
	if md5 := r.Raw(); len(md5) != 0 {
		n.Props.ContentMD5 = bytes.Clone(md5)
	}
	n.Props.ContentDisposition, n.Props.CacheControl = r.Str(), r.Str()
	n.Meta = r.KVs()
	n.Lease = lease.State{Phase: lease.Phase(r.Uvarint()), ID: r.Str(), Duration: int(r.Varint()), Expiry: r.UnixNano(), BreakTime: r.UnixNano()}
	if r.Bool() {
		n.Copy = &CopyInfo{ID: r.Str(), Source: r.Str(), Status: r.Str(), Progress: r.Str(), Description: r.Str(), Completion: r.UnixNano()}
	}
	n.Handles = int(r.Uvarint())
	n.DeletePending = r.Bool()
	if n.Inline = r.Bool(); n.Inline {
		if m := r.Count(); m > 0 {
			n.Exts = make([]Extent, m)
			for i := range n.Exts {
				e := &n.Exts[i]
				e.Start, e.Seg.Len = r.Varint(), r.Varint()
				if r.Bool() {
					// A copy: the node is changed and written back.
					e.Seg.Data = bytes.Clone(r.Fixed(int(e.Seg.Len)))
				}
				if e.Start < 0 || e.Seg.Len <= 0 {
					return nil, errCorruptNode
				}
			}
		}
	}
	if r.End() != nil || n.Lease.Phase > lease.Expired {
		return nil, errCorruptNode
	}
	return n, nil
}

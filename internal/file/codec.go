package file

import (
	"encoding/binary"
	"errors"
	"math"
	"time"

	"github.com/lazuli-storage/lazuli/internal/content"
	"github.com/lazuli-storage/lazuli/internal/lease"
)

// Node records are read and written by every file operation, so they use
// a compact binary layout rather than JSON (which took an eighth of the
// server's CPU in the create + Put Range benchmark): a version byte, then
// the fields in order as uvarints, varints, length-prefixed strings and
// times as Unix nanoseconds (math.MinInt64 for the zero time), and last
// the inline extents of a small file.

const nodeRecordV1 = 1

var errCorruptNode = errors.New("file: corrupt node record")

func appendStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendTime(b []byte, t time.Time) []byte {
	if t.IsZero() {
		return binary.AppendVarint(b, math.MinInt64)
	}
	return binary.AppendVarint(b, t.UnixNano())
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

func encodeNode(n *Node) []byte {
	b := make([]byte, 0, 160+len(n.Name)+len(n.PermKey)+len(n.Meta)*32+inlineSize(n))
	b = append(b, nodeRecordV1)
	b = binary.AppendUvarint(b, n.ID)
	b = binary.AppendUvarint(b, n.Parent)
	b = appendStr(b, n.Name)
	b = appendBool(b, n.Dir)
	b = appendTime(b, n.Modified)
	b = binary.AppendUvarint(b, n.ETag)
	b = binary.AppendVarint(b, n.Size)
	b = binary.AppendUvarint(b, uint64(n.Attrs))
	for _, t := range []time.Time{n.CreationTime, n.LastWriteTime, n.ChangeTime, n.LastAccessTime} {
		b = appendTime(b, t)
	}
	b = appendStr(b, n.PermKey)
	p := n.Props
	for _, s := range []string{p.ContentType, p.ContentEncoding, p.ContentLanguage, string(p.ContentMD5), p.ContentDisposition, p.CacheControl} {
		b = appendStr(b, s)
	}
	b = binary.AppendUvarint(b, uint64(len(n.Meta)))
	for _, kv := range n.Meta {
		b = appendStr(appendStr(b, kv[0]), kv[1])
	}
	l := n.Lease
	b = binary.AppendUvarint(b, uint64(l.Phase))
	b = appendStr(b, l.ID)
	b = binary.AppendVarint(b, int64(l.Duration))
	b = appendTime(appendTime(b, l.Expiry), l.BreakTime)
	b = appendBool(b, n.Copy != nil)
	if c := n.Copy; c != nil {
		for _, s := range []string{c.ID, c.Source, c.Status, c.Progress, c.Description} {
			b = appendStr(b, s)
		}
		b = appendTime(b, c.Completion)
	}
	b = binary.AppendUvarint(b, uint64(n.Handles))
	b = appendBool(b, n.DeletePending)
	// Inline extents: start, length and bytes (none for a zero extent).
	b = appendBool(b, n.Inline)
	if n.Inline {
		b = binary.AppendUvarint(b, uint64(len(n.Exts)))
		for _, e := range n.Exts {
			b = binary.AppendVarint(b, e.Start)
			b = binary.AppendVarint(b, e.Seg.Len)
			b = appendBool(b, e.Seg.Data != nil)
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

// nodeReader reads the fields of a binary node record; the first failure
// sticks.
type nodeReader struct {
	b   []byte
	bad bool
}

func (r *nodeReader) uvarint() uint64 {
	v, w := binary.Uvarint(r.b)
	if w <= 0 {
		r.bad, r.b = true, nil
		return 0
	}
	r.b = r.b[w:]
	return v
}

func (r *nodeReader) varint() int64 {
	v, w := binary.Varint(r.b)
	if w <= 0 {
		r.bad, r.b = true, nil
		return 0
	}
	r.b = r.b[w:]
	return v
}

func (r *nodeReader) str() string {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.bad, r.b = true, nil
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

func (r *nodeReader) bool() bool {
	if len(r.b) == 0 {
		r.bad = true
		return false
	}
	v := r.b[0] == 1
	r.b = r.b[1:]
	return v
}

func (r *nodeReader) time() time.Time {
	v := r.varint()
	if v == math.MinInt64 {
		return time.Time{}
	}
	return time.Unix(0, v).UTC()
}

// bytes reads n bytes into a new slice.
func (r *nodeReader) bytes(n int64) []byte {
	if n < 0 || n > int64(len(r.b)) {
		r.bad, r.b = true, nil
		return nil
	}
	v := append([]byte(nil), r.b[:n]...)
	r.b = r.b[n:]
	return v
}

// skipStr passes over a string field without copying it.
func (r *nodeReader) skipStr() {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.bad, r.b = true, nil
		return
	}
	r.b = r.b[n:]
}

// decodePermKey reads only the permission key of a node record (what a
// new child inherits from its parent) without decoding the rest.
func decodePermKey(v []byte) (string, error) {
	if len(v) == 0 || v[0] != nodeRecordV1 {
		return "", errCorruptNode
	}
	r := &nodeReader{b: v[1:]}
	r.uvarint()
	r.uvarint()
	r.skipStr()
	r.bool()
	r.varint()
	r.uvarint()
	r.varint()
	r.uvarint()
	for range 4 {
		r.varint()
	}
	k := r.str()
	if r.bad {
		return "", errCorruptNode
	}
	return k, nil
}

func decodeNode(v []byte) (*Node, error) {
	if len(v) == 0 || v[0] != nodeRecordV1 {
		return nil, errCorruptNode
	}
	r := &nodeReader{b: v[1:]}
	n := &Node{ID: r.uvarint(), Parent: r.uvarint(), Name: r.str(), Dir: r.bool(), Modified: r.time(),
		ETag: r.uvarint(), Size: r.varint(), Attrs: Attr(r.uvarint())}
	n.CreationTime, n.LastWriteTime, n.ChangeTime, n.LastAccessTime = r.time(), r.time(), r.time(), r.time()
	n.PermKey = r.str()
	n.Props = content.Props{ContentType: r.str(), ContentEncoding: r.str(), ContentLanguage: r.str()}
	if md5 := r.str(); md5 != "" {
		n.Props.ContentMD5 = []byte(md5)
	}
	n.Props.ContentDisposition, n.Props.CacheControl = r.str(), r.str()
	if m := r.uvarint(); m > 0 && m <= uint64(len(r.b)) {
		n.Meta = make([]content.KV, m)
		for i := range n.Meta {
			n.Meta[i] = content.KV{r.str(), r.str()}
		}
	} else if m > 0 {
		return nil, errCorruptNode
	}
	n.Lease = lease.State{Phase: lease.Phase(r.uvarint()), ID: r.str(), Duration: int(r.varint()), Expiry: r.time(), BreakTime: r.time()}
	if r.bool() {
		n.Copy = &CopyInfo{ID: r.str(), Source: r.str(), Status: r.str(), Progress: r.str(), Description: r.str(), Completion: r.time()}
	}
	n.Handles = int(r.uvarint())
	n.DeletePending = r.bool()
	if n.Inline = r.bool(); n.Inline {
		if m := r.uvarint(); m > 0 && m <= uint64(len(r.b)) {
			n.Exts = make([]Extent, m)
			for i := range n.Exts {
				e := &n.Exts[i]
				e.Start, e.Seg.Len = r.varint(), r.varint()
				if r.bool() {
					e.Seg.Data = r.bytes(e.Seg.Len)
				}
				if e.Start < 0 || e.Seg.Len <= 0 {
					return nil, errCorruptNode
				}
			}
		} else if m > 0 {
			return nil, errCorruptNode
		}
	}
	if r.bad || len(r.b) != 0 || n.Lease.Phase > lease.Expired {
		return nil, errCorruptNode
	}
	return n, nil
}

package file

import (
	"encoding/binary"
	"errors"

	"github.com/lazuli-storage/lazuli/internal/content"
)

// Handle records are written by every SMB CREATE and read and written by
// every WRITE and CLOSE, so they too use a binary layout rather than JSON
// (decoding and encoding them as JSON took a tenth of the server's CPU
// when smbclient put small files): a version byte, then the fields in
// order in the record primitives of content.

const handleRecordV1 = 1

var errCorruptHandle = errors.New("file: corrupt handle record")

func encodeHandle(h *Handle) []byte {
	b := make([]byte, 0, 96+len(h.ClientIP)+len(h.Locks)*20+64)
	b = append(b, handleRecordV1)
	for _, v := range []uint64{h.ID, h.FileID, h.ParentID, h.Session, h.Owner, uint64(h.Access), uint64(h.ShareAccess), uint64(h.UserSet)} {
		b = binary.AppendUvarint(b, v)
	}
	b = content.AppendBytes(b, h.ClientIP)
	b = content.AppendTime(b, h.Opened)
	b = content.AppendBool(b, h.Dir)
	b = content.AppendBool(b, h.DeleteOnClose)
	b = binary.AppendUvarint(b, uint64(len(h.Locks)))
	for _, l := range h.Locks {
		b = binary.AppendUvarint(b, l.Off)
		b = binary.AppendUvarint(b, l.Len)
		b = content.AppendBool(b, l.Exclusive)
	}
	b = content.AppendBool(b, h.Cache != nil)
	if c := h.Cache; c != nil {
		b = content.AppendBool(b, c.Oplock)
		b = append(b, c.Client[:]...)
		b = append(b, c.Key[:]...)
		b = append(b, c.Parent[:]...)
		b = content.AppendBool(b, c.V2)
		b = append(b, c.State, c.BreakTo, c.Sent)
		b = content.AppendBool(b, c.Breaking)
		b = binary.AppendUvarint(b, uint64(c.Epoch))
	}
	return b
}

func decodeHandle(v []byte) (*Handle, error) {
	if len(v) == 0 || v[0] != handleRecordV1 {
		return nil, errCorruptHandle
	}
	r := content.NewReader(v[1:])
	h := &Handle{ID: r.Uvarint(), FileID: r.Uvarint(), ParentID: r.Uvarint(), Session: r.Uvarint(), Owner: r.Uvarint()}
	access, share, userSet := r.Uvarint(), r.Uvarint(), r.Uvarint()
	if access > 0xFFFFFFFF || share > 0xFFFFFFFF || userSet > 0xFF {
		return nil, errCorruptHandle
	}
	h.Access, h.ShareAccess, h.UserSet = uint32(access), uint32(share), uint8(userSet)
	h.ClientIP = r.Str()
	h.Opened = r.Time()
	h.Dir, h.DeleteOnClose = r.Bool(), r.Bool()
	if n := r.Count(); n > 0 {
		h.Locks = make([]Lock, n)
		for i := range h.Locks {
			h.Locks[i] = Lock{Off: r.Uvarint(), Len: r.Uvarint(), Exclusive: r.Bool()}
		}
	}
	if r.Bool() {
		c := &Caching{Oplock: r.Bool()}
		copy(c.Client[:], r.Fixed(16))
		copy(c.Key[:], r.Fixed(16))
		copy(c.Parent[:], r.Fixed(16))
		c.V2 = r.Bool()
		c.State, c.BreakTo, c.Sent = r.Byte(), r.Byte(), r.Byte()
		c.Breaking = r.Bool()
		epoch := r.Uvarint()
		if epoch > 0xFFFF {
			return nil, errCorruptHandle
		}
		c.Epoch = uint16(epoch)
		h.Cache = c
	}
	if r.End() != nil {
		return nil, errCorruptHandle
	}
	return h, nil
}

// Package wire encodes and decodes SMB 2/3 messages (MS-SMB2 §2.2): the
// transport frame, the sync and async headers, the transform header, and
// the request and response body of every command. It knows nothing about
// sessions, files or storage; decoders treat their input as hostile and
// answer ErrMalformed instead of panicking.
package wire

import (
	"encoding/binary"
	"errors"
	"unicode/utf16"
)

// ErrMalformed reports a message that does not follow the wire format.
var ErrMalformed = errors.New("smb2: malformed message")

var le = binary.LittleEndian

// Commands (MS-SMB2 §2.2.1.2).
const (
	Negotiate      uint16 = 0x00
	SessionSetup   uint16 = 0x01
	Logoff         uint16 = 0x02
	TreeConnect    uint16 = 0x03
	TreeDisconnect uint16 = 0x04
	Create         uint16 = 0x05
	Close          uint16 = 0x06
	Flush          uint16 = 0x07
	Read           uint16 = 0x08
	Write          uint16 = 0x09
	Lock           uint16 = 0x0A
	Ioctl          uint16 = 0x0B
	Cancel         uint16 = 0x0C
	Echo           uint16 = 0x0D
	QueryDirectory uint16 = 0x0E
	ChangeNotify   uint16 = 0x0F
	QueryInfo      uint16 = 0x10
	SetInfo        uint16 = 0x11
	OplockBreak    uint16 = 0x12
)

// Header flags.
const (
	FlagServerToRedir uint32 = 0x00000001
	FlagAsync         uint32 = 0x00000002
	FlagRelated       uint32 = 0x00000004
	FlagSigned        uint32 = 0x00000008
	FlagPriorityMask  uint32 = 0x00000070
	FlagDFS           uint32 = 0x10000000
	FlagReplay        uint32 = 0x20000000
)

// Dialects.
const (
	Dialect202      uint16 = 0x0202
	Dialect210      uint16 = 0x0210
	Dialect300      uint16 = 0x0300
	Dialect302      uint16 = 0x0302
	Dialect311      uint16 = 0x0311
	DialectWildcard uint16 = 0x02FF
)

// HeaderSize is the size of the SMB2 header.
const HeaderSize = 64

// TransformHeaderSize is the size of the SMB3 transform header.
const TransformHeaderSize = 52

// ProtocolID, TransformID and SMB1ID are the first four bytes of an SMB2
// message, a transform header and an SMB1 message.
var (
	ProtocolID  = [4]byte{0xFE, 'S', 'M', 'B'}
	TransformID = [4]byte{0xFD, 'S', 'M', 'B'}
	SMB1ID      = [4]byte{0xFF, 'S', 'M', 'B'}
)

// Header is the SMB2 packet header (MS-SMB2 §2.2.1). Status holds the
// ChannelSequence/Reserved field in requests.
type Header struct {
	CreditCharge uint16
	Status       uint32
	Command      uint16
	Credits      uint16 // CreditRequest or CreditResponse
	Flags        uint32
	NextCommand  uint32
	MessageID    uint64
	AsyncID      uint64 // with FlagAsync
	TreeID       uint32 // without FlagAsync
	SessionID    uint64
	Signature    [16]byte
}

// DecodeHeader reads the header at the start of b.
func DecodeHeader(b []byte) (Header, error) {
	var h Header
	if len(b) < HeaderSize || [4]byte(b[:4]) != ProtocolID || le.Uint16(b[4:]) != HeaderSize {
		return h, ErrMalformed
	}
	h.CreditCharge = le.Uint16(b[6:])
	h.Status = le.Uint32(b[8:])
	h.Command = le.Uint16(b[12:])
	h.Credits = le.Uint16(b[14:])
	h.Flags = le.Uint32(b[16:])
	h.NextCommand = le.Uint32(b[20:])
	h.MessageID = le.Uint64(b[24:])
	if h.Flags&FlagAsync != 0 {
		h.AsyncID = le.Uint64(b[32:])
	} else {
		h.TreeID = le.Uint32(b[36:])
	}
	h.SessionID = le.Uint64(b[40:])
	copy(h.Signature[:], b[48:64])
	return h, nil
}

// Append appends the encoded header to b.
func (h *Header) Append(b []byte) []byte {
	b = append(b, ProtocolID[:]...)
	b = le.AppendUint16(b, HeaderSize)
	b = le.AppendUint16(b, h.CreditCharge)
	b = le.AppendUint32(b, h.Status)
	b = le.AppendUint16(b, h.Command)
	b = le.AppendUint16(b, h.Credits)
	b = le.AppendUint32(b, h.Flags)
	b = le.AppendUint32(b, h.NextCommand)
	b = le.AppendUint64(b, h.MessageID)
	if h.Flags&FlagAsync != 0 {
		b = le.AppendUint64(b, h.AsyncID)
	} else {
		b = le.AppendUint32(b, 0)
		b = le.AppendUint32(b, h.TreeID)
	}
	b = le.AppendUint64(b, h.SessionID)
	return append(b, h.Signature[:]...)
}

// TransformHeader is the SMB3 encryption header (MS-SMB2 §2.2.41).
type TransformHeader struct {
	Signature           [16]byte
	Nonce               [16]byte
	OriginalMessageSize uint32
	Flags               uint16 // 1: encrypted
	SessionID           uint64
}

// DecodeTransformHeader reads a transform header at the start of b.
func DecodeTransformHeader(b []byte) (TransformHeader, error) {
	var t TransformHeader
	if len(b) < TransformHeaderSize || [4]byte(b[:4]) != TransformID {
		return t, ErrMalformed
	}
	copy(t.Signature[:], b[4:20])
	copy(t.Nonce[:], b[20:36])
	t.OriginalMessageSize = le.Uint32(b[36:])
	t.Flags = le.Uint16(b[42:])
	t.SessionID = le.Uint64(b[44:])
	return t, nil
}

// Append appends the encoded transform header to b.
func (t *TransformHeader) Append(b []byte) []byte {
	b = append(b, TransformID[:]...)
	b = append(b, t.Signature[:]...)
	b = append(b, t.Nonce[:]...)
	b = le.AppendUint32(b, t.OriginalMessageSize)
	b = le.AppendUint16(b, 0)
	b = le.AppendUint16(b, t.Flags)
	return le.AppendUint64(b, t.SessionID)
}

// FileID identifies an open (MS-SMB2 §2.2.14.1).
type FileID struct{ Persistent, Volatile uint64 }

// RelatedFileID is the FileID that means "the file of the previous
// request" in a related compound.
var RelatedFileID = FileID{^uint64(0), ^uint64(0)}

func getFileID(b []byte) FileID {
	return FileID{le.Uint64(b), le.Uint64(b[8:])}
}

// AppendFileID appends f to b.
func AppendFileID(b []byte, f FileID) []byte {
	b = le.AppendUint64(b, f.Persistent)
	return le.AppendUint64(b, f.Volatile)
}

// body returns the fixed part of a request body of structure size n (the
// declared StructureSize, whose low bit marks a variable part) after
// checking that the message is long enough.
func body(msg []byte, size uint16) ([]byte, error) {
	fixed := int(size &^ 1)
	if len(msg) < HeaderSize+fixed || le.Uint16(msg[HeaderSize:]) != size {
		return nil, ErrMalformed
	}
	return msg[HeaderSize:], nil
}

// buffer returns msg[off:off+n] where off counts from the header start.
func buffer(msg []byte, off, n uint32) ([]byte, error) {
	if n == 0 {
		return nil, nil
	}
	end := uint64(off) + uint64(n)
	if off < HeaderSize || end > uint64(len(msg)) {
		return nil, ErrMalformed
	}
	return msg[off:end], nil
}

// DecodeUTF16 converts little-endian UTF-16 to a string.
func DecodeUTF16(b []byte) (string, error) {
	if len(b)%2 != 0 {
		return "", ErrMalformed
	}
	u := make([]uint16, len(b)/2)
	for i := range u {
		u[i] = le.Uint16(b[2*i:])
	}
	return string(utf16.Decode(u)), nil
}

// AppendUTF16 appends s as little-endian UTF-16.
func AppendUTF16(b []byte, s string) []byte {
	for _, r := range s {
		if r >= 0x10000 {
			r1, r2 := utf16.EncodeRune(r)
			b = le.AppendUint16(b, uint16(r1))
			b = le.AppendUint16(b, uint16(r2))
			continue
		}
		b = le.AppendUint16(b, uint16(r))
	}
	return b
}

// UTF16Len is the length in bytes of s in UTF-16.
func UTF16Len(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 4
		} else {
			n += 2
		}
	}
	return n
}

// Pad8 appends zero bytes to b until len(b)-start is a multiple of 8.
func Pad8(b []byte, start int) []byte {
	for (len(b)-start)%8 != 0 {
		b = append(b, 0)
	}
	return b
}

// ErrorResponse appends the SMB2 ERROR body (MS-SMB2 §2.2.2) to b.
func ErrorResponse(b []byte) []byte {
	return append(b, 9, 0, 0, 0, 0, 0, 0, 0, 0)
}

// SmallResponse appends the 4-byte body shared by LOGOFF, TREE_DISCONNECT,
// FLUSH, LOCK and ECHO responses.
func SmallResponse(b []byte) []byte {
	return append(b, 4, 0, 0, 0)
}

// DecodeSmall checks the 4-byte body of LOGOFF, TREE_DISCONNECT, ECHO
// and CANCEL requests.
func DecodeSmall(msg []byte) error {
	_, err := body(msg, 4)
	return err
}

package wire

import "unicode/utf16"

// ChangeNotifyRequest is the CHANGE_NOTIFY request (MS-SMB2 §2.2.35).
type ChangeNotifyRequest struct {
	// WatchTree (SMB2_WATCH_TREE) asks for the whole subtree.
	WatchTree          bool
	OutputBufferLength uint32
	FileID             FileID
	CompletionFilter   uint32
}

// DecodeChangeNotify decodes a CHANGE_NOTIFY request.
func DecodeChangeNotify(msg []byte) (ChangeNotifyRequest, error) {
	b, err := body(msg, 32)
	if err != nil {
		return ChangeNotifyRequest{}, err
	}
	return ChangeNotifyRequest{WatchTree: le.Uint16(b[2:])&1 != 0, OutputBufferLength: le.Uint32(b[4:]),
		FileID: getFileID(b[8:]), CompletionFilter: le.Uint32(b[24:])}, nil
}

// NotifyEntry is one FILE_NOTIFY_INFORMATION (MS-FSCC §2.7.1).
type NotifyEntry struct {
	Action uint32
	Name   string
}

// AppendNotifyEntries appends the FILE_NOTIFY_INFORMATION list of es,
// each entry 4-byte aligned.
func AppendNotifyEntries(b []byte, es []NotifyEntry) []byte {
	for i, e := range es {
		start := len(b)
		name := utf16.Encode([]rune(e.Name))
		b = le.AppendUint32(b, 0)
		b = le.AppendUint32(b, e.Action)
		b = le.AppendUint32(b, uint32(2*len(name)))
		for _, u := range name {
			b = le.AppendUint16(b, u)
		}
		if i < len(es)-1 {
			for (len(b)-start)%4 != 0 {
				b = append(b, 0)
			}
			le.PutUint32(b[start:], uint32(len(b)-start))
		}
	}
	return b
}

// AppendChangeNotifyResponse appends a CHANGE_NOTIFY response body
// (§2.2.36) carrying out, the encoded FILE_NOTIFY_INFORMATION list.
func AppendChangeNotifyResponse(msg, out []byte) []byte {
	msg = le.AppendUint16(msg, 9)
	off := uint16(0)
	if len(out) > 0 {
		off = HeaderSize + 8
	}
	msg = le.AppendUint16(msg, off)
	msg = le.AppendUint32(msg, uint32(len(out)))
	if len(out) == 0 {
		return append(msg, 0)
	}
	return append(msg, out...)
}

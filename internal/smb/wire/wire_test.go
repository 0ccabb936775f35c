package wire

import (
	"bytes"
	"testing"
)

func TestHeaderRoundTrip(t *testing.T) {
	for _, h := range []Header{
		{CreditCharge: 1, Status: 0xC0000022, Command: Create, Credits: 31, Flags: FlagServerToRedir | FlagSigned,
			NextCommand: 128, MessageID: 42, TreeID: 7, SessionID: 0x1122334455667788, Signature: [16]byte{1, 2, 3}},
		{Command: Lock, Flags: FlagAsync, MessageID: 9, AsyncID: 0xdeadbeef, SessionID: 5},
	} {
		b := h.Append(nil)
		if len(b) != HeaderSize {
			t.Fatalf("header is %d bytes", len(b))
		}
		got, err := DecodeHeader(b)
		if err != nil || got != h {
			t.Fatalf("round trip: %+v, %v; want %+v", got, err, h)
		}
	}
	if _, err := DecodeHeader(make([]byte, 63)); err == nil {
		t.Fatal("short header accepted")
	}
}

func TestTransformHeaderRoundTrip(t *testing.T) {
	th := TransformHeader{Signature: [16]byte{9}, Nonce: [16]byte{1, 2}, OriginalMessageSize: 100, Flags: 1, SessionID: 77}
	b := th.Append(nil)
	got, err := DecodeTransformHeader(b)
	if err != nil || got != th || len(b) != TransformHeaderSize {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
}

func TestNegotiateResponseContextsAligned(t *testing.T) {
	r := NegotiateResponse{Dialect: Dialect311, SecurityBuffer: []byte{1, 2, 3},
		Contexts: []NegotiateContext{{Type: CtxPreauthIntegrity, Data: make([]byte, 38)}, {Type: CtxEncryption, Data: []byte{1, 0, 2, 0}}}}
	msg := r.Append(make([]byte, HeaderSize))
	off := le.Uint32(msg[HeaderSize+60:])
	if off%8 != 0 || le.Uint16(msg[off:]) != CtxPreauthIntegrity {
		t.Fatalf("first context at %d", off)
	}
	second := (off + 8 + 38 + 7) &^ 7
	if le.Uint16(msg[second:]) != CtxEncryption {
		t.Fatalf("second context not at %d", second)
	}
}

func TestCreateRequestDecode(t *testing.T) {
	msg := (&Header{Command: Create}).Append(nil)
	name := AppendUTF16(nil, `dir\file.txt`)
	ctxName := []byte("MxAc")
	body := make([]byte, 56)
	le.PutUint16(body, 57)
	le.PutUint32(body[24:], 0x12019f)
	le.PutUint32(body[32:], 7)
	le.PutUint32(body[36:], 3)
	le.PutUint16(body[44:], HeaderSize+56)
	le.PutUint16(body[46:], uint16(len(name)))
	msg = append(msg, body...)
	msg = append(msg, name...)
	for len(msg)%8 != 0 {
		msg = append(msg, 0)
	}
	ctxOff := len(msg)
	cc := make([]byte, 16)
	le.PutUint16(cc[4:], 16)
	le.PutUint16(cc[6:], 4)
	msg = append(msg, cc...)
	msg = append(msg, ctxName...)
	le.PutUint32(msg[HeaderSize+48:], uint32(ctxOff))
	le.PutUint32(msg[HeaderSize+52:], uint32(len(msg)-ctxOff))
	r, err := DecodeCreateRequest(msg)
	if err != nil {
		t.Fatal(err)
	}
	if r.Name != `dir\file.txt` || r.DesiredAccess != 0x12019f || r.ShareAccess != 7 || r.CreateDisposition != 3 ||
		len(r.Contexts) != 1 || r.Contexts[0].Name != "MxAc" {
		t.Fatalf("decoded %+v", r)
	}
}

// seedMessages are well-formed requests of every command for the fuzz
// corpora.
func seedMessages() [][]byte {
	var out [][]byte
	for cmd, size := range map[uint16]int{Negotiate: 36, SessionSetup: 25, Logoff: 4, TreeConnect: 9,
		TreeDisconnect: 4, Create: 57, Close: 24, Flush: 24, Read: 49, Write: 49, Lock: 48, Ioctl: 57,
		Cancel: 4, Echo: 4, QueryDirectory: 33, ChangeNotify: 32, QueryInfo: 41, SetInfo: 33} {
		msg := (&Header{Command: cmd, MessageID: 1}).Append(nil)
		body := make([]byte, size&^1+24)
		le.PutUint16(body, uint16(size))
		out = append(out, append(msg, body...))
	}
	return out
}

// decodeAny runs the decoder of the message's command.
func decodeAny(b []byte) {
	h, err := DecodeHeader(b)
	if err != nil {
		return
	}
	switch h.Command {
	case Negotiate:
		DecodeNegotiateRequest(b)
	case SessionSetup:
		DecodeSessionSetupRequest(b)
	case TreeConnect:
		DecodeTreeConnectRequest(b)
	case Create:
		DecodeCreateRequest(b)
	case Close:
		DecodeCloseRequest(b)
	case Flush:
		DecodeFlushRequest(b)
	case Read:
		DecodeReadRequest(b)
	case Write:
		DecodeWriteRequest(b)
	case Lock:
		DecodeLockRequest(b)
	case Ioctl:
		DecodeIoctlRequest(b)
	case QueryDirectory:
		DecodeQueryDirectoryRequest(b)
	case ChangeNotify:
		DecodeChangeNotifyRequest(b)
	case QueryInfo:
		DecodeQueryInfoRequest(b)
	case SetInfo:
		DecodeSetInfoRequest(b)
	default:
		DecodeSmall(b)
	}
}

func FuzzHeader(f *testing.F) {
	for _, m := range seedMessages() {
		f.Add(m[:HeaderSize])
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := DecodeHeader(b)
		if err != nil {
			return
		}
		// Re-encoding a decoded header gives back its 64 bytes (the
		// reserved field of sync headers aside).
		out := h.Append(nil)
		if h.Flags&FlagAsync != 0 && !bytes.Equal(out, b[:HeaderSize]) {
			t.Fatalf("round trip differs")
		}
	})
}

func FuzzTransformHeader(f *testing.F) {
	f.Add((&TransformHeader{Flags: 1}).Append(nil))
	f.Fuzz(func(t *testing.T, b []byte) { DecodeTransformHeader(b) })
}

// FuzzDecoders feeds each command's decoder: the first byte picks the
// command, so one corpus reaches all of them.
func FuzzDecoders(f *testing.F) {
	for _, m := range seedMessages() {
		f.Add(m)
	}
	f.Fuzz(func(t *testing.T, b []byte) { decodeAny(b) })
}

func FuzzNegotiateRequest(f *testing.F) {
	for _, m := range seedMessages() {
		if le.Uint16(m[12:]) == Negotiate {
			f.Add(m)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) { DecodeNegotiateRequest(b) })
}

func FuzzCreateRequest(f *testing.F) {
	for _, m := range seedMessages() {
		if le.Uint16(m[12:]) == Create {
			f.Add(m)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) { DecodeCreateRequest(b) })
}

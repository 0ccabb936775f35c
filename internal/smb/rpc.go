package smb

import (
	"bytes"
	"context"
	"sort"
	"sync"

	"github.com/lazuli-storage/lazuli/internal/smb/wire"
)

// pipe is an open of the srvsvc named pipe on IPC$: a DCE/RPC
// (MS-RPCE) endpoint with just enough of srvsvc (MS-SRVS) for clients
// to list shares (NetrShareEnumAll).
type pipe struct {
	c    *conn
	s    *session
	mu   sync.Mutex
	in   []byte
	out  []byte
	req  []byte // stub of a fragmented request
	xmit int    // client's max_recv_frag
}

func newPipe(c *conn, s *session) *pipe { return &pipe{c: c, s: s, xmit: 4280} }

const maxPipeBuffer = 1 << 20

func (p *pipe) write(b []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.in)+len(b) > maxPipeBuffer {
		p.in = nil
		return
	}
	p.in = append(p.in, b...)
	for len(p.in) >= 16 {
		n := int(le.Uint16(p.in[8:]))
		if n < 16 {
			p.in = nil
			return
		}
		if len(p.in) < n {
			return
		}
		pdu := p.in[:n]
		p.in = p.in[n:]
		p.handle(pdu)
	}
}

func (p *pipe) read(n int) []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	n = min(n, len(p.out))
	out := p.out[:n:n]
	p.out = p.out[n:]
	return out
}

func (p *pipe) pending() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.out)
}

// DCE/RPC packet types and flags.
const (
	rpcRequest  = 0
	rpcResponse = 2
	rpcFault    = 3
	rpcBind     = 11
	rpcBindAck  = 12
	rpcAlter    = 14
	rpcAlterRsp = 15
	pfcFirst    = 1
	pfcLast     = 2
)

var (
	ndr32        = []byte{0x04, 0x5d, 0x88, 0x8a, 0xeb, 0x1c, 0xc9, 0x11, 0x9f, 0xe8, 0x08, 0x00, 0x2b, 0x10, 0x48, 0x60, 2, 0, 0, 0}
	srvsvcSyntax = []byte{0xc8, 0x4f, 0x32, 0x4b, 0x70, 0x16, 0xd3, 0x01, 0x12, 0x78, 0x5a, 0x47, 0xbf, 0x6e, 0xe1, 0x88, 3, 0, 0, 0}
)

func rpcHeader(ptype, flags byte, callID uint32) []byte {
	b := []byte{5, 0, ptype, flags, 0x10, 0, 0, 0, 0, 0, 0, 0}
	return le.AppendUint32(b, callID)
}

func finishPDU(b []byte) []byte {
	le.PutUint16(b[8:], uint16(len(b)))
	return b
}

func (p *pipe) handle(pdu []byte) {
	if pdu[0] != 5 || pdu[4]&0xf0 != 0x10 {
		return // only little-endian NDR
	}
	ptype, flags, callID := pdu[2], pdu[3], le.Uint32(pdu[12:])
	switch ptype {
	case rpcBind, rpcAlter:
		p.bind(pdu, ptype, callID)
	case rpcRequest:
		if len(pdu) < 24 {
			return
		}
		opnum := le.Uint16(pdu[22:])
		stub := pdu[24:]
		if authLen := int(le.Uint16(pdu[10:])); authLen > 0 && len(stub) >= authLen+8 {
			stub = stub[:len(stub)-authLen-8]
		}
		if flags&pfcFirst != 0 {
			p.req = p.req[:0]
		}
		if len(p.req)+len(stub) > maxPipeBuffer {
			p.req = nil
			return
		}
		p.req = append(p.req, stub...)
		if flags&pfcLast == 0 {
			return
		}
		p.request(callID, opnum, p.req)
	}
}

func (p *pipe) bind(pdu []byte, ptype byte, callID uint32) {
	if len(pdu) < 28 {
		return
	}
	if x := int(le.Uint16(pdu[18:])); x >= 1024 {
		p.xmit = x
	}
	assoc := le.Uint32(pdu[20:])
	if assoc == 0 {
		assoc = 0x53f0
	}
	n := int(pdu[24])
	b := rpcHeader(ptype+1, pfcFirst|pfcLast, callID)
	b = le.AppendUint16(b, 4280)
	b = le.AppendUint16(b, 4280)
	b = le.AppendUint32(b, assoc)
	if ptype == rpcBind {
		addr := []byte(`\PIPE\srvsvc` + "\x00")
		b = le.AppendUint16(b, uint16(len(addr)))
		b = append(b, addr...)
	} else {
		b = le.AppendUint16(b, 0)
	}
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	b = append(b, byte(n), 0, 0, 0)
	off := 28
	for i := 0; i < n; i++ {
		if len(pdu) < off+24 {
			return
		}
		nts := int(pdu[off+2])
		abstract := pdu[off+4 : off+24]
		accepted := false
		for j := 0; j < nts; j++ {
			at := off + 24 + 20*j
			if len(pdu) < at+20 {
				return
			}
			if !accepted && bytes.Equal(abstract, srvsvcSyntax) && bytes.Equal(pdu[at:at+20], ndr32) {
				accepted = true
			}
		}
		if accepted {
			b = le.AppendUint16(b, 0)
			b = le.AppendUint16(b, 0)
			b = append(b, ndr32...)
		} else {
			reason := uint16(2) // proposed transfer syntaxes not supported
			if !bytes.Equal(abstract, srvsvcSyntax) {
				reason = 1 // abstract syntax not supported
			}
			b = le.AppendUint16(b, 2)
			b = le.AppendUint16(b, reason)
			b = append(b, make([]byte, 20)...)
		}
		off += 24 + 20*nts
	}
	p.out = append(p.out, finishPDU(b)...)
}

func (p *pipe) request(callID uint32, opnum uint16, stub []byte) {
	var out []byte
	switch opnum {
	case 15: // NetrShareEnumAll
		out = p.shareEnumAll(stub)
	}
	if out == nil {
		b := rpcHeader(rpcFault, pfcFirst|pfcLast, callID)
		b = le.AppendUint32(b, 32)
		b = append(b, 0, 0, 0, 0)
		b = le.AppendUint32(b, 0x1c010002) // nca_s_op_rng_error
		b = le.AppendUint32(b, 0)
		p.out = append(p.out, finishPDU(b)...)
		return
	}
	max := p.xmit - 24
	for first := true; first || len(out) > 0; first = false {
		n := min(len(out), max)
		flags := byte(0)
		if first {
			flags |= pfcFirst
		}
		if n == len(out) {
			flags |= pfcLast
		}
		b := rpcHeader(rpcResponse, flags, callID)
		b = le.AppendUint32(b, uint32(len(out)))
		b = append(b, 0, 0, 0, 0)
		b = append(b, out[:n]...)
		p.out = append(p.out, finishPDU(b)...)
		out = out[n:]
	}
}

type ndr struct {
	b   []byte
	ref uint32
}

func (w *ndr) u32(v uint32) { w.b = le.AppendUint32(w.b, v) }
func (w *ndr) ptr() {
	w.ref += 4
	w.u32(0x20000 + w.ref)
}
func (w *ndr) str(s string) {
	n := uint32(len([]rune(s)) + 1)
	w.u32(n)
	w.u32(0)
	w.u32(n)
	w.b = wire.AppendUTF16(w.b, s)
	w.b = append(w.b, 0, 0)
	for len(w.b)%4 != 0 {
		w.b = append(w.b, 0)
	}
}

// shareEnumAll answers NetrShareEnumAll (MS-SRVS §3.1.4.8) at level 1.
func (p *pipe) shareEnumAll(stub []byte) []byte {
	// [in, string, unique] ServerName; then the level of InfoStruct.
	if len(stub) < 8 {
		return nil
	}
	off := 4
	if le.Uint32(stub) != 0 {
		if len(stub) < 16 {
			return nil
		}
		actual := int(le.Uint32(stub[12:]))
		off = 16 + 2*actual
		off = (off + 3) &^ 3
	}
	if off+4 > len(stub) {
		return nil
	}
	level := le.Uint32(stub[off:])
	w := &ndr{}
	if level != 1 {
		w.u32(level)
		w.u32(level)
		w.u32(0)
		w.u32(0)
		w.u32(0)
		w.u32(124) // ERROR_INVALID_LEVEL
		return w.b
	}
	ctx, cancel := context.WithTimeout(p.c.ctx, time_30s)
	shares, err := p.c.s.cfg.Backend.Shares(ctx, p.s.account)
	cancel()
	if err != nil {
		shares = nil
	}
	sort.Strings(shares)
	type entry struct {
		name, remark string
		typ          uint32
	}
	var list []entry
	for _, s := range shares {
		list = append(list, entry{s, "", 0}) // STYPE_DISKTREE
	}
	list = append(list, entry{"IPC$", "IPC Service", 0x80000003}) // STYPE_IPC | STYPE_SPECIAL
	w.u32(1)
	w.u32(1)
	w.ptr()
	w.u32(uint32(len(list)))
	w.ptr()
	w.u32(uint32(len(list)))
	for _, e := range list {
		w.ptr()
		w.u32(e.typ)
		w.ptr()
	}
	for _, e := range list {
		w.str(e.name)
		w.str(e.remark)
	}
	w.u32(uint32(len(list)))
	w.ptr()
	w.u32(0)
	w.u32(0) // WERROR_OK
	return w.b
}

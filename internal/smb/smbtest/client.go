// Package smbtest is a small SMB 2.1 client for tests: NTLMv2 logon, tree
// connect and the file commands, one request at a time, returning NT
// status codes so tests can assert them. It is not a general client.
package smbtest

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/lazuli-storage/lazuli/internal/smb/crypt"
	"github.com/lazuli-storage/lazuli/internal/smb/wire"
)

var le = binary.LittleEndian

// Status codes tests compare with.
const (
	StatusSuccess          uint32 = 0
	StatusPending          uint32 = 0x00000103
	StatusMoreProcessing   uint32 = 0xC0000016
	StatusSharingViolation uint32 = 0xC0000043
	StatusDeletePending    uint32 = 0xC0000056
	StatusFileLockConflict uint32 = 0xC0000054
	StatusLockNotGranted   uint32 = 0xC0000055
	StatusFileClosed       uint32 = 0xC0000128
	StatusNotFound         uint32 = 0xC0000034
	StatusLogonFailure     uint32 = 0xC000006D
	StatusCancelled        uint32 = 0xC0000120
	StatusAccessDenied     uint32 = 0xC0000022
)

// Client is one SMB connection with one session and one tree.
type Client struct {
	conn    net.Conn
	mid     uint64
	sid     uint64
	tid     uint32
	dialect uint16
	// sessionKey is the last logon's NTLM session key; signKey the key
	// requests are signed with (SMB 3: AES-CMAC) once set.
	sessionKey []byte
	signKey    []byte
}

// Dial connects, negotiates SMB 2.1 and logs on.
func Dial(addr, user, password string) (*Client, error) {
	return DialDialect(addr, user, password, wire.Dialect210)
}

// DialDialect connects, negotiates dialect (2.0.2 to 3.0.2: no negotiate
// contexts) and logs on, signing nothing.
func DialDialect(addr, user, password string, dialect uint16) (*Client, error) {
	return DialGUID(addr, user, password, dialect, [16]byte{})
}

// DialGUID is DialDialect with a client GUID, which the channels of one
// client share (Connect, Bind).
func DialGUID(addr, user, password string, dialect uint16, guid [16]byte) (*Client, error) {
	c, err := Connect(addr, dialect, guid)
	if err != nil {
		return nil, err
	}
	if st := c.logon(user, password); st != 0 {
		c.Close()
		return nil, StatusError(st)
	}
	return c, nil
}

// Connect connects and negotiates dialect as client guid, offering
// leases and directory leases, with no logon.
func Connect(addr string, dialect uint16, guid [16]byte) (*Client, error) {
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	c := &Client{conn: nc, dialect: dialect}
	body := make([]byte, 36)
	le.PutUint16(body, 36)
	le.PutUint16(body[2:], 1)
	le.PutUint16(body[4:], 1)
	le.PutUint32(body[8:], wire.CapLeasing|wire.CapDirectoryLeasing)
	copy(body[12:28], guid[:])
	body = le.AppendUint16(body, dialect)
	if h, _, err := c.Do(wire.Negotiate, body); err != nil || h.Status != 0 {
		nc.Close()
		return nil, fmt.Errorf("negotiate: %v %#x", err, h.Status)
	}
	return c, nil
}

// SessionID and TreeID name the client's session and tree connect.
func (c *Client) SessionID() uint64 { return c.sid }
func (c *Client) TreeID() uint32    { return c.tid }

// SigningKey is the session's SMB 3 signing key (MS-SMB2 3.3.5.5.3),
// which binds another channel to the session.
func (c *Client) SigningKey() []byte { return smb3SigningKey(c.sessionKey) }

// Unsigned makes the client send its requests unsigned.
func (c *Client) Unsigned() { c.signKey = nil }

func smb3SigningKey(sessionKey []byte) []byte {
	if sessionKey == nil {
		return nil
	}
	return crypt.KDF(sessionKey, []byte("SMB2AESCMAC\x00"), []byte("SmbSign\x00"))
}

// Bind binds this connection, negotiated with Connect, to session sid as
// a new channel (SESSION_SETUP with SMB2_SESSION_FLAG_BINDING, MS-SMB2
// 3.2.4.2.3), logging on as user; the requests are signed with key, or
// not at all when key is nil. It returns the final status; on success the
// client uses the session and tree tid, signing with the channel's key.
func (c *Client) Bind(sid uint64, tid uint32, key []byte, user, password string) uint32 {
	c.sid, c.signKey = sid, key
	st, sessionKey := c.ntlm(wire.SessionSetupBinding, user, password)
	c.signKey = nil
	if st != StatusSuccess {
		c.sid = 0
		return st
	}
	c.tid, c.signKey = tid, smb3SigningKey(sessionKey)
	return st
}

// Reauthenticate runs SESSION_SETUP again on the client's session, as
// user, or anonymously when user is "", and returns the final status.
func (c *Client) Reauthenticate(user, password string) uint32 {
	return c.logon(user, password)
}

// logon runs NTLM in SESSION_SETUP (on the client's session once it has
// one) and returns the final status (an I/O error reads as 0xFFFFFFFF).
func (c *Client) logon(user, password string) uint32 {
	st, key := c.ntlm(0, user, password)
	if st == StatusSuccess && key != nil {
		c.sessionKey = key
	}
	return st
}

// ntlm runs NTLM in SESSION_SETUP requests carrying flags, and returns the
// final status and the authentication's session key.
func (c *Client) ntlm(flags uint8, user, password string) (uint32, []byte) {
	neg := append([]byte("NTLMSSP\x00"), 1, 0, 0, 0)
	neg = le.AppendUint32(neg, 0x00088207) // unicode, request target, NTLM, always sign, ESS
	neg = append(neg, make([]byte, 16)...)
	h, resp, err := c.Do(wire.SessionSetup, sessionSetup(flags, neg))
	if err != nil {
		return 0xFFFFFFFF, nil
	}
	if h.Status != StatusMoreProcessing {
		return h.Status, nil
	}
	c.sid = h.SessionID
	chal := resp[wire.HeaderSize+8:]
	if len(chal) < 48 {
		return 0xFFFFFFFF, nil
	}
	// Anonymous (MS-NLMP 3.1.5.1.2): no user, no NT response, a
	// one-byte LM response, and no session key.
	auth, key := authMessage([]byte{0}, nil, "", "", 0x00088a05), []byte(nil)
	if user != "" {
		auth, key = authenticate(chal, user, password)
	}
	h, _, err = c.Do(wire.SessionSetup, sessionSetup(flags, auth))
	if err != nil {
		return 0xFFFFFFFF, nil
	}
	return h.Status, key
}

// authMessage builds an AUTHENTICATE_MESSAGE (MS-NLMP 2.2.1.3) from its
// responses, names and negotiate flags; the workstation is TEST and no
// session key is exchanged.
func authMessage(lm, nt []byte, domain, user string, flags uint32) []byte {
	fields := [][]byte{lm, nt, wire.AppendUTF16(nil, domain), wire.AppendUTF16(nil, user), wire.AppendUTF16(nil, "TEST"), nil}
	m := append([]byte("NTLMSSP\x00"), 3, 0, 0, 0)
	off := 64
	for _, f := range fields {
		m = le.AppendUint16(m, uint16(len(f)))
		m = le.AppendUint16(m, uint16(len(f)))
		m = le.AppendUint32(m, uint32(off))
		off += len(f)
	}
	m = le.AppendUint32(m, flags)
	for _, f := range fields {
		m = append(m, f...)
	}
	return m
}

// NegotiateCaps connects, negotiates dialect offering the client
// capabilities caps and returns the capabilities the server answers with.
func NegotiateCaps(addr string, dialect uint16, caps uint32) (uint32, error) {
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return 0, err
	}
	c := &Client{conn: nc}
	defer c.Close()
	body := make([]byte, 36)
	le.PutUint16(body, 36)
	le.PutUint16(body[2:], 1)
	le.PutUint16(body[4:], 1)
	le.PutUint32(body[8:], caps)
	body = le.AppendUint16(body, dialect)
	h, resp, err := c.Do(wire.Negotiate, body)
	if err != nil || h.Status != 0 || len(resp) < wire.HeaderSize+28 {
		return 0, fmt.Errorf("negotiate: %v %#x", err, h.Status)
	}
	return le.Uint32(resp[wire.HeaderSize+24:]), nil
}

// StatusError is an NT status a request ended with.
type StatusError uint32

func (e StatusError) Error() string { return fmt.Sprintf("NT status %#08x", uint32(e)) }

func sessionSetup(flags uint8, tok []byte) []byte {
	b := make([]byte, 24)
	le.PutUint16(b, 25)
	b[2] = flags
	le.PutUint16(b[12:], wire.HeaderSize+24)
	le.PutUint16(b[14:], uint16(len(tok)))
	return append(b, tok...)
}

func hmacMD5(key []byte, parts ...[]byte) []byte {
	m := hmac.New(md5.New, key)
	for _, p := range parts {
		m.Write(p)
	}
	return m.Sum(nil)
}

// authenticate builds an NTLMv2 AUTHENTICATE_MESSAGE for a challenge and
// returns it with the session key it gives (no key exchange: the
// session base key, MS-NLMP 3.3.2).
func authenticate(chal []byte, user, password string) ([]byte, []byte) {
	serverChallenge := chal[24:32]
	infoLen, infoOff := int(le.Uint16(chal[40:])), int(le.Uint32(chal[44:]))
	var info []byte
	if infoOff+infoLen <= len(chal) {
		info = chal[infoOff : infoOff+infoLen]
	}
	domain := "AZURE"
	h := crypt.MD4(wire.AppendUTF16(nil, password))
	owf := hmacMD5(h[:], wire.AppendUTF16(nil, strings.ToUpper(user)+domain))
	temp := []byte{1, 1, 0, 0, 0, 0, 0, 0}
	temp = le.AppendUint64(temp, uint64(time.Now().UnixNano()/100+116444736000000000))
	cc := make([]byte, 8)
	rand.Read(cc)
	temp = append(temp, cc...)
	temp = append(temp, 0, 0, 0, 0)
	temp = append(temp, info...)
	temp = append(temp, 0, 0, 0, 0)
	proof := hmacMD5(owf, serverChallenge, temp)
	nt := append(append([]byte(nil), proof...), temp...)
	return authMessage(make([]byte, 24), nt, domain, user, 0x00088205), hmacMD5(owf, proof)
}

// Do sends one request and returns the final response (waiting past
// STATUS_PENDING interim responses).
func (c *Client) Do(cmd uint16, body []byte) (wire.Header, []byte, error) {
	mid, err := c.Send(cmd, body)
	if err != nil {
		return wire.Header{}, nil, err
	}
	return c.Wait(mid)
}

// Wait reads responses until the final one of message mid.
func (c *Client) Wait(mid uint64) (wire.Header, []byte, error) {
	for {
		h, b, err := c.Recv()
		if err != nil {
			return h, nil, err
		}
		if h.MessageID == mid && !(h.Status == StatusPending && h.Flags&wire.FlagAsync != 0) {
			return h, b, nil
		}
	}
}

// Send sends a request and returns its message id; the credit charge
// covers the bytes a READ asks for or a WRITE carries.
func (c *Client) Send(cmd uint16, body []byte) (uint64, error) {
	n := 0
	switch {
	case cmd == wire.Write:
		n = len(body) - 48
	case cmd == wire.Read && len(body) >= 8:
		n = int(le.Uint32(body[4:]))
	}
	return c.SendCharged(cmd, body, uint16(max(1, (n+65535)/65536)))
}

// SendCharged sends a request with the given credit charge.
func (c *Client) SendCharged(cmd uint16, body []byte, charge uint16) (uint64, error) {
	// Ask for at least what the request uses, as clients do, so that
	// large READs and WRITEs in a row do not run out of credits.
	h := wire.Header{Command: cmd, MessageID: c.mid, SessionID: c.sid, TreeID: c.tid, Credits: max(64, charge), CreditCharge: charge}
	if c.signKey != nil {
		h.Flags |= wire.FlagSigned
	}
	c.mid += uint64(max(charge, 1))
	msg := h.Append(nil)
	msg = append(msg, body...)
	if c.signKey != nil {
		// AES-CMAC over the message with a zero signature (MS-SMB2
		// 3.1.4.1).
		m, _ := crypt.NewCMAC(c.signKey)
		sig := m.Sum(msg)
		copy(msg[48:64], sig[:])
	}
	n := len(msg)
	c.conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
	_, err := c.conn.Write(append([]byte{0, byte(n >> 16), byte(n >> 8), byte(n)}, msg...))
	return h.MessageID, err
}

// Recv reads one response.
func (c *Client) Recv() (wire.Header, []byte, error) {
	c.conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	var hdr [4]byte
	if _, err := io.ReadFull(c.conn, hdr[:]); err != nil {
		return wire.Header{}, nil, err
	}
	b := make([]byte, int(hdr[1])<<16|int(hdr[2])<<8|int(hdr[3]))
	if _, err := io.ReadFull(c.conn, b); err != nil {
		return wire.Header{}, nil, err
	}
	h, err := wire.DecodeHeader(b)
	return h, b, err
}

// Close ends the connection.
func (c *Client) Close() error { return c.conn.Close() }

// TreeConnect connects to a share.
func (c *Client) TreeConnect(share string) error {
	path := wire.AppendUTF16(nil, `\\127.0.0.1\`+share)
	b := make([]byte, 8)
	le.PutUint16(b, 9)
	le.PutUint16(b[4:], wire.HeaderSize+8)
	le.PutUint16(b[6:], uint16(len(path)))
	h, _, err := c.Do(wire.TreeConnect, append(b, path...))
	if err != nil {
		return err
	}
	if h.Status != 0 {
		return StatusError(h.Status)
	}
	c.tid = h.TreeID
	return nil
}

// CreateBody is an SMB2 CREATE request body for path ('/' or '\\'
// separated), with no create contexts.
func CreateBody(path string, access, share, disposition, options uint32) []byte {
	name := wire.AppendUTF16(nil, strings.ReplaceAll(path, "/", `\`))
	b := make([]byte, 56)
	le.PutUint16(b, 57)
	le.PutUint32(b[4:], 2) // impersonation
	le.PutUint32(b[24:], access)
	le.PutUint32(b[32:], share)
	le.PutUint32(b[36:], disposition)
	le.PutUint32(b[40:], options)
	le.PutUint16(b[44:], wire.HeaderSize+56)
	le.PutUint16(b[46:], uint16(len(name)))
	b = append(b, name...)
	if len(name) == 0 {
		b = append(b, 0)
	}
	return b
}

// Create opens a file; it returns the status and, on success, the FileID.
func (c *Client) Create(path string, access, share, disposition, options uint32) (wire.FileID, uint32) {
	h, resp, err := c.Do(wire.Create, CreateBody(path, access, share, disposition, options))
	if err != nil {
		return wire.FileID{}, 0xFFFFFFFF
	}
	if h.Status != 0 {
		return wire.FileID{}, h.Status
	}
	r := resp[wire.HeaderSize:]
	return wire.FileID{Persistent: le.Uint64(r[64:]), Volatile: le.Uint64(r[72:])}, 0
}

func fileIDBody(size uint16, n int, fid wire.FileID, at int) []byte {
	b := make([]byte, n)
	le.PutUint16(b, size)
	le.PutUint64(b[at:], fid.Persistent)
	le.PutUint64(b[at+8:], fid.Volatile)
	return b
}

func (c *Client) status(cmd uint16, body []byte) uint32 {
	h, _, err := c.Do(cmd, body)
	if err != nil {
		return 0xFFFFFFFF
	}
	return h.Status
}

// CloseFile closes an open.
func (c *Client) CloseFile(fid wire.FileID) uint32 {
	return c.status(wire.Close, fileIDBody(24, 24, fid, 8))
}

// Write writes data at off.
func (c *Client) Write(fid wire.FileID, off uint64, data []byte) uint32 {
	return c.status(wire.Write, WriteBody(fid, off, data))
}

// WriteBody is the body of a WRITE of data at off, for Send.
func WriteBody(fid wire.FileID, off uint64, data []byte) []byte {
	b := fileIDBody(49, 48, fid, 16)
	le.PutUint16(b[2:], wire.HeaderSize+48)
	le.PutUint32(b[4:], uint32(len(data)))
	le.PutUint64(b[8:], off)
	return append(b, data...)
}

// Read reads up to n bytes at off.
func (c *Client) Read(fid wire.FileID, off uint64, n uint32) ([]byte, uint32) {
	b := fileIDBody(49, 49, fid, 16)
	le.PutUint32(b[4:], n)
	le.PutUint64(b[8:], off)
	h, resp, err := c.Do(wire.Read, b)
	if err != nil {
		return nil, 0xFFFFFFFF
	}
	if h.Status != 0 {
		return nil, h.Status
	}
	r := resp[wire.HeaderSize:]
	off2, l := int(r[2]), int(le.Uint32(r[4:]))
	return resp[off2 : off2+l], 0
}

// Lock sends one lock element (flags as in MS-SMB2 LOCK) and waits for
// the final answer.
func (c *Client) Lock(fid wire.FileID, off, n uint64, flags uint32) uint32 {
	b := fileIDBody(48, 24, fid, 8)
	le.PutUint16(b[2:], 1)
	b = le.AppendUint64(b, off)
	b = le.AppendUint64(b, n)
	b = le.AppendUint32(b, flags)
	b = le.AppendUint32(b, 0)
	return c.status(wire.Lock, b)
}

// SetDisposition sets or clears delete-pending through fid.
func (c *Client) SetDisposition(fid wire.FileID, pending bool) uint32 {
	b := fileIDBody(33, 32, fid, 16)
	b[2], b[3] = wire.InfoFile, 13
	le.PutUint32(b[4:], 1)
	le.PutUint16(b[8:], wire.HeaderSize+32)
	v := byte(0)
	if pending {
		v = 1
	}
	return c.status(wire.SetInfo, append(b, v))
}

// SendRaw sends a request with an explicit message id (and async id when
// nonzero), without consuming a credit: for CANCEL.
func (c *Client) SendRaw(cmd uint16, body []byte, mid, asyncID uint64) error {
	h := wire.Header{Command: cmd, MessageID: mid, SessionID: c.sid, TreeID: c.tid}
	if asyncID != 0 {
		h.Flags |= wire.FlagAsync
		h.AsyncID = asyncID
	}
	msg := append(h.Append(nil), body...)
	n := len(msg)
	_, err := c.conn.Write(append([]byte{0, byte(n >> 16), byte(n >> 8), byte(n)}, msg...))
	return err
}

// Compound sends bodies (commands cmds) as one compounded frame: with
// related, every request after the first is related to the one before
// (MS-SMB2 3.2.4.1.4). It returns each response's header and message, in
// order, whether the server answered in one frame or several.
func (c *Client) Compound(related bool, cmds []uint16, bodies [][]byte) ([]wire.Header, [][]byte, error) {
	flags := make([]bool, len(cmds))
	for i := 1; i < len(cmds); i++ {
		flags[i] = related
	}
	return c.CompoundFlags(flags, cmds, bodies)
}

// CompoundFlags is Compound with the related flag of each request given,
// the first one's too (which servers must refuse).
func (c *Client) CompoundFlags(related []bool, cmds []uint16, bodies [][]byte) ([]wire.Header, [][]byte, error) {
	var frame []byte
	var mids []uint64
	for i, cmd := range cmds {
		h := wire.Header{Command: cmd, MessageID: c.mid, SessionID: c.sid, TreeID: c.tid, Credits: 64, CreditCharge: 1}
		c.mid++
		mids = append(mids, h.MessageID)
		if related[i] {
			h.Flags |= wire.FlagRelated
		}
		msg := append(h.Append(nil), bodies[i]...)
		if i < len(cmds)-1 {
			for len(msg)%8 != 0 {
				msg = append(msg, 0)
			}
			le.PutUint32(msg[20:], uint32(len(msg))) // NextCommand
		}
		frame = append(frame, msg...)
	}
	n := len(frame)
	c.conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.conn.Write(append([]byte{0, byte(n >> 16), byte(n >> 8), byte(n)}, frame...)); err != nil {
		return nil, nil, err
	}
	byMid := map[uint64]int{}
	for i, m := range mids {
		byMid[m] = i
	}
	hs, msgs := make([]wire.Header, len(cmds)), make([][]byte, len(cmds))
	for got := 0; got < len(cmds); {
		_, b, err := c.Recv()
		if err != nil {
			return nil, nil, err
		}
		for len(b) > 0 {
			h, err := wire.DecodeHeader(b)
			if err != nil {
				return nil, nil, err
			}
			m := b
			if h.NextCommand != 0 && int(h.NextCommand) <= len(b) {
				m, b = b[:h.NextCommand], b[h.NextCommand:]
			} else {
				b = nil
			}
			if h.Status == StatusPending && h.Flags&wire.FlagAsync != 0 {
				continue
			}
			if i, ok := byMid[h.MessageID]; ok && msgs[i] == nil {
				hs[i], msgs[i] = h, m
				got++
			}
		}
	}
	return hs, msgs, nil
}

// SetInfo sends a SET_INFO of info type typ and class with buf.
func (c *Client) SetInfo(fid wire.FileID, typ, class uint8, addl uint32, buf []byte) uint32 {
	b := fileIDBody(33, 32, fid, 16)
	b[2], b[3] = typ, class
	le.PutUint32(b[4:], uint32(len(buf)))
	le.PutUint16(b[8:], wire.HeaderSize+32)
	le.PutUint32(b[12:], addl)
	return c.status(wire.SetInfo, append(b, buf...))
}

// QueryInfo sends a QUERY_INFO of info type typ and class and returns
// the output buffer.
func (c *Client) QueryInfo(fid wire.FileID, typ, class uint8, addl, max uint32) ([]byte, uint32) {
	b := fileIDBody(41, 41, fid, 24)
	b[2], b[3] = typ, class
	le.PutUint32(b[4:], max)
	le.PutUint32(b[16:], addl)
	h, resp, err := c.Do(wire.QueryInfo, b)
	if err != nil {
		return nil, 0xFFFFFFFF
	}
	if h.Status != 0 {
		return nil, h.Status
	}
	r := resp[wire.HeaderSize:]
	off, n := int(le.Uint16(r[2:])), int(le.Uint32(r[4:]))
	if off+n > len(resp) {
		return nil, 0xFFFFFFFF
	}
	return resp[off : off+n], 0
}

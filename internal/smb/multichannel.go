package smb

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net"

	"github.com/lazuli-storage/lazuli/internal/smb/crypt"
	"github.com/lazuli-storage/lazuli/internal/smb/ntlm"
	"github.com/lazuli-storage/lazuli/internal/smb/wire"
)

// Multichannel (MS-SMB2 3.3.5.5, "session binding"): a client of SMB 3
// opens more connections with the same client GUID and dialect and binds
// its session to each with a SESSION_SETUP that carries
// SMB2_SESSION_FLAG_BINDING, signed with the session's signing key. The
// session, its tree connects and its opens are then reachable on every
// channel; each channel signs with a key of its own, derived from the
// binding's authentication (and, on 3.1.1, from the pre-authentication
// hash of the binding exchange). Losing a channel loses nothing while
// another remains; LOGOFF on any channel ends the session.

// maxChannels bounds the channels of one session (Windows Server's limit;
// smbtorture smb2.multichannel.generic.num_channels).
const maxChannels = 32

// keys are the signing keys of one channel of a session.
type keys struct {
	signKey []byte
	cmac    *crypt.CMAC
	gmac    cipher.AEAD
}

// signingKeys derives the signing keys of a channel on c from the session
// key of the authentication that set it up (MS-SMB2 3.3.5.5.3); preauth
// is that exchange's pre-authentication hash (3.1.1).
func (c *conn) signingKeys(sessionKey []byte, preauth [64]byte) (keys, error) {
	k := make([]byte, 16)
	copy(k, sessionKey)
	var out keys
	if c.dialect == wire.Dialect311 {
		out.signKey = crypt.KDF(k, []byte("SMBSigningKey\x00"), preauth[:])
	} else {
		out.signKey = crypt.KDF(k, []byte("SMB2AESCMAC\x00"), []byte("SmbSign\x00"))
	}
	var err error
	if out.cmac, err = crypt.NewCMAC(out.signKey); err != nil {
		return keys{}, err
	}
	if c.signAlg == 2 {
		b, _ := aes.NewCipher(out.signKey)
		if out.gmac, err = cipher.NewGCM(b); err != nil {
			return keys{}, err
		}
	}
	return out, nil
}

// sign computes a message's signature (MS-SMB2 3.1.4.1) under the
// dialect and signing algorithm of a connection.
func (k *keys) sign(dialect, alg uint16, m []byte) [16]byte {
	var sig [16]byte
	switch {
	case dialect < wire.Dialect300 || alg == 0:
		// SMB 2.x, or 3.1.1 with HMAC-SHA256 negotiated in
		// SIGNING_CAPABILITIES.
		h := hmac.New(sha256.New, k.signKey)
		h.Write(m)
		copy(sig[:], h.Sum(nil))
	case k.gmac != nil:
		var nonce [12]byte
		copy(nonce[:8], m[24:32])
		if le.Uint32(m[16:])&wire.FlagServerToRedir != 0 {
			nonce[8] |= 1
		}
		if le.Uint16(m[12:]) == wire.Cancel {
			nonce[8] |= 2
		}
		copy(sig[:], k.gmac.Seal(nil, nonce[:], nil, m))
	default:
		sig = k.cmac.Sum(m)
	}
	return sig
}

// verify checks a signed message's signature.
func (k *keys) verify(dialect, alg uint16, m []byte) bool {
	if k.signKey == nil || len(m) < wire.HeaderSize {
		return false
	}
	var got [16]byte
	copy(got[:], m[48:64])
	clear(m[48:64])
	want := k.sign(dialect, alg, m)
	copy(m[48:64], got[:])
	return subtle.ConstantTimeCompare(got[:], want[:]) == 1
}

// keysOf returns the keys signing s's messages on c: those of the channel
// when c was bound to s, else the session's own.
func (c *conn) keysOf(s *session) *keys {
	c.mu.Lock()
	k := c.chans[s.id]
	c.mu.Unlock()
	if k != nil {
		return k
	}
	return &s.keys
}

// binding is a session binding in progress on a connection.
type binding struct {
	auth    *ntlm.Auth
	preauth [64]byte
}

// registerSession enters a new session in the server's table, which
// binding looks sessions up in; false when the id is taken.
func (s *Server) registerSession(ss *session) bool {
	s.smu.Lock()
	defer s.smu.Unlock()
	if s.sessions == nil {
		s.sessions = map[uint64]*session{}
	}
	if s.sessions[ss.id] != nil {
		return false
	}
	s.sessions[ss.id] = ss
	return true
}

func (s *Server) unregisterSession(ss *session) {
	s.smu.Lock()
	defer s.smu.Unlock()
	if s.sessions[ss.id] == ss {
		delete(s.sessions, ss.id)
	}
}

func (s *Server) lookupSession(id uint64) *session {
	s.smu.Lock()
	defer s.smu.Unlock()
	return s.sessions[id]
}

// bind handles a SESSION_SETUP with SMB2_SESSION_FLAG_BINDING, checking
// what MS-SMB2 3.3.5.5 asks in its order.
func (c *conn) bind(r *request, req *wire.SessionSetupRequest) *response {
	s := c.s.lookupSession(r.hdr.SessionID)
	if s != nil && !s.valid.Load() {
		s = nil
	}
	signed := r.hdr.Flags&wire.FlagSigned != 0
	// A request signed with the session's key is answered signed with
	// it, refusals too, which the client checks (MS-SMB2 3.2.5.1.3);
	// one that is not learns nothing signed.
	trusted := s != nil && signed && s.keys.verify(s.dialect, s.signAlg, r.msg)
	fail := func(status uint32) *response {
		c.mu.Lock()
		delete(c.binds, r.hdr.SessionID)
		c.mu.Unlock()
		out := c.errorResponse(r, status)
		if trusted {
			out.sign, out.sessionKeys = s, true
		}
		return out
	}
	// The order of the checks, and that a channel of another client GUID
	// may bind, are Windows' (Samba's smb2.session.bind_negative_*
	// subtests, written against Windows, pin each status). AES-GMAC
	// signs with nonces a channel of another algorithm cannot share: a
	// GMAC session meets such a channel before anything else, a GMAC
	// channel of another session's algorithm after the dialect floor.
	gmacSession, gmacChannel := s != nil && s.signAlg == 2, c.signAlg == 2
	switch {
	case gmacSession && !gmacChannel:
		return fail(statusRequestOutOfSequence)
	case c.dialect < wire.Dialect300:
		return fail(statusRequestNotAccepted)
	case s == nil:
		return fail(statusUserSessionDeleted)
	case gmacChannel && !gmacSession:
		return fail(statusNotSupported)
	case s.dialect != c.dialect:
		return fail(statusInvalidParameter)
	case !signed:
		return fail(statusInvalidParameter)
	case c.dialect == wire.Dialect311 && s.cipherID != c.cipherID:
		return fail(statusInvalidParameter)
	case s.anonymous.Load():
		return fail(statusNotSupported)
	case !trusted:
		return fail(statusAccessDenied)
	}
	c.mu.Lock()
	bound := c.sessions[s.id] != nil
	full := len(c.sessions) >= c.s.cfg.MaxSessionsPerConn
	b := c.binds[s.id]
	if b == nil && !bound && !full {
		b = &binding{auth: c.s.auth.NewAuth(), preauth: c.preauth}
		if c.binds == nil {
			c.binds = map[uint64]*binding{}
		}
		c.binds[s.id] = b
	}
	c.mu.Unlock()
	switch {
	case bound:
		return fail(statusAccessDenied)
	case full:
		return fail(statusInsufficientResources)
	}
	s.chmu.Lock()
	n := len(s.channels)
	s.chmu.Unlock()
	if n >= maxChannels {
		return fail(statusInsufficientResources)
	}
	if c.dialect == wire.Dialect311 {
		b.preauth = sha512Chain(b.preauth, r.msg)
	}
	token, done, err := b.auth.Step(req.SecurityBuffer)
	if err != nil {
		status := statusLogonFailure
		if errors.Is(err, ntlm.ErrMalformed) {
			status = statusInvalidParameter
		}
		c.s.cfg.Log.Info("smb binding refused", "client", c.ip, "err", err)
		return fail(status)
	}
	if !done {
		out := c.newResponse(r, statusMoreProcessingRequired, wire.AppendSessionSetupResponse(nil, 0, token))
		// Signed with the session's key: the channel has none yet.
		out.sign, out.sessionKeys = s, true
		if c.dialect == wire.Dialect311 {
			out.post = func(m []byte) { b.preauth = sha512Chain(b.preauth, m) }
		}
		return out
	}
	if account, _, _ := c.s.account(b.auth.User); b.auth.Anonymous || account != s.account {
		// A channel acts for the session's user only.
		return fail(statusAccessDenied)
	}
	k, err := c.signingKeys(b.auth.SessionKey(), b.preauth)
	if err != nil {
		return fail(statusInternalError)
	}
	s.chmu.Lock()
	if len(s.channels) == 0 || len(s.channels) >= maxChannels {
		// Logged off meanwhile, or other bindings filled it.
		s.chmu.Unlock()
		return fail(statusUserSessionDeleted)
	}
	s.channels = append(s.channels, c)
	s.chmu.Unlock()
	c.mu.Lock()
	delete(c.binds, s.id)
	if c.chans == nil {
		c.chans = map[uint64]*keys{}
	}
	c.chans[s.id] = &k
	c.sessions[s.id] = s
	c.mu.Unlock()
	c.loggedOn()
	out := c.ok(r, wire.AppendSessionSetupResponse(nil, 0, token))
	out.sign = s
	return out
}

// boundLater reports whether c is a channel bound to s after its first.
func (c *conn) boundLater(s *session) bool {
	s.chmu.Lock()
	defer s.chmu.Unlock()
	return len(s.channels) > 0 && s.channels[0] != c
}

// dropSession removes s from every connection it is bound to and from the
// server's table; it reports whether c held it.
func (c *conn) dropSession(s *session) bool {
	s.chmu.Lock()
	chans := s.channels
	s.channels = nil
	s.chmu.Unlock()
	held := false
	for _, cc := range append([]*conn{c}, chans...) {
		cc.mu.Lock()
		if cc.sessions[s.id] == s {
			delete(cc.sessions, s.id)
			delete(cc.chans, s.id)
			held = held || cc == c
		}
		cc.mu.Unlock()
	}
	c.s.unregisterSession(s)
	return held
}

// leaveSession detaches c, which is ending, from s: it reports whether s
// lives on through another channel, which then carries the breaks of the
// opens that were on c.
func (c *conn) leaveSession(s *session) bool {
	s.chmu.Lock()
	rest := make([]*conn, 0, len(s.channels))
	for _, cc := range s.channels {
		if cc != c {
			rest = append(rest, cc)
		}
	}
	s.channels = rest
	s.chmu.Unlock()
	if len(rest) == 0 {
		c.s.unregisterSession(s)
		return false
	}
	s.mu.Lock()
	for _, o := range s.opens {
		o.mu.Lock()
		if o.conn == c {
			o.conn = rest[0]
		}
		o.mu.Unlock()
	}
	s.mu.Unlock()
	return true
}

// networkInterfaces answers FSCTL_QUERY_NETWORK_INTERFACE_INFO (MS-SMB2
// 3.3.5.15.11) with the address the client reached the server on: the
// one address known to be reachable from it.
func (c *conn) networkInterfaces(r *request, req *wire.IoctlRequest) *response {
	if req.FileID != (wire.FileID{Persistent: ^uint64(0), Volatile: ^uint64(0)}) {
		return c.errorResponse(r, statusInvalidParameter)
	}
	a, ok := c.nc.LocalAddr().(*net.TCPAddr)
	if !ok {
		return c.errorResponse(r, statusNotSupported)
	}
	const entryLen = 152
	if req.MaxOutputResponse < entryLen {
		return c.errorResponse(r, statusBufferTooSmall)
	}
	index := uint32(1)
	if ifs, err := net.Interfaces(); err == nil {
		for _, ifc := range ifs {
			addrs, _ := ifc.Addrs()
			for _, ad := range addrs {
				if n, ok := ad.(*net.IPNet); ok && n.IP.Equal(a.IP) {
					index = uint32(ifc.Index)
				}
			}
		}
	}
	out := le.AppendUint32(nil, 0) // Next: the one entry is the last
	out = le.AppendUint32(out, index)
	out = le.AppendUint32(out, 0) // Capability: neither RSS nor RDMA
	out = le.AppendUint32(out, 0)
	out = le.AppendUint64(out, 10_000_000_000) // LinkSpeed, bits per second
	sa := make([]byte, 128)
	if ip4 := a.IP.To4(); ip4 != nil {
		le.PutUint16(sa, 2) // AF_INET; port 0
		copy(sa[4:], ip4)
	} else {
		le.PutUint16(sa, 0x17) // AF_INET6; port, flow info 0
		copy(sa[8:], a.IP.To16())
	}
	out = append(out, sa...)
	return c.ok(r, wire.AppendIoctlResponse(nil, req.CtlCode, req.FileID, out))
}

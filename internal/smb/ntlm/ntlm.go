// Package ntlm is the server side of NTLMv2 authentication (MS-NLMP)
// carried in SPNEGO (RFC 4178, MS-SPNG), as SMB 2/3 session setup uses
// it. It accepts only NTLMv2 responses (no NTLMv1, no LM), refuses
// anonymous and guest logons, checks the AUTHENTICATE message's MIC when
// the client sends one and exchanges SPNEGO mechListMICs.
package ntlm

import (
	"bytes"
	"crypto/hmac"
	"crypto/md5"
	"crypto/rand"
	"crypto/rc4"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/lazuli-storage/lazuli/internal/smb/crypt"
)

// Errors of Step.
var (
	// ErrMalformed: the token is not a well-formed SPNEGO/NTLM message.
	ErrMalformed = errors.New("ntlm: malformed token")
	// ErrLogonFailure: unknown user or wrong password.
	ErrLogonFailure = errors.New("ntlm: logon failure")
	// ErrAnonymous: an anonymous or guest logon, refused unless the
	// Auth allows anonymous logons.
	ErrAnonymous = errors.New("ntlm: anonymous logon refused")
)

var le = binary.LittleEndian

// Negotiate flags (MS-NLMP §2.2.2.5).
const (
	flagUnicode     uint32 = 0x00000001
	flagRequestTgt  uint32 = 0x00000004
	flagSign        uint32 = 0x00000010
	flagSeal        uint32 = 0x00000020
	flagNTLM        uint32 = 0x00000200
	flagAnonymous   uint32 = 0x00000800
	flagAlwaysSign  uint32 = 0x00008000
	flagTargetSrv   uint32 = 0x00020000
	flagESS         uint32 = 0x00080000
	flagTargetInfo  uint32 = 0x00800000
	flagVersion     uint32 = 0x02000000
	flag128         uint32 = 0x20000000
	flagKeyExch     uint32 = 0x40000000
	flag56          uint32 = 0x80000000
	serverSupported        = flagUnicode | flagRequestTgt | flagSign | flagSeal | flagNTLM | flagAlwaysSign |
		flagESS | flagTargetInfo | flagVersion | flag128 | flagKeyExch | flag56
)

var signature = []byte("NTLMSSP\x00")

// Passwords returns the passwords user may log on with, or false when
// the user is unknown. The lookup is the caller's (e.g. storage account
// name to account keys).
type Passwords func(user string) ([]string, bool)

// Server holds what every authentication of one server shares.
type Server struct {
	Lookup Passwords
	// Target is the NetBIOS name announced in the challenge.
	Target string
	Now    func() time.Time
}

// Auth is one authentication in progress; Step is called with each
// token the client sends until it reports done.
type Auth struct {
	srv       *Server
	state     int
	spnego    bool
	mechTypes []byte // DER of the client's MechTypeList
	negMsg    []byte
	chalMsg   []byte
	challenge [8]byte
	flags     uint32

	User, Domain string
	key          []byte // exported session key

	// AllowAnonymous lets an anonymous AUTHENTICATE (no user name and
	// no NT response, MS-NLMP 3.2.5.1.2) complete; Anonymous then
	// reports it, and there is no session key.
	AllowAnonymous bool
	Anonymous      bool
}

// NewAuth starts an authentication.
func (s *Server) NewAuth() *Auth { return &Auth{srv: s} }

// SessionKey is the exported session key once done.
func (a *Auth) SessionKey() []byte { return a.key }

// InitialToken is the SPNEGO token a NEGOTIATE response carries: the
// server's mechanism list (NTLMSSP only).
func InitialToken() []byte {
	mech := tlv(0x30, tlv(0xa0, tlv(0x30, oidNTLM)))
	return tlv(0x60, append(append([]byte(nil), oidSPNEGO...), tlv(0xa0, mech)...))
}

var (
	oidSPNEGO = []byte{0x06, 0x06, 0x2b, 0x06, 0x01, 0x05, 0x05, 0x02}
	oidNTLM   = []byte{0x06, 0x0a, 0x2b, 0x06, 0x01, 0x04, 0x01, 0x82, 0x37, 0x02, 0x02, 0x0a}
)

// Step consumes one client token and returns the token to send back;
// done is true once the client is authenticated. Any error ends the
// authentication.
func (a *Auth) Step(in []byte) (out []byte, done bool, err error) {
	switch a.state {
	case 0:
		return a.stepInit(in)
	case 1:
		return a.stepAuth(in)
	}
	return nil, false, ErrMalformed
}

func (a *Auth) stepInit(in []byte) ([]byte, bool, error) {
	var tok []byte
	if bytes.HasPrefix(in, signature) {
		tok = in
	} else {
		a.spnego = true
		var err error
		if tok, a.mechTypes, err = parseNegTokenInit(in); err != nil {
			return nil, false, err
		}
		if tok == nil || !bytes.HasPrefix(tok, signature) {
			// No optimistic token, or one for another mechanism: answer
			// with NTLMSSP as the mechanism and wait for its
			// NEGOTIATE_MESSAGE.
			a.state = 1
			return negTokenResp(1, true, nil, nil), false, nil
		}
	}
	if len(tok) < 16 || le.Uint32(tok[8:]) != 1 {
		return nil, false, ErrMalformed
	}
	a.negMsg = append([]byte(nil), tok...)
	a.flags = le.Uint32(tok[12:])&serverSupported | flagTargetInfo | flagTargetSrv | flagRequestTgt | flagVersion
	if a.flags&flagUnicode == 0 {
		return nil, false, ErrMalformed // every SMB2 client speaks Unicode
	}
	if _, err := rand.Read(a.challenge[:]); err != nil {
		return nil, false, err
	}
	a.chalMsg = a.challengeMessage()
	a.state = 1
	if !a.spnego {
		return a.chalMsg, false, nil
	}
	return negTokenResp(1, true, a.chalMsg, nil), false, nil
}

func u16(s string) []byte {
	var b []byte
	for _, c := range utf16.Encode([]rune(s)) {
		b = le.AppendUint16(b, c)
	}
	return b
}

func (a *Auth) challengeMessage() []byte {
	target := u16(a.srv.Target)
	now := time.Now
	if a.srv.Now != nil {
		now = a.srv.Now
	}
	var info []byte
	av := func(id uint16, v []byte) {
		info = le.AppendUint16(info, id)
		info = le.AppendUint16(info, uint16(len(v)))
		info = append(info, v...)
	}
	av(2, target) // MsvAvNbDomainName
	av(1, target) // MsvAvNbComputerName
	av(4, target) // MsvAvDnsDomainName
	av(3, target) // MsvAvDnsComputerName
	av(7, le.AppendUint64(nil, uint64(now().UnixNano()/100+116444736000000000)))
	av(0, nil)
	const hdr = 56
	m := append([]byte(nil), signature...)
	m = le.AppendUint32(m, 2)
	m = le.AppendUint16(m, uint16(len(target)))
	m = le.AppendUint16(m, uint16(len(target)))
	m = le.AppendUint32(m, hdr)
	m = le.AppendUint32(m, a.flags)
	m = append(m, a.challenge[:]...)
	m = append(m, make([]byte, 8)...)
	m = le.AppendUint16(m, uint16(len(info)))
	m = le.AppendUint16(m, uint16(len(info)))
	m = le.AppendUint32(m, uint32(hdr+len(target)))
	m = append(m, 10, 0, 0x4f, 0x46, 0, 0, 0, 15) // version 10.0.20047, NTLM revision 15
	m = append(m, target...)
	return append(m, info...)
}

func field(msg []byte, at int) ([]byte, error) {
	if len(msg) < at+8 {
		return nil, ErrMalformed
	}
	n, off := uint64(le.Uint16(msg[at:])), uint64(le.Uint32(msg[at+4:]))
	if n == 0 {
		return nil, nil
	}
	if off+n > uint64(len(msg)) {
		return nil, ErrMalformed
	}
	return msg[off : off+n], nil
}

func (a *Auth) stepAuth(in []byte) ([]byte, bool, error) {
	tok, clientMIC := in, []byte(nil)
	if a.spnego {
		var err error
		if tok, clientMIC, err = parseNegTokenResp(in); err != nil {
			return nil, false, err
		}
		if a.negMsg == nil {
			// The first round chose the mechanism; this is the NEGOTIATE.
			if tok == nil {
				return nil, false, ErrMalformed
			}
			return a.stepInitNTLM(tok)
		}
	}
	if len(tok) < 64 || !bytes.HasPrefix(tok, signature) || le.Uint32(tok[8:]) != 3 {
		return nil, false, ErrMalformed
	}
	var f [6][]byte
	for i := range f {
		var err error
		if f[i], err = field(tok, 12+8*i); err != nil {
			return nil, false, err
		}
	}
	nt, domain, user, encKey := f[1], f[2], f[3], f[5]
	var err error
	if a.User, err = decode16(user); err != nil {
		return nil, false, err
	}
	if a.Domain, err = decode16(domain); err != nil {
		return nil, false, err
	}
	if len(nt) == 0 && a.User == "" && a.AllowAnonymous {
		a.Anonymous, a.state = true, 2
		if !a.spnego {
			return nil, true, nil
		}
		return negTokenResp(0, false, nil, nil), true, nil
	}
	if len(nt) == 0 || a.User == "" {
		return nil, false, ErrAnonymous
	}
	if len(nt) < 16+28 {
		return nil, false, ErrLogonFailure // NTLMv1 or garbage
	}
	proof, blob := nt[:16], nt[16:]
	if !validAvPairs(blob[28:]) {
		// The client challenge's AV pairs do not parse: Windows and
		// Samba refuse the token itself (smbtorture
		// smb2.session.ntlmssp_bug14932).
		return nil, false, ErrMalformed
	}
	passwords, ok := a.srv.Lookup(a.User)
	if !ok {
		return nil, false, ErrLogonFailure
	}
	var baseKey []byte
	for _, pw := range passwords {
		h := crypt.MD4(u16(pw))
		owf := hmacMD5(h[:], u16(strings.ToUpper(a.User)+a.Domain))
		want := hmacMD5(owf, a.challenge[:], blob)
		if subtle.ConstantTimeCompare(want, proof) == 1 {
			baseKey = hmacMD5(owf, proof)
			break
		}
	}
	if baseKey == nil {
		return nil, false, ErrLogonFailure
	}
	flags := le.Uint32(tok[60:])
	// The session key is kept only once every check passed: a refused
	// authentication leaves none behind.
	key := baseKey
	if flags&flagKeyExch != 0 && a.flags&flagKeyExch != 0 {
		if len(encKey) != 16 {
			return nil, false, ErrMalformed
		}
		c, _ := rc4.NewCipher(baseKey)
		key = make([]byte, 16)
		c.XORKeyStream(key, encKey)
	}
	// The MIC of the AUTHENTICATE message, present when the client's
	// MsvAvFlags says so (bit 0x2).
	if avFlags(blob[28:])&2 != 0 {
		if len(tok) < 88 {
			return nil, false, ErrMalformed
		}
		auth := append([]byte(nil), tok...)
		clear(auth[72:88])
		mic := hmacMD5(key, a.negMsg, a.chalMsg, auth)
		if subtle.ConstantTimeCompare(mic, tok[72:88]) != 1 {
			return nil, false, ErrLogonFailure
		}
	}
	a.key = key
	a.flags = flags & a.flags
	a.state = 2
	if !a.spnego {
		return nil, true, nil
	}
	var serverMIC []byte
	if clientMIC != nil {
		if !bytes.Equal(clientMIC, a.sign(clientToServer, a.mechTypes)) {
			a.key = nil
			return nil, false, ErrLogonFailure
		}
		serverMIC = a.sign(serverToClient, a.mechTypes)
	}
	return negTokenResp(0, false, nil, serverMIC), true, nil
}

func (a *Auth) stepInitNTLM(tok []byte) ([]byte, bool, error) {
	a.state = 0
	out, done, err := a.stepInit(tok)
	if err != nil {
		return nil, false, err
	}
	a.spnego = true
	if bytes.HasPrefix(out, signature) {
		out = negTokenResp(1, false, out, nil)
	}
	return out, done, nil
}

// validAvPairs reports whether pairs is a list of AV pairs, each within
// the list, ended by MsvAvEOL (what may follow it is padding).
func validAvPairs(pairs []byte) bool {
	for len(pairs) >= 4 {
		id, n := le.Uint16(pairs), int(le.Uint16(pairs[2:]))
		if len(pairs) < 4+n {
			return false
		}
		if id == 0 {
			return true
		}
		pairs = pairs[4+n:]
	}
	return false
}

func avFlags(pairs []byte) uint32 {
	for len(pairs) >= 4 {
		id, n := le.Uint16(pairs), int(le.Uint16(pairs[2:]))
		if id == 0 || len(pairs) < 4+n {
			break
		}
		if id == 6 && n == 4 {
			return le.Uint32(pairs[4:])
		}
		pairs = pairs[4+n:]
	}
	return 0
}

func decode16(b []byte) (string, error) {
	if len(b)%2 != 0 {
		return "", ErrMalformed
	}
	u := make([]uint16, len(b)/2)
	for i := range u {
		u[i] = le.Uint16(b[2*i:])
	}
	return string(utf16.Decode(u)), nil
}

func hmacMD5(key []byte, parts ...[]byte) []byte {
	m := hmac.New(md5.New, key)
	for _, p := range parts {
		m.Write(p)
	}
	return m.Sum(nil)
}

const (
	clientToServer = "client-to-server"
	serverToClient = "server-to-client"
)

// sign returns the NTLM message signature (MS-NLMP §3.4.4.2) of msg with
// sequence number 0 in direction dir, as a SPNEGO mechListMIC is made.
func (a *Auth) sign(dir string, msg []byte) []byte {
	signKey := md5.Sum(append(append([]byte(nil), a.key...), []byte("session key to "+dir+" signing key magic constant\x00")...))
	sealKey := md5.Sum(append(append([]byte(nil), a.key...), []byte("session key to "+dir+" sealing key magic constant\x00")...))
	seq := []byte{0, 0, 0, 0}
	sum := hmacMD5(signKey[:], seq, msg)[:8]
	if a.flags&flagKeyExch != 0 {
		c, _ := rc4.NewCipher(sealKey[:])
		c.XORKeyStream(sum, sum)
	}
	out := []byte{1, 0, 0, 0}
	out = append(out, sum...)
	return append(out, seq...)
}

package ntlm

import (
	"bytes"
	"encoding/hex"
	"errors"
	"testing"
)

// The NTLMv2 example of MS-NLMP §4.2.4: user "User", domain "Domain",
// password "Password", the server challenge 0123456789abcdef, the client
// challenge aa..aa, time 0, the target information "Domain" / "Server",
// and a random session key of 0x55 bytes sent encrypted.
var (
	specServerChallenge = mustHex("0123456789abcdef")
	specNTProof         = mustHex("68cd0ab851e51c96aabc927bebef6a1c")
	specEncryptedKey    = mustHex("c5dad2544fc9799094ce1ce90bc9d03e")
	specRandomKey       = bytes.Repeat([]byte{0x55}, 16)
)

func mustHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// specBlob is the client's NTLMv2 blob of the example (the "temp" of
// MS-NLMP §3.3.2 without its trailing reserved word).
func specBlob() []byte {
	b := []byte{1, 1, 0, 0, 0, 0, 0, 0}
	b = append(b, make([]byte, 8)...)                              // time 0
	b = append(b, bytes.Repeat([]byte{0xaa}, 8)...)                // client challenge
	b = append(b, 0, 0, 0, 0)                                      // reserved
	b = append(b, le.AppendUint16(le.AppendUint16(nil, 2), 12)...) // MsvAvNbDomainName
	b = append(b, u16("Domain")...)
	b = append(b, le.AppendUint16(le.AppendUint16(nil, 1), 12)...) // MsvAvNbComputerName
	b = append(b, u16("Server")...)
	b = append(b, 0, 0, 0, 0) // MsvAvEOL
	return append(b, 0, 0, 0, 0)
}

// negotiateMessage is a NEGOTIATE_MESSAGE with flags.
func negotiateMessage(flags uint32) []byte {
	m := append([]byte(nil), signature...)
	m = le.AppendUint32(m, 1)
	m = le.AppendUint32(m, flags)
	return append(m, make([]byte, 16)...) // empty domain and workstation
}

// authenticateMessage is an AUTHENTICATE_MESSAGE without version or MIC.
func authenticateMessage(flags uint32, nt []byte, domain, user string, encKey []byte) []byte {
	fields := [][]byte{nil, nt, u16(domain), u16(user), u16("WS"), encKey}
	m := append([]byte(nil), signature...)
	m = le.AppendUint32(m, 3)
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

const clientFlags = flagUnicode | flagNTLM | flagESS | flagTargetInfo | flagSign | flag128 | flagKeyExch

func specServer() *Server {
	return &Server{Target: "Server", Lookup: func(user string) ([]string, bool) {
		if user != "User" {
			return nil, false
		}
		return []string{"not it", "Password"}, true
	}}
}

// challenged runs the NEGOTIATE round of a raw NTLM exchange and fixes the
// server challenge to the example's.
func challenged(t *testing.T, s *Server) *Auth {
	t.Helper()
	a := s.NewAuth()
	out, done, err := a.Step(negotiateMessage(clientFlags))
	if err != nil || done || !bytes.HasPrefix(out, signature) || le.Uint32(out[8:]) != 2 {
		t.Fatalf("negotiate: %x %v %v", out, done, err)
	}
	if got := le.Uint32(out[20:]); got&flagKeyExch == 0 || got&flagUnicode == 0 || got&flagTargetInfo == 0 {
		t.Fatalf("challenge flags %#x", got)
	}
	copy(a.challenge[:], specServerChallenge)
	return a
}

func TestSpecExampleLogsOn(t *testing.T) {
	a := challenged(t, specServer())
	nt := append(append([]byte(nil), specNTProof...), specBlob()...)
	out, done, err := a.Step(authenticateMessage(clientFlags, nt, "Domain", "User", specEncryptedKey))
	if err != nil || !done || out != nil {
		t.Fatalf("authenticate: %x %v %v", out, done, err)
	}
	if a.User != "User" || a.Domain != "Domain" || !bytes.Equal(a.SessionKey(), specRandomKey) {
		t.Fatalf("user %q domain %q key %x", a.User, a.Domain, a.SessionKey())
	}
	// The exchange is over: another token is refused.
	if _, _, err := a.Step(nt); !errors.Is(err, ErrMalformed) {
		t.Fatalf("step after done: %v", err)
	}
}

func TestLogonRefusals(t *testing.T) {
	good := append(append([]byte(nil), specNTProof...), specBlob()...)
	bad := append([]byte(nil), good...)
	bad[0] ^= 1
	// AV pairs running past the blob (net diag's client challenge), and
	// a list without MsvAvEOL.
	overrun := append(append([]byte(nil), good[:16+28]...), 0x11, 0xa2, 0x08, 0x81, 1, 2, 3)
	noEOL := append(append([]byte(nil), good[:16+28]...), 2, 0, 2, 0, 'D', 0)
	for _, c := range []struct {
		name string
		msg  []byte
		want error
	}{
		{"wrong proof", authenticateMessage(clientFlags, bad, "Domain", "User", specEncryptedKey), ErrLogonFailure},
		{"unknown user", authenticateMessage(clientFlags, good, "Domain", "Other", specEncryptedKey), ErrLogonFailure},
		{"other domain", authenticateMessage(clientFlags, good, "Elsewhere", "User", specEncryptedKey), ErrLogonFailure},
		{"anonymous", authenticateMessage(clientFlags, nil, "", "", nil), ErrAnonymous},
		{"no user", authenticateMessage(clientFlags, good, "Domain", "", specEncryptedKey), ErrAnonymous},
		{"AV pairs past the end", authenticateMessage(clientFlags, overrun, "Domain", "User", specEncryptedKey), ErrMalformed},
		{"AV pairs without an end", authenticateMessage(clientFlags, noEOL, "Domain", "User", specEncryptedKey), ErrMalformed},
		{"NTLMv1", authenticateMessage(clientFlags, make([]byte, 24), "Domain", "User", specEncryptedKey), ErrLogonFailure},
		{"key exchange without a key", authenticateMessage(clientFlags, good, "Domain", "User", nil), ErrMalformed},
		{"truncated", authenticateMessage(clientFlags, good, "Domain", "User", specEncryptedKey)[:40], ErrMalformed},
		{"field past the end", append(authenticateMessage(clientFlags, good, "Domain", "User", specEncryptedKey)[:64], 0), ErrMalformed},
		{"a NEGOTIATE again", negotiateMessage(clientFlags), ErrMalformed},
	} {
		a := challenged(t, specServer())
		if _, done, err := a.Step(c.msg); done || !errors.Is(err, c.want) {
			t.Errorf("%s: done %v err %v, want %v", c.name, done, err, c.want)
		}
		if a.SessionKey() != nil {
			t.Errorf("%s: a session key after a refusal", c.name)
		}
	}
}

func TestNegotiateRefusals(t *testing.T) {
	for name, msg := range map[string][]byte{
		"not unicode":  negotiateMessage(clientFlags &^ flagUnicode),
		"short":        negotiateMessage(clientFlags)[:12],
		"wrong type":   append(append(append([]byte(nil), signature...), 3, 0, 0, 0), make([]byte, 8)...),
		"empty SPNEGO": {0x60, 0x00},
		"garbage":      []byte("hello"),
	} {
		if _, _, err := specServer().NewAuth().Step(msg); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// SPNEGO: a NegTokenInit carrying the NEGOTIATE gets the CHALLENGE in an
// accept-incomplete NegTokenResp naming NTLMSSP; the AUTHENTICATE in a
// NegTokenResp completes with accept-completed.
func TestSPNEGOExchange(t *testing.T) {
	a := specServer().NewAuth()
	mechTypes := tlv(0x30, oidNTLM)
	init := tlv(0x60, append(append([]byte(nil), oidSPNEGO...),
		tlv(0xa0, tlv(0x30, append(tlv(0xa0, mechTypes), tlv(0xa2, tlv(0x04, negotiateMessage(clientFlags)))...)))...))
	out, done, err := a.Step(init)
	if err != nil || done {
		t.Fatalf("init: %v %v", done, err)
	}
	chal, _, err := parseNegTokenResp(out)
	if err != nil || !bytes.HasPrefix(chal, signature) || le.Uint32(chal[8:]) != 2 {
		t.Fatalf("challenge in %x: %v", out, err)
	}
	copy(a.challenge[:], specServerChallenge)
	nt := append(append([]byte(nil), specNTProof...), specBlob()...)
	resp := tlv(0xa1, tlv(0x30, tlv(0xa2, tlv(0x04, authenticateMessage(clientFlags, nt, "Domain", "User", specEncryptedKey)))))
	out, done, err = a.Step(resp)
	if err != nil || !done {
		t.Fatalf("authenticate: %v %v", done, err)
	}
	if !bytes.Equal(out, negTokenResp(0, false, nil, nil)) || !bytes.Equal(a.SessionKey(), specRandomKey) {
		t.Fatalf("final token %x, key %x", out, a.SessionKey())
	}
}

// The SPNEGO token a NEGOTIATE response carries offers NTLMSSP alone.
func TestInitialTokenOffersNTLM(t *testing.T) {
	tok := InitialToken()
	if !bytes.HasPrefix(tok[2:], oidSPNEGO) || !bytes.Contains(tok, oidNTLM) {
		t.Fatalf("initial token %x", tok)
	}
}

// A SPNEGO mechListMIC that does not verify refuses the logon and leaves
// no session key.
func TestSPNEGOBadMechListMIC(t *testing.T) {
	a := specServer().NewAuth()
	init := tlv(0x60, append(append([]byte(nil), oidSPNEGO...),
		tlv(0xa0, tlv(0x30, append(tlv(0xa0, tlv(0x30, oidNTLM)), tlv(0xa2, tlv(0x04, negotiateMessage(clientFlags)))...)))...))
	if _, _, err := a.Step(init); err != nil {
		t.Fatal(err)
	}
	copy(a.challenge[:], specServerChallenge)
	nt := append(append([]byte(nil), specNTProof...), specBlob()...)
	resp := tlv(0xa1, tlv(0x30, append(tlv(0xa2, tlv(0x04, authenticateMessage(clientFlags, nt, "Domain", "User", specEncryptedKey))),
		tlv(0xa3, tlv(0x04, make([]byte, 16)))...)))
	if _, done, err := a.Step(resp); done || !errors.Is(err, ErrLogonFailure) || a.SessionKey() != nil {
		t.Fatalf("done %v err %v key %x", done, err, a.SessionKey())
	}
}

// An Auth that allows anonymous logons completes an anonymous AUTHENTICATE
// without a session key; a "no user" one with an NT response stays refused.
func TestAnonymousAllowed(t *testing.T) {
	a := challenged(t, specServer())
	a.AllowAnonymous = true
	if _, done, err := a.Step(authenticateMessage(clientFlags, nil, "", "", nil)); !done || err != nil {
		t.Fatalf("anonymous: done %v err %v", done, err)
	}
	if !a.Anonymous || a.SessionKey() != nil {
		t.Fatalf("anonymous %v key %x", a.Anonymous, a.SessionKey())
	}
	good := append(append([]byte(nil), specNTProof...), specBlob()...)
	a = challenged(t, specServer())
	a.AllowAnonymous = true
	if _, done, err := a.Step(authenticateMessage(clientFlags, good, "Domain", "", specEncryptedKey)); done || !errors.Is(err, ErrAnonymous) {
		t.Fatalf("no user: done %v err %v", done, err)
	}
}

// Package crypt holds the cryptography SMB 2/3 and NTLM need beyond the
// standard library: MD4 (NTLM's password hash), AES-CMAC (RFC 4493, SMB 3
// signing), AES-CCM (RFC 3610 as SMB 3 uses it: 11-byte nonce, 16-byte
// tag) and the SP800-108 counter-mode KDF with HMAC-SHA256.
package crypt

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"math/bits"
)

// MD4 returns the MD4 digest of data (RFC 1320).
func MD4(data []byte) [16]byte {
	a, b, c, d := uint32(0x67452301), uint32(0xefcdab89), uint32(0x98badcfe), uint32(0x10325476)
	n := len(data)
	msg := append(append([]byte(nil), data...), 0x80)
	for len(msg)%64 != 56 {
		msg = append(msg, 0)
	}
	msg = binary.LittleEndian.AppendUint64(msg, uint64(n)*8)
	var x [16]uint32
	for blk := 0; blk < len(msg); blk += 64 {
		for i := range x {
			x[i] = binary.LittleEndian.Uint32(msg[blk+4*i:])
		}
		aa, bb, cc, dd := a, b, c, d
		f := func(x, y, z uint32) uint32 { return x&y | ^x&z }
		g := func(x, y, z uint32) uint32 { return x&y | x&z | y&z }
		h := func(x, y, z uint32) uint32 { return x ^ y ^ z }
		for _, i := range [4]int{0, 4, 8, 12} {
			a = bits.RotateLeft32(a+f(b, c, d)+x[i], 3)
			d = bits.RotateLeft32(d+f(a, b, c)+x[i+1], 7)
			c = bits.RotateLeft32(c+f(d, a, b)+x[i+2], 11)
			b = bits.RotateLeft32(b+f(c, d, a)+x[i+3], 19)
		}
		for _, i := range [4]int{0, 1, 2, 3} {
			a = bits.RotateLeft32(a+g(b, c, d)+x[i]+0x5a827999, 3)
			d = bits.RotateLeft32(d+g(a, b, c)+x[i+4]+0x5a827999, 5)
			c = bits.RotateLeft32(c+g(d, a, b)+x[i+8]+0x5a827999, 9)
			b = bits.RotateLeft32(b+g(c, d, a)+x[i+12]+0x5a827999, 13)
		}
		for _, i := range [4]int{0, 2, 1, 3} {
			a = bits.RotateLeft32(a+h(b, c, d)+x[i]+0x6ed9eba1, 3)
			d = bits.RotateLeft32(d+h(a, b, c)+x[i+8]+0x6ed9eba1, 9)
			c = bits.RotateLeft32(c+h(d, a, b)+x[i+4]+0x6ed9eba1, 11)
			b = bits.RotateLeft32(b+h(c, d, a)+x[i+12]+0x6ed9eba1, 15)
		}
		a, b, c, d = a+aa, b+bb, c+cc, d+dd
	}
	var out [16]byte
	binary.LittleEndian.PutUint32(out[0:], a)
	binary.LittleEndian.PutUint32(out[4:], b)
	binary.LittleEndian.PutUint32(out[8:], c)
	binary.LittleEndian.PutUint32(out[12:], d)
	return out
}

// KDF derives a 16-byte key with SP800-108 in counter mode, HMAC-SHA256,
// one iteration, L = 128, as MS-SMB2 §3.1.4.2 specifies. label and
// context are used as given (callers include the terminating zero).
func KDF(key, label, context []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte{0, 0, 0, 1})
	m.Write(label)
	m.Write([]byte{0})
	m.Write(context)
	m.Write([]byte{0, 0, 0, 128})
	return m.Sum(nil)[:16]
}

// KDF256 is KDF with a 256-bit output (L = 256), for the keys of the
// AES-256 ciphers.
func KDF256(key, label, context []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte{0, 0, 0, 1})
	m.Write(label)
	m.Write([]byte{0})
	m.Write(context)
	m.Write([]byte{0, 0, 1, 0})
	return m.Sum(nil)
}

// CMAC computes AES-CMAC (RFC 4493) of the concatenation of parts.
type CMAC struct {
	b      cipher.Block
	k1, k2 [16]byte
}

// NewCMAC returns a CMAC for a 16-byte key.
func NewCMAC(key []byte) (*CMAC, error) {
	b, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	c := &CMAC{b: b}
	var l [16]byte
	b.Encrypt(l[:], l[:])
	c.k1 = dbl(l)
	c.k2 = dbl(c.k1)
	return c, nil
}

func dbl(x [16]byte) [16]byte {
	var out [16]byte
	carry := x[0] >> 7
	for i := 0; i < 15; i++ {
		out[i] = x[i]<<1 | x[i+1]>>7
	}
	out[15] = x[15] << 1
	if carry != 0 {
		out[15] ^= 0x87
	}
	return out
}

// Sum returns the tag of msg.
func (c *CMAC) Sum(msg []byte) [16]byte {
	var x [16]byte
	n := len(msg)
	blocks := (n + 15) / 16
	if blocks == 0 {
		blocks = 1
	}
	for i := 0; i < blocks-1; i++ {
		subtle.XORBytes(x[:], x[:], msg[16*i:16*i+16])
		c.b.Encrypt(x[:], x[:])
	}
	var last [16]byte
	rest := msg[16*(blocks-1):]
	if len(rest) == 16 {
		subtle.XORBytes(last[:], rest, c.k1[:])
	} else {
		copy(last[:], rest)
		last[len(rest)] = 0x80
		subtle.XORBytes(last[:], last[:], c.k2[:])
	}
	subtle.XORBytes(x[:], x[:], last[:])
	c.b.Encrypt(x[:], x[:])
	return x
}

// CCM is AES-CCM with an 11-byte nonce and a 16-byte tag (L = 4), the
// form SMB 3 uses.
type CCM struct{ b cipher.Block }

// NewCCM returns an AES-CCM for a 16-byte key.
func NewCCM(key []byte) (*CCM, error) {
	b, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return &CCM{b: b}, nil
}

// CCMNonceSize is the nonce size of CCM.
const CCMNonceSize = 11

// ErrOpen is returned when a message fails authentication.
var ErrOpen = errors.New("crypt: message authentication failed")

func (c *CCM) tag(nonce, plain, aad []byte) [16]byte {
	var x, blk [16]byte
	flags := byte(0)
	if len(aad) > 0 {
		flags = 0x40
	}
	flags |= ((16 - 2) / 2) << 3
	flags |= 4 - 1
	x[0] = flags
	copy(x[1:12], nonce)
	binary.BigEndian.PutUint32(x[12:], uint32(len(plain)))
	c.b.Encrypt(x[:], x[:])
	mac := func(data []byte) {
		for len(data) > 0 {
			n := copy(blk[:], data)
			clear(blk[n:])
			subtle.XORBytes(x[:], x[:], blk[:])
			c.b.Encrypt(x[:], x[:])
			data = data[n:]
		}
	}
	if len(aad) > 0 {
		// aad shorter than 2^16-2^8 bytes: 2-byte length prefix.
		hdr := binary.BigEndian.AppendUint16(nil, uint16(len(aad)))
		first := append(hdr, aad...)
		mac(first)
	}
	mac(plain)
	return x
}

func (c *CCM) ctr(nonce []byte, dst, src []byte, ctr0 *[16]byte) {
	var a [16]byte
	a[0] = 4 - 1
	copy(a[1:12], nonce)
	var s [16]byte
	c.b.Encrypt(s[:], a[:])
	*ctr0 = s
	binary.BigEndian.PutUint32(a[12:], 1)
	cipher.NewCTR(c.b, a[:]).XORKeyStream(dst, src)
}

// Seal encrypts plain in place and returns the tag; aad must be shorter
// than 65280 bytes.
func (c *CCM) Seal(nonce, plain, aad []byte) [16]byte {
	t := c.tag(nonce, plain, aad)
	var s0 [16]byte
	c.ctr(nonce, plain, plain, &s0)
	subtle.XORBytes(t[:], t[:], s0[:])
	return t
}

// Open decrypts ciphertext in place after checking tag.
func (c *CCM) Open(nonce, ciphertext, aad []byte, tag []byte) error {
	var s0 [16]byte
	c.ctr(nonce, ciphertext, ciphertext, &s0)
	t := c.tag(nonce, ciphertext, aad)
	subtle.XORBytes(t[:], t[:], s0[:])
	if len(tag) != 16 || subtle.ConstantTimeCompare(t[:], tag) != 1 {
		return ErrOpen
	}
	return nil
}

// Package guid is the one place that makes and renders GUIDs: the
// 8-4-4-4-12 lowercase hex text Azure uses for request ids, copy ids,
// queue message ids and multipart boundaries. It is a leaf: it imports
// nothing from lazuli.
package guid

import (
	"crypto/rand"
	"encoding/hex"
)

// GUID is 16 bytes rendered as a GUID.
type GUID [16]byte

// New returns a random version-4 GUID.
func New() GUID {
	var g GUID
	rand.Read(g[:])
	return g.V4()
}

// V4 returns g with the version (4) and variant bits of a random GUID set.
func (g GUID) V4() GUID {
	g[6] = g[6]&0x0f | 0x40
	g[8] = g[8]&0x3f | 0x80
	return g
}

// NewString is New().String(), for callers that only need the text.
func NewString() string { return New().String() }

// String renders g in lowercase.
func (g GUID) String() string {
	var b [36]byte
	return string(g.AppendTo(b[:0]))
}

// AppendTo appends g as String renders it.
func (g GUID) AppendTo(dst []byte) []byte {
	var b [36]byte
	hex.Encode(b[0:8], g[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], g[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], g[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], g[8:10])
	b[23] = '-'
	hex.Encode(b[24:36], g[10:16])
	return append(dst, b[:]...)
}

// Parse parses a GUID in either case, with dashes.
func Parse(s string) (GUID, bool) {
	var g GUID
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return g, false
	}
	compact := s[0:8] + s[9:13] + s[14:18] + s[19:23] + s[24:36]
	if _, err := hex.Decode(g[:], []byte(compact)); err != nil {
		return g, false
	}
	return g, true
}

// Valid accepts the .NET Guid formats, as Azure does for lease ids: 32 hex digits, optionally with
// dashes (8-4-4-4-12) and braces or parentheses.
func Valid(s string) bool {
	if len(s) >= 2 && (s[0] == '{' && s[len(s)-1] == '}' || s[0] == '(' && s[len(s)-1] == ')') {
		s = s[1 : len(s)-1]
	}
	isHex := func(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }
	switch len(s) {
	case 32:
		for i := 0; i < 32; i++ {
			if !isHex(s[i]) {
				return false
			}
		}
		return true
	case 36:
		for i := 0; i < 36; i++ {
			if i == 8 || i == 13 || i == 18 || i == 23 {
				if s[i] != '-' {
					return false
				}
			} else if !isHex(s[i]) {
				return false
			}
		}
		return true
	}
	return false
}

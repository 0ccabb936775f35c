package auth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"hash"
	"sync"
)

// macs keeps ready HMAC-SHA256 states per account key. Keying an HMAC
// hashes the padded key twice and allocates the state; a state taken from
// the pool only needs Reset, which restores the keyed state it saved. The
// set of keys is fixed when the Authenticator is built.
type macs struct {
	pools map[string]*sync.Pool // by key bytes
}

func newMACs(accounts map[string]Account) macs {
	m := macs{pools: map[string]*sync.Pool{}}
	for _, acc := range accounts {
		for _, key := range acc.Keys {
			if _, ok := m.pools[string(key)]; ok {
				continue
			}
			k := append([]byte(nil), key...)
			m.pools[string(k)] = &sync.Pool{New: func() any { return hmac.New(sha256.New, k) }}
		}
	}
	return m
}

// get returns a keyed state for key and the function that gives it back.
func (m macs) get(key []byte) (hash.Hash, func()) {
	p, ok := m.pools[string(key)]
	if !ok {
		return hmac.New(sha256.New, key), func() {}
	}
	h := p.Get().(hash.Hash)
	h.Reset()
	return h, func() { p.Put(h) }
}

// anyMatches reports whether sig (base64) is the HMAC-SHA256 of any of the
// candidate strings under any of keys, comparing in constant time.
func (m macs) anyMatches(keys [][]byte, candidates []string, sig string) bool {
	for _, sts := range candidates {
		if m.matches(keys, []byte(sts), sig) {
			return true
		}
	}
	return false
}

// matches reports whether sig (base64) is the HMAC-SHA256 of sts under any
// of keys, comparing in constant time.
func (m macs) matches(keys [][]byte, sts []byte, sig string) bool {
	var gotBuf [64]byte
	if base64.StdEncoding.DecodedLen(len(sig)) > len(gotBuf) {
		return false
	}
	var sigBuf [88]byte
	if len(sig) > len(sigBuf) {
		return false
	}
	n, err := base64.StdEncoding.Decode(gotBuf[:], append(sigBuf[:0], sig...))
	if err != nil {
		return false
	}
	got := gotBuf[:n]
	var sum [sha256.Size]byte
	for _, key := range keys {
		h, put := m.get(key)
		h.Write(sts)
		ok := hmac.Equal(got, h.Sum(sum[:0]))
		put()
		if ok {
			return true
		}
	}
	return false
}

package crypt

import (
	"bytes"
	"encoding/hex"
	"testing"
)

func unhex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// RFC 1320 test suite.
func TestMD4(t *testing.T) {
	for in, want := range map[string]string{
		"":    "31d6cfe0d16ae931b73c59d7e0c089c0",
		"a":   "bde52cb31de33e46245e05fbdbd6fb24",
		"abc": "a448017aaf21d8525fc10ae87aa6729d",
		"12345678901234567890123456789012345678901234567890123456789012345678901234567890": "e33b4ddc9c38f2199c3e7b164fcc0536",
	} {
		got := MD4([]byte(in))
		if hex.EncodeToString(got[:]) != want {
			t.Errorf("MD4(%q) = %x, want %s", in, got, want)
		}
	}
}

// RFC 4493 examples.
func TestCMAC(t *testing.T) {
	key := unhex("2b7e151628aed2a6abf7158809cf4f3c")
	msg := unhex("6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e5130c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710")
	c, err := NewCMAC(key)
	if err != nil {
		t.Fatal(err)
	}
	for n, want := range map[int]string{
		0: "bb1d6929e95937287fa37d129b756746", 16: "070a16b46b4d4144f79bdd9dd04a287c",
		40: "dfa66747de9ae63030ca32611497c827", 64: "51f0bebf7e3b9d92fc49741779363cfe",
	} {
		got := c.Sum(msg[:n])
		if hex.EncodeToString(got[:]) != want {
			t.Errorf("CMAC(len %d) = %x, want %s", n, got, want)
		}
	}
}

// RFC 3610 packet vector #1 uses a 13-byte nonce and 8-byte tag, which
// SMB does not use; SMB's shape is checked by a round trip and tamper
// test here, and against real clients by the server tests.
func TestCCMRoundTrip(t *testing.T) {
	c, err := NewCCM(unhex("000102030405060708090a0b0c0d0e0f"))
	if err != nil {
		t.Fatal(err)
	}
	nonce := unhex("101112131415161718191a")
	aad := []byte("additional data, 32 bytes long!!")
	for _, n := range []int{0, 1, 15, 16, 17, 1000} {
		plain := bytes.Repeat([]byte{0xAB}, n)
		buf := append([]byte(nil), plain...)
		tag := c.Seal(nonce, buf, aad)
		if n > 0 && bytes.Equal(buf, plain) {
			t.Fatal("not encrypted")
		}
		if err := c.Open(nonce, append([]byte(nil), buf...), aad, tag[:]); err != nil {
			t.Fatalf("len %d: %v", n, err)
		}
		dec := append([]byte(nil), buf...)
		c.Open(nonce, dec, aad, tag[:])
		if !bytes.Equal(dec, plain) {
			t.Fatalf("len %d: round trip differs", n)
		}
		tag[0] ^= 1
		if err := c.Open(nonce, append([]byte(nil), buf...), aad, tag[:]); err == nil {
			t.Fatal("tampered tag accepted")
		}
	}
}

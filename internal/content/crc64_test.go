package content

import (
	"encoding/base64"
	"testing"
)

// TestCRC64SDKVectors pins Azure Storage's CRC-64 against values computed
// by the JavaScript SDK (@azure/storage-common StorageCRC64Calculator) and
// the Go SDK (azblob's TransferValidationTypeComputeCRC64), in the base64
// of the little-endian bytes that x-ms-content-crc64 carries.
func TestCRC64SDKVectors(t *testing.T) {
	seq := make([]byte, 1000)
	for i := range seq {
		seq[i] = byte(i % 251)
	}
	for _, c := range []struct {
		in   []byte
		want string
	}{
		{nil, "AAAAAAAAAAA="},
		{[]byte("a"), "PPzLtEWEL4w="},
		{[]byte("123456789"), "iJh5CoYUi64="},
		{[]byte("The quick brown fox jumps over the lazy dog"), "Q8FUSQVUbNc="},
		{seq, "FoSZtnE1LTo="},
	} {
		if got := base64.StdEncoding.EncodeToString(CRC64Bytes(CRC64(c.in))); got != c.want {
			t.Errorf("CRC64(%.20q) = %s, want %s", c.in, got, c.want)
		}
	}
}

// TestCRC64Pieces checks the running CRC-64 against a bit-at-a-time
// computation of the definition, for bodies of every length the fast
// paths treat differently, written whole and in uneven pieces.
func TestCRC64Pieces(t *testing.T) {
	slow := func(p []byte) uint64 {
		c := ^uint64(0)
		for _, b := range p {
			c ^= uint64(b)
			for range 8 {
				if c&1 != 0 {
					c = c>>1 ^ 0x9A6C9329AC4BC9B5
				} else {
					c >>= 1
				}
			}
		}
		return ^c
	}
	buf := make([]byte, 9000)
	for i := range buf {
		buf[i] = byte(i*131 + i>>8)
	}
	for n := 0; n <= len(buf); n += 1 + n/5 {
		p := buf[:n]
		want := slow(p)
		if got := CRC64(p); got != want {
			t.Fatalf("CRC64 of %d bytes = %x, want %x", n, got, want)
		}
		h := NewCRC64()
		for rest, step := p, 1; len(rest) > 0; step = step*3 + 1 {
			k := min(step, len(rest))
			h.Write(rest[:k])
			rest = rest[k:]
		}
		if got := h.Sum64(); got != want {
			t.Fatalf("running CRC64 of %d bytes = %x, want %x", n, got, want)
		}
	}
}

package queue

import (
	"encoding/hex"
	"strings"
	"testing"
)

// goldenMessages are message records as lazuli writes them, so that a
// change of the record primitives cannot change what is on disk unnoticed.
func goldenMessages() []struct {
	m   message
	hex string
} {
	var rc receipt
	for i := range rc {
		rc[i] = byte(i + 1)
	}
	return []struct {
		m   message
		hex string
	}{
		{message{}, "010000000000000000000000000000000000000000000000"},
		{message{insertion: 1764288000123456, expiration: -1, visibleAt: 1<<63 - 1, seq: 1<<64 - 1, dequeueCount: 300,
			receipt: rc, text: "hello \x00 wörld"}, "018089bbf889a7a20601feffffffffffffffff01ffffffffffffffffff01ac020102030405060708090a0b0c0d0e0f10111268656c6c6f20002077c3b6726c64"},
	}
}

// TestRecordBytesUnchanged pins the bytes of message records, and that
// they read back to what was written.
func TestRecordBytesUnchanged(t *testing.T) {
	for i, g := range goldenMessages() {
		v := g.m.encode()
		if h := hex.EncodeToString(v); h != g.hex {
			t.Errorf("message %d: record\n%s\nwant\n%s", i, h, g.hex)
		}
		m, err := decodeMessage(v)
		if err != nil || m != g.m {
			t.Fatalf("message %d: decoded %+v, %v", i, m, err)
		}
		for j := range v {
			if j < len(v)-len(g.m.text) {
				if _, err := decodeMessage(v[:j]); err == nil {
					t.Fatalf("message %d cut at %d decoded", i, j)
				}
			}
		}
	}
}

func BenchmarkMessageRecordDecode(b *testing.B) {
	m := goldenMessages()[1].m
	m.text = strings.Repeat("x", 1024)
	v := m.encode()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeMessage(v); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMessageRecordEncode(b *testing.B) {
	m := goldenMessages()[1].m
	m.text = strings.Repeat("x", 1024)
	b.ReportAllocs()
	for b.Loop() {
		m.encode()
	}
}

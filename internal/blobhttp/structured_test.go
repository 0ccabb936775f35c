package blobhttp

import (
	"bytes"
	"encoding/binary"
	"io"
	"strings"
	"testing"

	"github.com/lazuli-storage/lazuli/internal/content"
)

// encodeSM frames body as a structured message with segments of at
// most seg bytes.
func encodeSM(body []byte, seg int) []byte {
	n := (len(body) + seg - 1) / seg
	total := len(body) + smHeaderLen + n*(smSegHeaderLen+smFooterLen) + smFooterLen
	out := []byte{smVersion}
	out = binary.LittleEndian.AppendUint64(out, uint64(total))
	out = binary.LittleEndian.AppendUint16(out, smFlagCRC64)
	out = binary.LittleEndian.AppendUint16(out, uint16(n))
	for i := 0; i < n; i++ {
		part := body[i*seg : min(len(body), (i+1)*seg)]
		out = binary.LittleEndian.AppendUint16(out, uint16(i+1))
		out = binary.LittleEndian.AppendUint64(out, uint64(len(part)))
		out = append(out, part...)
		out = binary.LittleEndian.AppendUint64(out, content.CRC64(part))
	}
	return binary.LittleEndian.AppendUint64(out, content.CRC64(body))
}

func decodeSM(msg []byte, content int64) ([]byte, error) {
	return io.ReadAll(newSMReader(bytes.NewReader(msg), int64(len(msg)), content))
}

func TestStructuredMessage(t *testing.T) {
	content := []byte(strings.Repeat("structured message body ", 40))
	for _, seg := range []int{1 << 20, 100, 7} {
		msg := encodeSM(content, seg)
		got, err := decodeSM(msg, int64(len(content)))
		if err != nil || !bytes.Equal(got, content) {
			t.Fatalf("segments of %d: %v", seg, err)
		}
		// Every flipped byte is caught.
		for i := range msg {
			bad := bytes.Clone(msg)
			bad[i] ^= 0x40
			if _, err := decodeSM(bad, int64(len(content))); err == nil {
				t.Fatalf("segments of %d: byte %d flipped went unnoticed", seg, i)
			}
		}
		// Truncated or extended messages are refused.
		if _, err := decodeSM(msg[:len(msg)-1], int64(len(content))); err == nil {
			t.Fatal("truncated message accepted")
		}
		if _, err := io.ReadAll(newSMReader(bytes.NewReader(append(bytes.Clone(msg), 0)), -1, int64(len(content)))); err == nil {
			t.Fatal("trailing byte accepted")
		}
		if _, err := decodeSM(msg, int64(len(content))-1); err == nil {
			t.Fatal("wrong content length accepted")
		}
	}
	// Empty content: header and footer only.
	if got, err := decodeSM(encodeSM(nil, 4<<20), 0); err != nil || len(got) != 0 {
		t.Fatalf("empty message: %q %v", got, err)
	}
}

func FuzzStructuredMessage(f *testing.F) {
	f.Add(encodeSM([]byte("hello, world"), 5), int64(12))
	f.Add(encodeSM(nil, 5), int64(0))
	f.Fuzz(func(t *testing.T, msg []byte, content int64) {
		if content < 0 {
			content = -content
		}
		got, err := io.ReadAll(newSMReader(bytes.NewReader(msg), int64(len(msg)), content))
		if err == nil && int64(len(got)) != content {
			t.Fatalf("accepted %d bytes for a content of %d", len(got), content)
		}
	})
}

func TestWriteStructured(t *testing.T) {
	content := []byte(strings.Repeat("0123456789", 1000))
	open := func(off, n int64) io.ReadCloser { return io.NopCloser(bytes.NewReader(content[off : off+n])) }
	for _, r := range [][2]int64{{0, 10000}, {5, 100}, {0, 0}} {
		var buf bytes.Buffer
		if err := writeStructured(&buf, open, r[0], r[1]); err != nil {
			t.Fatal(err)
		}
		if int64(buf.Len()) != structuredLen(r[1]) {
			t.Fatalf("%v: wrote %d bytes, announced %d", r, buf.Len(), structuredLen(r[1]))
		}
		got, err := decodeSM(buf.Bytes(), r[1])
		if err != nil || !bytes.Equal(got, content[r[0]:r[0]+r[1]]) {
			t.Fatalf("%v: %v", r, err)
		}
	}
}

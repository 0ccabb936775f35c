// Package keyenc is an order-preserving tuple encoding for storage keys.
//
// A key is a sequence of elements appended one after another. Comparing two
// encoded keys bytewise gives the same result as comparing their tuples
// element by element, so list-by-prefix, marker continuation, PartitionKey /
// RowKey ranges and visibility-ordered queues become plain range scans.
//
// Strings and byte strings are written with every 0x00 escaped as 0x00 0xFF
// and terminated by 0x00 0x01; unsigned integers are 8 bytes big-endian;
// signed integers have their sign bit flipped.
package keyenc

import (
	"encoding/binary"
	"errors"
)

// ErrMalformed is returned when decoding bytes that are not a valid encoding.
var ErrMalformed = errors.New("keyenc: malformed key")

// AppendString appends a terminated string element.
func AppendString(b []byte, s string) []byte {
	b = appendEscaped(b, s)
	return append(b, 0x00, 0x01)
}

// AppendBytes appends a terminated byte-string element.
func AppendBytes(b, s []byte) []byte {
	b = appendEscaped(b, string(s))
	return append(b, 0x00, 0x01)
}

// AppendPrefix appends a string without its terminator. Every key whose
// next string element starts with s sorts at or after the result and
// before PrefixEnd(result).
func AppendPrefix(b []byte, s string) []byte {
	return appendEscaped(b, s)
}

func appendEscaped(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == 0x00 {
			b = append(b, 0x00, 0xFF)
			continue
		}
		b = append(b, c)
	}
	return b
}

// AppendUint64 appends an unsigned integer element.
func AppendUint64(b []byte, v uint64) []byte {
	return binary.BigEndian.AppendUint64(b, v)
}

// AppendInt64 appends a signed integer element.
func AppendInt64(b []byte, v int64) []byte {
	return binary.BigEndian.AppendUint64(b, uint64(v)^(1<<63))
}

// PrefixEnd returns the smallest key greater than every key starting with
// p, or nil when there is none (p is empty or all 0xFF).
func PrefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xFF {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

// After returns the smallest key strictly greater than k.
func After(k []byte) []byte {
	return append(append([]byte(nil), k...), 0x00)
}

// ReadString decodes a string element and returns it with the rest of b.
func ReadString(b []byte) (string, []byte, error) {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c != 0x00 {
			out = append(out, c)
			continue
		}
		if i+1 >= len(b) {
			return "", nil, ErrMalformed
		}
		switch b[i+1] {
		case 0xFF:
			out = append(out, 0x00)
			i++
		case 0x01:
			return string(out), b[i+2:], nil
		default:
			return "", nil, ErrMalformed
		}
	}
	return "", nil, ErrMalformed
}

// ReadUint64 decodes an unsigned integer element.
func ReadUint64(b []byte) (uint64, []byte, error) {
	if len(b) < 8 {
		return 0, nil, ErrMalformed
	}
	return binary.BigEndian.Uint64(b), b[8:], nil
}

// ReadInt64 decodes a signed integer element.
func ReadInt64(b []byte) (int64, []byte, error) {
	u, rest, err := ReadUint64(b)
	return int64(u ^ (1 << 63)), rest, err
}

package blob

import (
	"encoding/binary"
	"hash"
	"hash/crc64"
)

// crc64Poly is the polynomial of Azure Storage's CRC-64 in the reversed
// (LSB-first) form hash/crc64 takes. With hash/crc64's conventions
// (register starts at all ones, result complemented) it yields the value
// the Azure SDKs send as x-ms-content-crc64, little-endian and base64.
const crc64Poly = 0x9A6C9329AC4BC9B5

var crc64Table = crc64.MakeTable(crc64Poly)

// CRC64 is Azure Storage's CRC-64 of p.
func CRC64(p []byte) uint64 { return crc64.Checksum(p, crc64Table) }

// NewCRC64 returns a running Azure Storage CRC-64.
func NewCRC64() hash.Hash64 { return crc64.New(crc64Table) }

// CRC64Bytes is the 8-byte wire form of a CRC-64 (little-endian), the
// bytes x-ms-content-crc64 carries in base64.
func CRC64Bytes(c uint64) []byte { return binary.LittleEndian.AppendUint64(nil, c) }

package content

import (
	"encoding/binary"
	"hash"

	"github.com/minio/crc64nvme"
)

// Azure Storage's CRC-64 is the one NVMe defines (CRC-64/NVME: polynomial
// 0xAD93D23594C93659, 0x9A6C9329AC4BC9B5 bit-reversed, register starting at
// all ones, reflected, result complemented). crc64nvme computes it with
// carry-less multiplication: 27.7 GB/s against 0.73 GB/s for hash/crc64's
// table on this project's build machine (32 KiB writes), where CRC-64 had
// been half of the server's CPU in a 64 MiB block upload.

// CRC64 is Azure Storage's CRC-64 of p.
func CRC64(p []byte) uint64 { return crc64nvme.Checksum(p) }

// NewCRC64 returns a running Azure Storage CRC-64.
func NewCRC64() hash.Hash64 { return crc64nvme.New() }

// CRC64Bytes is the 8-byte wire form of a CRC-64 (little-endian), the
// bytes x-ms-content-crc64 carries in base64.
func CRC64Bytes(c uint64) []byte { return binary.LittleEndian.AppendUint64(nil, c) }

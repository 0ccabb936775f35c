package blob

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

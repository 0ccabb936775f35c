package file

import "bytes"

// SharesKeyPrefix is the key prefix of account's share records: one key
// per share and one per share snapshot (see IsShareKey), for counting
// them at startup.
func SharesKeyPrefix(account string) []byte { return sharesPrefix(account) }

// IsShareKey reports whether a key under SharesKeyPrefix is a share's own
// record rather than a snapshot's: its snapshot element is empty, so the
// key ends with two string terminators (a 0x00 inside a string is always
// escaped, so no other key ends that way).
func IsShareKey(key []byte) bool { return bytes.HasSuffix(key, []byte{0x00, 0x01, 0x00, 0x01}) }

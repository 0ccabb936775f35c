package queue

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/lazuli-storage/lazuli/internal/content"
	"github.com/lazuli-storage/lazuli/internal/guid"
)

// errCorrupt marks a stored value that does not decode; it surfaces as a
// 500 because it means the store was damaged, not that the request was bad.
var errCorrupt = errors.New("queue: corrupt stored record")

// MessageID is a message's identifier; it is rendered as a GUID.
type MessageID = guid.GUID

// ParseMessageID parses a GUID (either case, with dashes).
func ParseMessageID(s string) (MessageID, bool) { return guid.Parse(s) }

// newMessageID returns a version-4-shaped GUID whose first 60 bits
// (less the version nibble) are the message's sequence number and whose
// other bits are random. Message keys embed the id, so a queue's messages
// are stored in insertion order: puts append at the end of the key range
// and receives touch its front, which keeps every transaction's working
// set small on disk-backed engines. The random part keeps ids unique
// across queues, clears and the instances sharing a database.
func newMessageID(seq uint64) MessageID {
	var rnd [10]byte
	rand.Read(rnd[:])
	return messageIDFrom(seq, &rnd)
}

// messageIDFrom is newMessageID with its random bits supplied: bytes 0-5
// hold the sequence's high 48 bits, the low nibble of byte 6 (its high
// nibble is the version) and byte 7 the low 12, so ids compare as their
// sequences do.
func messageIDFrom(seq uint64, rnd *[10]byte) MessageID {
	var id MessageID
	copy(id[8:], rnd[:8])
	var s [8]byte
	binary.BigEndian.PutUint64(s[:], seq<<4)
	copy(id[0:6], s[:6])
	id[6] = s[6] >> 4
	id[7] = byte(seq)
	return id.V4()
}

// Pop receipts are 18 bytes: a format byte and 17 random bytes, rendered
// as 24 characters of standard base64 (no padding needed). A receipt is
// issued by every Put, Get and Update of a message and only the latest one
// is honoured.
const (
	receiptLen     = 18
	receiptVersion = 0x02
)

type receipt [receiptLen]byte

func newReceipt() receipt {
	var r receipt
	rand.Read(r[:])
	r[0] = receiptVersion
	return r
}

// newIDsAndReceipts draws, in one read of the random source, the random
// bits of n message ids and n receipts, so that a put's transaction does
// no more than store them.
func newIDsAndReceipts(n int) ([][10]byte, []receipt) {
	rnd := make([][10]byte, n)
	rcs := make([]receipt, n)
	buf := make([]byte, n*(10+receiptLen))
	rand.Read(buf)
	for i := range n {
		b := buf[i*(10+receiptLen):]
		copy(rnd[i][:], b[:10])
		copy(rcs[i][:], b[10:10+receiptLen])
		rcs[i][0] = receiptVersion
	}
	return rnd, rcs
}

func (r receipt) String() string { return base64.StdEncoding.EncodeToString(r[:]) }

// parseReceipt reports whether s has the shape of a receipt lazuli
// issues; a malformed receipt is a 400, a well-formed stale one a 404.
func parseReceipt(s string) (receipt, bool) {
	var r receipt
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b) != receiptLen || b[0] != receiptVersion {
		return r, false
	}
	copy(r[:], b)
	return r, true
}

// ValidPopReceipt reports whether s is syntactically a pop receipt.
func ValidPopReceipt(s string) bool {
	_, ok := parseReceipt(s)
	return ok
}

// message is the stored form of one message. Times are Unix microseconds;
// the never-expiring expiry is neverExpiresMicro. The record is a format
// byte, the numbers as varints, the receipt, and the text to its end.
type message struct {
	insertion, expiration, visibleAt int64
	seq                              uint64
	dequeueCount                     uint64
	receipt                          receipt
	text                             string
}

const messageFormat = 1

func (m *message) encode() []byte {
	b := make([]byte, 0, 1+4*binary.MaxVarintLen64+receiptLen+len(m.text))
	b = append(b, messageFormat)
	b = binary.AppendVarint(b, m.insertion)
	b = binary.AppendVarint(b, m.expiration)
	b = binary.AppendVarint(b, m.visibleAt)
	b = binary.AppendUvarint(b, m.seq)
	b = binary.AppendUvarint(b, m.dequeueCount)
	b = append(b, m.receipt[:]...)
	return append(b, m.text...)
}

func decodeMessage(b []byte) (message, error) {
	if len(b) == 0 || b[0] != messageFormat {
		return message{}, errCorrupt
	}
	r := content.NewReader(b[1:])
	m := message{insertion: r.Varint(), expiration: r.Varint(), visibleAt: r.Varint(), seq: r.Uvarint(), dequeueCount: r.Uvarint()}
	copy(m.receipt[:], r.Fixed(receiptLen))
	text := r.Rest()
	if r.Err() != nil {
		return message{}, errCorrupt
	}
	m.text = string(text)
	return m, nil
}

// queueRecord is the stored form of a queue.
type queueRecord struct {
	ID       uint64             `json:"id"`
	Metadata []MetadataItem     `json:"md,omitempty"`
	ACL      []SignedIdentifier `json:"acl,omitempty"`
}

func decodeQueue(b []byte) (queueRecord, error) {
	var q queueRecord
	if err := json.Unmarshal(b, &q); err != nil {
		return q, fmt.Errorf("%w: %v", errCorrupt, err)
	}
	return q, nil
}

func (q *queueRecord) encode() []byte {
	b, _ := json.Marshal(q)
	return b
}

func newQueueID() uint64 {
	var b [8]byte
	rand.Read(b[:])
	return binary.BigEndian.Uint64(b[:])
}

// Stored times are Unix microseconds.
func micros(t time.Time) int64 { return t.UnixMicro() }

func fromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }

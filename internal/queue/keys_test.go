package queue

import (
	"bytes"
	"testing"

	"github.com/lazuli-storage/lazuli/internal/keyenc"
)

// The keys must stay byte for byte what earlier versions stored.
func TestKeyLayoutUnchanged(t *testing.T) {
	base := func(tag string) []byte { return keyenc.AppendString(keyenc.AppendString(nil, "queue"), tag) }
	id := MessageID{0, 1, 2, 0, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 0, 15}
	const qid, at = uint64(0xfeedface00c0ffee), int64(1_700_000_000_000_000)
	for _, c := range []struct {
		name      string
		got, want []byte
	}{
		{"queue", queueKey("acct", "q\x00x"), keyenc.AppendString(keyenc.AppendString(base("q"), "acct"), "q\x00x")},
		{"prefix", queueNamePrefix("acct", "p"), keyenc.AppendPrefix(keyenc.AppendString(base("q"), "acct"), "p")},
		{"stats", statsKey(qid), keyenc.AppendUint64(base("s"), qid)},
		{"countShard", countShardKey(qid, 7), keyenc.AppendUint64(keyenc.AppendUint64(base("s"), qid), 7)},
		{"msg", msgKey(qid, id), keyenc.AppendBytes(keyenc.AppendUint64(base("m"), qid), id[:])},
		{"msgPrefix", msgPrefix(qid), keyenc.AppendUint64(base("m"), qid)},
		{"vis", visKey(qid, at, id), append(keyenc.AppendInt64(keyenc.AppendUint64(base("v"), qid), at), id[:]...)},
		{"visUpTo", visibleUpTo(qid, at), keyenc.AppendInt64(keyenc.AppendUint64(base("v"), qid), at+1)},
		{"exp", expKey(qid, at, id), append(keyenc.AppendInt64(keyenc.AppendUint64(base("x"), qid), at), id[:]...)},
		{"expUpTo", expiredUpTo(qid, at), keyenc.AppendInt64(keyenc.AppendUint64(base("x"), qid), at+1)},
		{"tomb", tombKey(qid), keyenc.AppendUint64(base("t"), qid)},
		{"props", propsKey("acct"), keyenc.AppendString(base("p"), "acct")},
	} {
		if !bytes.Equal(c.got, c.want) {
			t.Errorf("%s key %x, want %x", c.name, c.got, c.want)
		}
	}
}

package queue

import (
	"github.com/lazuli-storage/lazuli/internal/keyenc"
)

// Key layout. Every key starts with the element "queue" so the Queue
// service owns one contiguous range of the shared keyspace.
//
//	queue q <account> <name>               queue record (id, metadata, ACL)
//	queue s <qid>                          the id is live (empty value; purged with the id)
//	queue s <qid> <shard>                  message count shard (a signed change of the count)
//	queue m <qid> <msgid>                  message record
//	queue v <qid> <visibleAt> <msgid>      visibility index (empty value)
//	queue x <qid> <expiration> <msgid>     expiry index (finite TTLs only; empty value)
//	queue t <qid>                          tombstone: messages of qid await purging
//	queue p <account>                      service properties
//
// The expiry index lets a background reaper remove expired messages (and
// lower the queue's count) without scanning live ones.
//
// Messages hang off an internal queue id, not the queue name: deleting or
// clearing a queue swaps or drops the id in one small transaction and the
// old id's messages are purged in the background, so the name is usable
// again at once and no request ever touches every message.
//
// Message ids start with the message's insertion sequence (see
// newMessageID) and end the index keys as 16 fixed-width bytes, so the
// visibility index orders a queue's messages by the time they become
// visible and then by insertion sequence, so Get Messages and Peek Messages
// are a range scan from the start of the queue up to "now" that stops after
// the requested count.

const (
	tagQueue = "q"
	tagStats = "s"
	tagMsg   = "m"
	tagVis   = "v"
	tagExp   = "x"
	tagTomb  = "t"
	tagProps = "p"
)

// roots holds the encoded ("queue", tag) prefix of every tag.
var roots = func() map[string][]byte {
	m := map[string][]byte{}
	for _, t := range []string{tagQueue, tagStats, tagMsg, tagVis, tagExp, tagTomb, tagProps} {
		m[t] = keyenc.AppendString(keyenc.AppendString(nil, "queue"), t)
	}
	return m
}()

func root(tag string) []byte { return rootCap(tag, 0) }

// rootCap returns a fresh copy of tag's prefix with room for extra more
// bytes, so that a key is built in one allocation.
func rootCap(tag string, extra int) []byte {
	r := roots[tag]
	return append(make([]byte, 0, len(r)+extra), r...)
}

func queueKey(account, name string) []byte {
	k := rootCap(tagQueue, len(account)+len(name)+4)
	return keyenc.AppendString(keyenc.AppendString(k, account), name)
}

// queueNamePrefix is the range of an account's queues whose names start
// with prefix.
func queueNamePrefix(account, prefix string) []byte {
	return keyenc.AppendPrefix(keyenc.AppendString(root(tagQueue), account), prefix)
}

// statsKey marks queue id qid live, and is the prefix of its count
// shards.
func statsKey(qid uint64) []byte { return keyenc.AppendUint64(rootCap(tagStats, 16), qid) }

// countShardKey is shard of queue qid's message count (see countShards).
func countShardKey(qid uint64, shard uint64) []byte {
	return keyenc.AppendUint64(statsKey(qid), shard)
}

func msgPrefix(qid uint64) []byte { return keyenc.AppendUint64(rootCap(tagMsg, 8), qid) }

// msgKey leaves room for the id's escaping (a zero byte takes two) and
// its terminator.
func msgKey(qid uint64, id MessageID) []byte {
	return keyenc.AppendBytes(keyenc.AppendUint64(rootCap(tagMsg, 8+2*len(id)+2), qid), id[:])
}

func visPrefix(qid uint64) []byte { return keyenc.AppendUint64(rootCap(tagVis, 8), qid) }

// visKey is the index entry of message id: the id ends the key (its
// first bytes are the insertion sequence, so ties in time keep insertion
// order) and the value is empty, which keeps a million-message queue
// light.
func visKey(qid uint64, visibleAt int64, id MessageID) []byte {
	k := keyenc.AppendUint64(rootCap(tagVis, 16+len(id)), qid)
	return append(keyenc.AppendInt64(k, visibleAt), id[:]...)
}

// indexedID returns the message id that ends an index key.
func indexedID(key []byte) (MessageID, bool) {
	var id MessageID
	if len(key) < len(id) {
		return id, false
	}
	copy(id[:], key[len(key)-len(id):])
	return id, true
}

// visibleUpTo is the exclusive upper bound of index entries visible at
// instant now (visibleAt <= now).
func visibleUpTo(qid uint64, now int64) []byte {
	return keyenc.AppendInt64(keyenc.AppendUint64(rootCap(tagVis, 16), qid), now+1)
}

func expPrefix(qid uint64) []byte { return keyenc.AppendUint64(rootCap(tagExp, 8), qid) }

func expKey(qid uint64, expiration int64, id MessageID) []byte {
	k := keyenc.AppendUint64(rootCap(tagExp, 16+len(id)), qid)
	return append(keyenc.AppendInt64(k, expiration), id[:]...)
}

// expiredUpTo is the exclusive upper bound of expiry entries of messages
// expired at instant now (expiration <= now).
func expiredUpTo(qid uint64, now int64) []byte {
	return keyenc.AppendInt64(keyenc.AppendUint64(rootCap(tagExp, 16), qid), now+1)
}

func tombKey(qid uint64) []byte { return keyenc.AppendUint64(root(tagTomb), qid) }

func propsKey(account string) []byte { return keyenc.AppendString(root(tagProps), account) }

package queue

import (
	"github.com/lazuli-storage/lazuli/internal/keyenc"
)

// Key layout. Every key starts with the element "queue" so the Queue
// service owns one contiguous range of the shared keyspace.
//
//	queue q <account> <name>               queue record (id, metadata, ACL)
//	queue s <qid>                          per-queue counters (next sequence, message count)
//	queue m <qid> <msgid>                  message record
//	queue v <qid> <visibleAt> <seq>        visibility index -> msgid
//	queue x <qid> <expiration> <seq>       expiry index -> msgid (finite TTLs only)
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
// The visibility index orders a queue's messages by the time they become
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

func root(tag string) []byte {
	return keyenc.AppendString(keyenc.AppendString(nil, "queue"), tag)
}

func queueKey(account, name string) []byte {
	return keyenc.AppendString(keyenc.AppendString(root(tagQueue), account), name)
}

// queueNamePrefix is the range of an account's queues whose names start
// with prefix.
func queueNamePrefix(account, prefix string) []byte {
	return keyenc.AppendPrefix(keyenc.AppendString(root(tagQueue), account), prefix)
}

func statsKey(qid uint64) []byte { return keyenc.AppendUint64(root(tagStats), qid) }

func msgPrefix(qid uint64) []byte { return keyenc.AppendUint64(root(tagMsg), qid) }

func msgKey(qid uint64, id MessageID) []byte { return keyenc.AppendBytes(msgPrefix(qid), id[:]) }

func visPrefix(qid uint64) []byte { return keyenc.AppendUint64(root(tagVis), qid) }

func visKey(qid uint64, visibleAt int64, seq uint64) []byte {
	return keyenc.AppendUint64(keyenc.AppendInt64(visPrefix(qid), visibleAt), seq)
}

// visibleUpTo is the exclusive upper bound of index entries visible at
// instant now (visibleAt <= now).
func visibleUpTo(qid uint64, now int64) []byte {
	return keyenc.AppendInt64(visPrefix(qid), now+1)
}

func expPrefix(qid uint64) []byte { return keyenc.AppendUint64(root(tagExp), qid) }

func expKey(qid uint64, expiration int64, seq uint64) []byte {
	return keyenc.AppendUint64(keyenc.AppendInt64(expPrefix(qid), expiration), seq)
}

// expiredUpTo is the exclusive upper bound of expiry entries of messages
// expired at instant now (expiration <= now).
func expiredUpTo(qid uint64, now int64) []byte {
	return keyenc.AppendInt64(expPrefix(qid), now+1)
}

func tombKey(qid uint64) []byte { return keyenc.AppendUint64(root(tagTomb), qid) }

func propsKey(account string) []byte { return keyenc.AppendString(root(tagProps), account) }

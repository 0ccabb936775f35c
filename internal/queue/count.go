package queue

// QueuesKeyPrefix is the key prefix of account's queue records (one key
// per queue), for counting them at startup.
func QueuesKeyPrefix(account string) []byte { return queueNamePrefix(account, "") }

package blob

// ContainersKeyPrefix is the key prefix of account's container records
// (one key per container), for counting them at startup.
func ContainersKeyPrefix(account string) []byte { return containersPrefix(account) }

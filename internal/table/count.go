package table

// TablesKeyPrefix is the key prefix of account's table records (one key
// per table), for counting them at startup.
func TablesKeyPrefix(account string) []byte { return tablesPrefix(account) }

package storage

// DeleteRange deletes the keys k with lower <= k < upper (nil upper: no
// bound) inside tx, in key order, at most limit of them when limit > 0,
// and reports how many it deleted. Callers that clear ranges of unbounded
// size pass a limit and call again in a fresh Update until fewer than
// limit were deleted, so that no transaction grows with the data.
func DeleteRange(tx Tx, lower, upper []byte, limit int) (int, error) {
	var keys [][]byte
	it := tx.Scan(lower, upper, false)
	for (limit <= 0 || len(keys) < limit) && it.Next() {
		keys = append(keys, append([]byte(nil), it.Key()...))
	}
	err := it.Err()
	it.Close()
	if err != nil {
		return 0, err
	}
	// Deleting while the iterator is open has no defined effect on it
	// (see Tx.Scan), hence the keys are gathered first.
	for i, k := range keys {
		if err := tx.Delete(k); err != nil {
			return i, err
		}
	}
	return len(keys), nil
}

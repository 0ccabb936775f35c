package sqlitestore

// Writes held for the batch.
//
// When an Update's function succeeds, its writes are not run in SQLite at
// once: they join the batch's held writes, where a later write of the same
// key replaces an earlier one, and all of them run just before the COMMIT.
// Records that many Updates rewrite (a queue's message counter, say) then
// cost one SQLite write per group commit instead of one per Update.
//
// Later Updates of the batch see the held writes through Get, and a Scan
// runs them in SQLite first. If running them fails, the whole transaction
// is abandoned and its Updates run again with their writes executed one
// Update at a time, so the failure is charged to the Update that caused it.

// holdWrite adds w to the batch's held writes and to the writer cache.
func (s *Store) holdWrite(w pendingWrite) {
	if s.bpendIdx == nil {
		s.bpendIdx = make(map[string]int, 64)
	}
	if i, ok := s.bpendIdx[string(w.key)]; ok {
		s.bpend[i] = w
	} else {
		s.bpendIdx[string(w.key)] = len(s.bpend)
		s.bpend = append(s.bpend, w)
	}
	s.cache.record(w)
}

// heldWrite returns the held write of key.
func (s *Store) heldWrite(key []byte) (pendingWrite, bool) {
	i, ok := s.bpendIdx[string(key)]
	if !ok {
		return pendingWrite{}, false
	}
	return s.bpend[i], true
}

// flushDeferred runs the held writes in SQLite and forgets them.
func (s *Store) flushDeferred() error {
	defer s.dropDeferred()
	for _, w := range s.bpend {
		if err := s.writer.write(w); err != nil {
			return err
		}
	}
	return nil
}

// dropDeferred forgets the held writes.
func (s *Store) dropDeferred() {
	clear(s.bpend)
	s.bpend = s.bpend[:0]
	clear(s.bpendIdx)
}

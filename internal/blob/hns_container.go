package blob

// What a container holds on an account with a hierarchical namespace.
// A key's container segment is the home of its parent directory
// (hns_names.go), so a container's records lie under its own segment
// (its top level, and the directories made in it that still lie in it)
// and under the segments of the directories moved in from other
// containers; its segment also holds the records of the directories
// moved out of it. Walking the container's directory ids sorts them out.

import (
	"errors"

	"github.com/lazuli-storage/lazuli/internal/keyenc"
	"github.com/lazuli-storage/lazuli/storage"
)

// containerTree returns the ids of every directory of container c.
func containerTree(tx storage.Tx, acct, c string) (map[string]bool, []string, error) {
	ids := []string{""}
	for i := 0; i < len(ids); i++ {
		_, sub, err := childDirs(tx, acct, c, ids[i])
		if err != nil {
			return nil, nil, err
		}
		ids = append(ids, sub...)
	}
	in := make(map[string]bool, len(ids))
	for _, id := range ids {
		in[id] = true
	}
	return in, ids[1:], nil
}

// containerKeys calls fn with every key and value of the kinds that
// container c holds (values valid during the call only); fn must not
// write. A flat account's are the keys of its prefix.
func containerKeys(tx storage.Tx, hns bool, acct, c string, kinds []byte, fn func(k, v []byte) error) error {
	scan := func(lo []byte, keep func(k []byte) (bool, error)) error {
		it := tx.Scan(lo, keyenc.PrefixEnd(lo), false)
		defer it.Close()
		for it.Next() {
			if keep != nil {
				if ok, err := keep(it.Key()[len(lo):]); err != nil {
					return err
				} else if !ok {
					continue
				}
			}
			if err := fn(it.Key(), it.Value()); err != nil {
				return err
			}
		}
		return it.Err()
	}
	if !hns {
		for _, kind := range kinds {
			if err := scan(tupleKey(kind, acct, c), nil); err != nil {
				return err
			}
		}
		return nil
	}
	in, ids, err := containerTree(tx, acct, c)
	if err != nil {
		return err
	}
	// A key of c's segment belongs to c unless its directory now lies in
	// another container. A directory id no longer indexed (soft-deleted
	// paths of a deleted directory) stays with its home.
	away := map[string]bool{}
	movedOut := func(id string) (bool, error) {
		if in[id] {
			return false, nil
		}
		if a, ok := away[id]; ok {
			return a, nil
		}
		_, err := tx.Get(dirNameKey(acct, id))
		if errors.Is(err, storage.ErrNotFound) {
			err = nil
		}
		away[id] = err == nil
		return away[id], err
	}
	for _, kind := range kinds {
		if err := containerKind(tx, acct, c, kind, ids, movedOut, scan); err != nil {
			return err
		}
	}
	return nil
}

// containerKind is containerKeys of one kind, given the ids of the
// container's directories and what tells a directory moved out.
func containerKind(tx storage.Tx, acct, c string, kind byte, ids []string, movedOut func(string) (bool, error), scan func([]byte, func([]byte) (bool, error)) error) error {
	err := scan(tupleKey(kind, acct, c), func(rest []byte) (bool, error) {
		k, _, err := keyenc.ReadString(rest)
		if err != nil {
			return false, err
		}
		id := k
		if kind != kindDirName {
			if id, _, _ = splitKey(pathKey(k)); len(k) == 0 || k[0] != keySep[0] {
				return true, nil // a full name (soft-deleted copies)
			}
		}
		out, err := movedOut(id)
		return !out, err
	})
	if err != nil {
		return err
	}
	for _, id := range ids {
		h := idSeg(c, id)
		if h == c {
			continue
		}
		lo := keyenc.AppendPrefix(tupleKey(kind, acct, h), keySep+id+keySep)
		if kind == kindDirName {
			lo = tupleKey(kind, acct, h, id)
		}
		if err := scan(lo, nil); err != nil {
			return err
		}
	}
	return nil
}

// collectContainerKeys is containerKeys gathered, for callers that write.
func collectContainerKeys(tx storage.Tx, hns bool, acct, c string, kinds []byte) ([][2][]byte, error) {
	var kvs [][2][]byte
	err := containerKeys(tx, hns, acct, c, kinds, func(k, v []byte) error {
		kvs = append(kvs, [2][]byte{append([]byte(nil), k...), append([]byte(nil), v...)})
		return nil
	})
	return kvs, err
}

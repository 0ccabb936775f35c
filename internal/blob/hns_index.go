package blob

// Upkeep of the name index (hns_names.go) on accounts with a hierarchical
// namespace: a directory gets its id in the transaction that makes its
// record, keeps it through renames (only its own entry moves) and loses
// it, with the entries of every directory under it, in the transaction
// that deletes its record. Accounts without a namespace keep no index.

import (
	"errors"
	"strings"

	"github.com/lazuli-storage/lazuli/internal/keyenc"
	"github.com/lazuli-storage/lazuli/storage"
)

// indexDir returns the index key and id of the directory name, giving an
// id to it and to every ancestor that has none yet (the caller has made
// their records). ok is false on an account without a namespace.
func (s *Service) indexDir(tx storage.Tx, acct, c, name string) (key pathKey, id string, ok bool, err error) {
	if !s.HierarchicalNamespace(acct) {
		return "", "", false, nil
	}
	rest := name
	for {
		leaf, more, deeper := strings.Cut(rest, "/")
		key = childKey(id, leaf)
		sub, found, err := dirIDOf(tx, acct, c, key)
		if err != nil {
			return "", "", false, err
		}
		if !found {
			sub = s.newDirID(c)
			if err := putDirID(tx, acct, c, key, sub); err != nil {
				return "", "", false, err
			}
		}
		id = sub
		if !deeper {
			return key, id, true, nil
		}
		rest = more
	}
}

// unindexDir removes the index entries of the directory name and of every
// directory under it; nothing when name is not an indexed directory.
func (s *Service) unindexDir(tx storage.Tx, acct, c, name string) error {
	if !s.HierarchicalNamespace(acct) {
		return nil
	}
	key, _, err := resolveKey(tx, acct, c, name)
	if errors.Is(err, errNotDir) {
		return nil
	}
	if err != nil {
		return err
	}
	id, ok, err := dirIDOf(tx, acct, c, key)
	if err != nil || !ok {
		return err
	}
	return dropDirTree(tx, acct, c, key, id)
}

// dropDirTree removes the entries of the directory id under key and of
// the directories under it, depth first.
func dropDirTree(tx storage.Tx, acct, c string, key pathKey, id string) error {
	keys, ids, err := childDirs(tx, acct, c, id)
	if err != nil {
		return err
	}
	for i := range keys {
		if err := dropDirTree(tx, acct, c, keys[i], ids[i]); err != nil {
			return err
		}
	}
	return dropDirID(tx, acct, c, key, id)
}

// childDirs returns the key names and ids of the directories in the
// directory id.
func childDirs(tx storage.Tx, acct, c, id string) (keys []pathKey, ids []string, err error) {
	base := tupleKey(kindDirID, acct, idSeg(c, id))
	lo := keyenc.AppendPrefix(append([]byte(nil), base...), keySep+id+keySep)
	it := tx.Scan(lo, keyenc.PrefixEnd(lo), false)
	defer it.Close()
	for it.Next() {
		k, _, err := keyenc.ReadString(it.Key()[len(base):])
		if err != nil {
			return nil, nil, err
		}
		keys, ids = append(keys, pathKey(k)), append(ids, string(it.Value()))
	}
	return keys, ids, it.Err()
}

// renameDirIndex moves the index entry of the directory src to dst, in
// the rename's transaction: one entry, whatever lies under it (the
// directories under it keep theirs, keyed by its id and its home), within
// a container or to another one of the account. To an account without a
// namespace it drops the entries of the whole subtree.
func (s *Service) renameDirIndex(tx storage.Tx, src, dst Ref) error {
	from, id, ok, err := s.indexDir(tx, src.Account, src.Container, src.Name)
	if err != nil || !ok {
		return err
	}
	if !s.HierarchicalNamespace(dst.Account) {
		return dropDirTree(tx, src.Account, src.Container, from, id)
	}
	parent := ""
	if p := parentOf(dst.Name); p != "" {
		if _, parent, _, err = s.indexDir(tx, dst.Account, dst.Container, p); err != nil {
			return err
		}
	}
	to := childKey(parent, dst.Name[strings.LastIndexByte(dst.Name, '/')+1:])
	return moveDirID(tx, src.Account, src.Container, dst.Container, from, to, id)
}

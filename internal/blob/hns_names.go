package blob

// Name index of an account with a hierarchical namespace: the layout that
// makes renaming a directory cost the same whatever lies under it.
//
// Every record of a path (blob record and snapshots, block list, blocks,
// pages, append chunks, access control, tag index, expiry, soft-deleted
// copies) is keyed by the path's key name instead of its full name. The
// key name is the stable id of the parent directory and the leaf:
//
//	keySep parentID keySep leaf        ("" is the id of the root)
//
// so that the paths under a directory keep their keys when it, or any
// directory above it, is renamed: a rename moves the records of the one
// path it names (and its index entries), never those of its descendants.
// A directory's id is fixed when it is made; two entries map it both ways:
//
//	n account home keyName -> id     (resolving a name, level by level)
//	N account home id -> [container] keyName
//	                                 (the full name of a key, for tag
//	                                  search, expiry and outputs; the
//	                                  container only at the top level)
//
// The container segment of every key is the HOME of the key's parent
// directory: the container the directory was made in, written into its
// id, or the container itself for a top-level path. The paths under a
// directory thus keep their keys when it moves to another container of
// the account too, and such a rename costs what one within a container
// does. What walks a container (delete, soft delete, tag search) goes by
// the tree, not by the container's key prefix: hns_container.go.
//
// Resolving a name reads the n entry of each ancestor inside the caller's
// transaction, so a rename of any ancestor (which deletes that entry)
// conflicts with it on every engine: the name a transaction acted on is
// the name it commits under.
//
// The paths of one directory are one range of keys in leaf order; a flat
// listing is a depth-first walk that places each directory's subtree
// where leaf+"/" sorts among its siblings (after "b.txt" for directory
// "b", since '.' < '/'), which yields the full names in byte order.

import (
	"errors"
	"sort"
	"strings"

	"github.com/lazuli-storage/lazuli/internal/keyenc"
	"github.com/lazuli-storage/lazuli/storage"
)

const (
	kindDirID   = 'n'
	kindDirName = 'N'
)

// keySep frames the parent id of a key name. Names never hold it
// (ValidateBlobName refuses control characters), nor do ids.
const keySep = "\x01"

// errNotDir is resolveKey's answer for a name with an ancestor that does
// not exist or is a file.
var errNotDir = errors.New("blob: an ancestor is not a directory")

// childKey is the key name of leaf in the directory dirID ("" the root).
func childKey(dirID, leaf string) pathKey { return pathKey(keySep + dirID + keySep + leaf) }

// splitKey reverses childKey.
func splitKey(key pathKey) (dirID, leaf string, ok bool) {
	k, ok := strings.CutPrefix(string(key), keySep)
	if !ok {
		return "", "", false
	}
	return strings.Cut(k, keySep)
}

// homeSep ends the home container in a directory id; container names
// never hold it.
const homeSep = ":"

// newDirID is a new id for a directory made in container c.
func (s *Service) newDirID(c string) string { return c + homeSep + s.newID() }

// idSeg is the container segment of the keys of the paths in the
// directory id of container c: c for its root ("").
func idSeg(c, id string) string {
	if h, _, ok := strings.Cut(id, homeSep); ok {
		return h
	}
	return c
}

// segOf is the container segment of the records of the key k in
// container c: the home of its parent directory. A flat account's key
// (a full name, never holding keySep) keeps c. Passing a segment for c
// gives the same segment, so a key read back from storage can be used
// with the segment it was found under.
func segOf(c string, k pathKey) string {
	if len(k) == 0 || k[0] != keySep[0] {
		return c
	}
	id, _, _ := splitKey(k)
	return idSeg(c, id)
}

func dirIDKey(acct, c string, key pathKey) []byte {
	return tupleKey(kindDirID, acct, segOf(c, key), string(key))
}
func dirNameKey(acct, id string) []byte { return tupleKey(kindDirName, acct, idSeg("", id), id) }

// dirNameValue is the N entry of a directory keyed key in container c:
// the container goes with a top-level key, whose segment is its own.
func dirNameValue(c string, key pathKey) []byte {
	if id, _, _ := splitKey(key); id != "" {
		return []byte(key)
	}
	return []byte(c + string(key))
}

// dirIDOf returns the id of the directory stored under key (ok false when
// key is not a directory).
func dirIDOf(tx storage.Tx, acct, c string, key pathKey) (id string, ok bool, err error) {
	v, err := tx.Get(dirIDKey(acct, c, key))
	if errors.Is(err, storage.ErrNotFound) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return string(v), true, nil
}

// resolveKey returns the key name of name and the id of its parent
// directory; errNotDir when an ancestor is missing or a file.
func resolveKey(tx storage.Tx, acct, c, name string) (key pathKey, parentID string, err error) {
	for {
		leaf, rest, more := strings.Cut(name, "/")
		k := childKey(parentID, leaf)
		if !more {
			return k, parentID, nil
		}
		id, ok, err := dirIDOf(tx, acct, c, k)
		if err != nil {
			return "", "", err
		}
		if !ok {
			return "", "", errNotDir
		}
		parentID, name = id, rest
	}
}

// putDirID records that key is the directory id.
func putDirID(tx storage.Tx, acct, c string, key pathKey, id string) error {
	if err := tx.Set(dirIDKey(acct, c, key), []byte(id)); err != nil {
		return err
	}
	return tx.Set(dirNameKey(acct, id), dirNameValue(c, key))
}

// moveDirID re-homes the directory id from key from in container fc to
// key to in container tc: the whole index change of renaming a directory.
func moveDirID(tx storage.Tx, acct, fc, tc string, from, to pathKey, id string) error {
	if err := tx.Delete(dirIDKey(acct, fc, from)); err != nil {
		return err
	}
	return putDirID(tx, acct, tc, to, id)
}

// dropDirID removes the index entries of the directory id under key.
func dropDirID(tx storage.Tx, acct, c string, key pathKey, id string) error {
	if err := tx.Delete(dirIDKey(acct, c, key)); err != nil {
		return err
	}
	return tx.Delete(dirNameKey(acct, id))
}

// fullName is the name of the path stored under key, from the parent
// links of its ancestors.
func fullName(tx storage.Tx, acct, c string, key pathKey) (string, error) {
	_, name, err := fullPath(tx, acct, c, key)
	return name, err
}

// fullPath is the container and name of the path stored under key with
// the container segment seg: its ancestors may have come from another
// container, the top one knows where it lies.
func fullPath(tx storage.Tx, acct, seg string, key pathKey) (c, name string, err error) {
	c = seg
	var parts []string
	for {
		id, leaf, ok := splitKey(key)
		if !ok {
			return "", "", errors.New("blob: corrupt key name")
		}
		parts = append(parts, leaf)
		if id == "" {
			break
		}
		v, err := tx.Get(dirNameKey(acct, id))
		if err != nil {
			return "", "", err
		}
		i := strings.Index(string(v), keySep)
		if i < 0 {
			return "", "", errors.New("blob: corrupt directory entry")
		}
		if i > 0 {
			c = string(v[:i])
		}
		key = pathKey(v[i:])
	}
	for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
		parts[i], parts[j] = parts[j], parts[i]
	}
	return c, strings.Join(parts, "/"), nil
}

// treeWalk visits the blob records (every snapshot slot) of the paths
// under one directory in full-name order, one range scan per directory.
type treeWalk struct {
	tx      storage.Tx
	acct, c string
	// kind is the kind of the records walked; snaps says their keys end
	// in a snapshot slot.
	kind  byte
	snaps bool
	stack []*walkFrame
	err   error

	// Name, Snap and Value describe the current record (Value valid
	// until the next call to Next).
	Name, Snap string
	Value      []byte
	cur        *walkFrame
}

// Key is the key name of the current record.
func (w *treeWalk) Key() pathKey { return childKey(w.cur.id, w.cur.rec.leaf) }

// walkFrame is one directory of a walk: its records and its child
// directories, and the children whose subtree is still to come, ordered
// by leaf+"/".
type walkFrame struct {
	dir, id         string // full name ("" the root) and id
	recs, dirs      storage.Iterator
	recBase, idBase []byte
	// rec is the next record; stale once handed out, until the scan
	// moves (lazily, so that Value needs no copy).
	rec struct {
		ok, stale  bool
		leaf, snap string
	}
	sub struct {
		ok       bool
		leaf, id string
	}
	pending []pendingDir
}

type pendingDir struct{ sortKey, leaf, id string }

// walkTree starts a walk of the directory dir (full name, "" the root)
// with id, over its paths whose leaf under dir starts with leafPrefix,
// from the first path at or after the full name from ("" from the
// start).
func walkTree(tx storage.Tx, acct, c, dir, id, leafPrefix, from string) *treeWalk {
	return walkRecords(tx, kindBlob, true, acct, c, dir, id, leafPrefix, from)
}

// walkRecords is walkTree over the records of kind (snaps: keyed with a
// snapshot slot) instead of the blob records.
func walkRecords(tx storage.Tx, kind byte, snaps bool, acct, c, dir, id, leafPrefix, from string) *treeWalk {
	w := &treeWalk{tx: tx, acct: acct, c: c, kind: kind, snaps: snaps}
	rel := ""
	if from != "" {
		if dir == "" {
			rel = from
		} else if r, ok := strings.CutPrefix(from, dir+"/"); ok {
			rel = r
		} else if from > dir+"/" {
			rel = "\xff" // past the whole tree
		}
	}
	if rel != "" && rel < leafPrefix {
		rel = ""
	}
	if rel != "" && !strings.HasPrefix(rel, leafPrefix) {
		return w // the start lies past every path of the walk
	}
	w.seek(dir, id, leafPrefix, rel)
	return w
}

// seek pushes the frame of dir and, when rel (the start, relative to
// dir) lies in a child directory, the frames down to it.
func (w *treeWalk) seek(dir, id, leafPrefix, rel string) {
	f := &walkFrame{dir: dir, id: id}
	seg := idSeg(w.c, id)
	f.recBase = keyenc.AppendPrefix(tupleKey(w.kind, w.acct, seg), keySep+id+keySep)
	f.idBase = keyenc.AppendPrefix(tupleKey(kindDirID, w.acct, seg), keySep+id+keySep)
	lo := func(base []byte) []byte {
		s := leafPrefix
		if rel > s {
			s = rel
		}
		return keyenc.AppendPrefix(append([]byte(nil), base...), s)
	}
	hi := func(base []byte) []byte {
		return keyenc.PrefixEnd(keyenc.AppendPrefix(append([]byte(nil), base...), leafPrefix))
	}
	f.recs = w.tx.Scan(lo(f.recBase), hi(f.recBase), false)
	f.dirs = w.tx.Scan(lo(f.idBase), hi(f.idBase), false)
	w.stack = append(w.stack, f)
	w.advanceRec(f)
	w.advanceSub(f)
	if rel == "" {
		return
	}
	// A directory whose leaf is a proper prefix of rel followed by a byte
	// below '/' sorts before rel, its subtree after: it is pending. The
	// first component of a rel with '/' holds the start itself.
	for i := 0; i < len(rel); i++ {
		if rel[i] > '/' {
			continue
		}
		leaf := rel[:i]
		if !strings.HasPrefix(leaf, leafPrefix) {
			if rel[i] == '/' {
				return
			}
			continue
		}
		sub, ok, err := dirIDOf(w.tx, w.acct, w.c, childKey(id, leaf))
		if err != nil {
			w.err = err
			return
		}
		if rel[i] == '/' {
			if ok {
				w.seek(join(dir, leaf), sub, "", rel[i+1:])
			}
			return
		}
		if ok {
			f.push(pendingDir{leaf + "/", leaf, sub})
		}
	}
}

func join(dir, leaf string) string {
	if dir == "" {
		return leaf
	}
	return dir + "/" + leaf
}

func (f *walkFrame) push(p pendingDir) {
	i := sort.Search(len(f.pending), func(i int) bool { return f.pending[i].sortKey > p.sortKey })
	f.pending = append(f.pending, pendingDir{})
	copy(f.pending[i+1:], f.pending[i:])
	f.pending[i] = p
}

func (w *treeWalk) advanceRec(f *walkFrame) {
	f.rec.stale = false
	if f.rec.ok = f.recs.Next(); !f.rec.ok {
		w.setErr(f.recs.Err())
		return
	}
	leaf, rest, err := keyenc.ReadString(f.recs.Key()[len(f.recBase):])
	if err != nil {
		w.setErr(err)
		f.rec.ok = false
		return
	}
	snap := ""
	if w.snaps {
		if snap, _, err = keyenc.ReadString(rest); err != nil {
			w.setErr(err)
			f.rec.ok = false
			return
		}
	}
	f.rec.leaf, f.rec.snap = leaf, snap
}

func (w *treeWalk) advanceSub(f *walkFrame) {
	if f.sub.ok = f.dirs.Next(); !f.sub.ok {
		w.setErr(f.dirs.Err())
		return
	}
	leaf, _, err := keyenc.ReadString(f.dirs.Key()[len(f.idBase):])
	if err != nil {
		w.setErr(err)
		f.sub.ok = false
		return
	}
	f.sub.leaf, f.sub.id = leaf, string(f.dirs.Value())
}

func (w *treeWalk) setErr(err error) {
	if err != nil && w.err == nil {
		w.err = err
	}
}

// Next moves to the next record; false at the end or on an error (Err).
func (w *treeWalk) Next() bool {
	for w.err == nil && len(w.stack) > 0 {
		f := w.stack[len(w.stack)-1]
		if f.rec.stale {
			w.advanceRec(f)
			continue
		}
		// The next output is the least of the next record's leaf and the
		// sort keys of the subtrees to come. A child directory not yet
		// read sorts at or after its leaf, so reading those below that
		// least value is enough to know it.
		least, have := "", false
		if f.rec.ok {
			least, have = f.rec.leaf, true
		}
		if len(f.pending) > 0 && (!have || f.pending[0].sortKey < least) {
			least, have = f.pending[0].sortKey, true
		}
		for f.sub.ok && (!have || f.sub.leaf < least) {
			f.push(pendingDir{f.sub.leaf + "/", f.sub.leaf, f.sub.id})
			if !have || f.sub.leaf+"/" < least {
				least, have = f.sub.leaf+"/", true
			}
			w.advanceSub(f)
		}
		if w.err != nil {
			break
		}
		if len(f.pending) > 0 && (!f.rec.ok || f.pending[0].sortKey < f.rec.leaf) {
			p := f.pending[0]
			f.pending = f.pending[1:]
			w.seek(join(f.dir, p.leaf), p.id, "", "")
			continue
		}
		if !f.rec.ok {
			f.close()
			w.stack = w.stack[:len(w.stack)-1]
			continue
		}
		w.Name, w.Snap, w.Value = join(f.dir, f.rec.leaf), f.rec.snap, f.recs.Value()
		f.rec.stale = true
		w.cur = f
		return true
	}
	return false
}

// Err is the error that ended the walk, if any.
func (w *treeWalk) Err() error { return w.err }

// Close releases the scans of the walk.
func (w *treeWalk) Close() {
	for _, f := range w.stack {
		f.close()
	}
	w.stack = nil
}

func (f *walkFrame) close() {
	f.recs.Close()
	f.dirs.Close()
}

// keyOf is the key name of the path name in container c: the one place a
// path's name becomes the key its records live under. An account without
// a hierarchical namespace keys a path by its full name.
func (s *Service) keyOf(tx storage.Tx, acct, c, name string) (pathKey, error) {
	return nameKey(tx, s.HierarchicalNamespace(acct), acct, c, name)
}

// nameKey is keyOf for code that knows whether the account has a
// hierarchical namespace (hns) without the Service at hand.
func nameKey(tx storage.Tx, hns bool, acct, c, name string) (pathKey, error) {
	if !hns {
		return plainKey(name), nil
	}
	k, _, err := resolveKey(tx, acct, c, name)
	if errors.Is(err, errNotDir) {
		return absentKey(name), nil
	}
	return k, err
}

// keyName is the container and full name of the path keyed k under the
// container segment seg (keyOf reversed).
func keyName(tx storage.Tx, hns bool, acct, seg string, k pathKey) (c, name string, err error) {
	if !hns {
		return seg, string(k), nil
	}
	return fullPath(tx, acct, seg, k)
}

// absentKey keys a path whose parent directory does not exist: no record
// is ever stored under it (no directory id holds keySep), so a read finds
// nothing.
func absentKey(name string) pathKey { return childKey(keySep, name) }

// getBlobNamed loads the base record of the path name (nil when there is
// none).
func getBlobNamed(tx storage.Tx, hns bool, acct, c, name string) (*Blob, error) {
	k, err := nameKey(tx, hns, acct, c, name)
	if err != nil {
		return nil, err
	}
	return getBlob(tx, acct, c, k, name, "")
}

// keyed resolves the key name of ref in tx (keyOf); every operation keys
// its refs in its own transaction, so a rename of an ancestor conflicts
// with it.
func (s *Service) keyed(tx storage.Tx, ref *Ref) error {
	k, err := s.keyOf(tx, ref.Account, ref.Container, ref.Name)
	ref.k = k
	return err
}

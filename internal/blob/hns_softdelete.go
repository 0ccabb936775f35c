package blob

// Path soft delete on an account with a hierarchical namespace: with the
// DeleteRetentionPolicy on, a deleted file or directory becomes one
// deleted entry with its own deletion id, as on Azure; a directory
// deleted recursively is one entry whose tree comes back with it (List
// Deleted Paths shows the directory alone). The same name deleted twice
// gives two entries. Undelete Path brings one entry back by its id.
//
// The entry of the deleted path is keyed by its full name, so that it
// outlives the directories it was deleted from; the paths of a deleted
// tree hang under the entry's key, so that listings of deleted paths
// never walk them.

import (
	"context"
	"encoding/binary"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/keyenc"
	"github.com/lazuli-storage/lazuli/internal/lease"
	"github.com/lazuli-storage/lazuli/storage"
)

// Key kinds of path soft delete (see the key table in model.go).
const (
	// kindDeletedPath: P account container name deletionid -> the
	// deleted path's record (deletedPathTag layout).
	kindDeletedPath = 'P'
	// kindDeletedTree: Q account container name deletionid subpath -> a
	// path of the deleted directory's tree, same layout.
	kindDeletedTree = 'Q'
	// kindPathExpiry: Y expiry(uint64 ns) account container name
	// deletionid -> nothing; the purge scans it up to the clock.
	kindPathExpiry = 'Y'
)

func deletedPathKey(acct, c, name, id string) []byte {
	return tupleKey(kindDeletedPath, acct, c, name, id)
}

func deletedTreePrefix(acct, c, name, id string) []byte {
	return tupleKey(kindDeletedTree, acct, c, name, id)
}

func pathExpiryKey(at time.Time, acct, c, name, id string) []byte {
	k := keyenc.AppendUint64([]byte{kindPathExpiry}, uint64(at.UnixNano()))
	for _, p := range [...]string{acct, c, name, id} {
		k = keyenc.AppendString(k, p)
	}
	return k
}

// fileTimeEpoch is 1601-01-01 in Unix seconds: deletion ids count 100 ns
// ticks from it, the shape of Azure's numeric deletion ids.
const fileTimeEpoch = -11644473600

// deletionIDAt is the deletion id of a deletion at t.
func deletionIDAt(t time.Time) string {
	return strconv.FormatUint(uint64(t.Unix()-fileTimeEpoch)*1e7+uint64(t.Nanosecond()/100), 10)
}

// deletionTime is the time a deletion id was given at (false: not an id).
func deletionTime(id string) (time.Time, bool) {
	n, err := strconv.ParseUint(id, 10, 64)
	if err != nil || len(id) > 19 || strconv.FormatUint(n, 10) != id {
		return time.Time{}, false
	}
	return time.Unix(int64(n/1e7)+fileTimeEpoch, int64(n%1e7)*100).UTC(), true
}

// DeletedPath is one entry of List Deleted Paths.
type DeletedPath struct {
	Blob       *Blob
	DeletionID string
	Deleted    Deletion
}

// deletedPathTag starts a deleted path value: the tag, the length of the
// encoded access control (uvarint), that encoding, then the deleted record
// (encodeDeleted).
const deletedPathTag = 0x02

func encodeDeletedPath(b *Blob, a PathACL, d Deletion) []byte {
	acl := encodeACL(a)
	v := binary.AppendUvarint([]byte{deletedPathTag}, uint64(len(acl)))
	return append(append(v, acl...), encodeDeleted(b, d)...)
}

func decodeDeletedPath(v []byte) (*Blob, *PathACL, Deletion, error) {
	if len(v) < 2 || v[0] != deletedPathTag {
		return nil, nil, Deletion{}, errCorruptBlob
	}
	n, w := binary.Uvarint(v[1:])
	if w <= 0 || uint64(len(v)-1-w) < n {
		return nil, nil, Deletion{}, errCorruptBlob
	}
	a, err := decodeACL(v[1+w : 1+w+int(n)])
	if err != nil {
		return nil, nil, Deletion{}, err
	}
	b, d, err := decodeDeleted(v[1+w+int(n):])
	return b, a, d, err
}

// pathSoftDelete is one soft delete of a path in progress: its deletion id
// and when its retention ends.
type pathSoftDelete struct {
	id string
	d  Deletion
}

// newPathSoftDelete gives a deletion of name at now an id no entry of the
// name holds.
func newPathSoftDelete(tx storage.Tx, acct, c, name string, pol *DeletePolicy, now time.Time) (*pathSoftDelete, error) {
	for t := now; ; t = t.Add(100 * time.Nanosecond) {
		id := deletionIDAt(t)
		if _, err := tx.Get(deletedPathKey(acct, c, name, id)); errors.Is(err, storage.ErrNotFound) {
			return resumePathSoftDelete(id, pol), nil
		} else if err != nil {
			return nil, err
		}
	}
}

// resumePathSoftDelete is the soft delete of id carried on by a later
// batch of a recursive Path - Delete.
func resumePathSoftDelete(id string, pol *DeletePolicy) *pathSoftDelete {
	t, _ := deletionTime(id)
	return &pathSoftDelete{id: id, d: Deletion{Time: t, Days: pol.Days}}
}

// keep stores the live path name (keyed k) as part of the deletion of
// root: as its entry when name is root, in its tree otherwise. The caller
// removes the live records.
func (sd *pathSoftDelete) keep(tx storage.Tx, acct, c, root, name string, k pathKey) error {
	b, err := getBlob(tx, acct, c, k, name, "")
	if err != nil || b == nil {
		return err
	}
	a, err := loadACL(tx, acct, c, b)
	if err != nil {
		return err
	}
	if err := hydrate(tx, acct, c, b); err != nil {
		return err
	}
	rec := *b
	rec.Lease, rec.ExtBlocks = lease.State{}, false
	v := encodeDeletedPath(&rec, a, sd.d)
	if err := tx.Set(pathExpiryKey(sd.d.Expires(), acct, c, root, sd.id), nil); err != nil {
		return err
	}
	if name == root {
		return tx.Set(deletedPathKey(acct, c, root, sd.id), v)
	}
	return tx.Set(keyenc.AppendString(deletedTreePrefix(acct, c, root, sd.id), name), v)
}

// softDeleteContinuation marks a continuation of a recursive Path - Delete
// that carries a deletion id (NUL is in no path name).
const softDeleteContinuation = "\x00sd"

func encodeDeleteContinuation(sd *pathSoftDelete, next string) string {
	if sd == nil || next == "" {
		return next
	}
	return softDeleteContinuation + sd.id + "\x00" + next
}

// continuedDeletion is the deletion id a continuation carries ("" when none).
func continuedDeletion(cont string) string {
	rest, ok := strings.CutPrefix(cont, softDeleteContinuation)
	if !ok {
		return ""
	}
	id, _, _ := strings.Cut(rest, "\x00")
	if _, ok := deletionTime(id); !ok {
		return ""
	}
	return id
}

// softDeleteBase is Delete Blob of a base blob on an account with a
// hierarchical namespace and the policy on: its snapshots (when
// deleteSnapshots says so) become deleted snapshots as on any account,
// and the path itself a deleted path entry.
func (s *Service) softDeleteBase(tx storage.Tx, ref Ref, deleteSnapshots string, pol *DeletePolicy, now time.Time) error {
	snaps, err := snapshotIDs(tx, ref)
	if err != nil {
		return err
	}
	if len(snaps) > 0 {
		if deleteSnapshots == "" {
			return azerr.New(azerr.SnapshotsPresent)
		}
		if err := removeBlob(tx, ref, "only", pol, false, now); err != nil {
			return err
		}
	}
	sd, err := newPathSoftDelete(tx, ref.Account, ref.Container, ref.Name, pol, now)
	if err != nil {
		return err
	}
	if err := sd.keep(tx, ref.Account, ref.Container, ref.Name, ref.Name, ref.key()); err != nil {
		return err
	}
	return s.deletePathRecords(tx, ref.Account, ref.Container, ref.Name, ref.key(), false)
}

// ListDeletedPaths is List Blobs with showonly=deleted on an account with
// a hierarchical namespace: the deleted path entries whose names start
// with prefix, in name and deletion id order, from after marker, at most
// max; next is the marker of the rest ("" when none).
func (s *Service) ListDeletedPaths(ctx context.Context, acct, c, prefix, marker string, max int) (out []DeletedPath, next string, err error) {
	err = s.eng.View(ctx, func(tx storage.Tx) error {
		out, next = nil, ""
		if err := containerExists(tx, acct, c); err != nil {
			return err
		}
		if z := authzFor(ctx, tx, acct, c); z != nil {
			// A caller with an identity lists the root, as List Paths.
			if err := z.access("", permR|permX); err != nil {
				return err
			}
		}
		now := s.now()
		base := tupleKey(kindDeletedPath, acct, c)
		lo := keyenc.AppendPrefix(append([]byte(nil), base...), prefix)
		hi := keyenc.PrefixEnd(lo)
		if id, name, ok := strings.Cut(marker, "!"); ok {
			// The marker is the last entry a page returned.
			if from := append(keyenc.AppendString(keyenc.AppendString(append([]byte(nil), base...), name), id), 0); string(from) > string(lo) {
				lo = from
			}
		}
		it := tx.Scan(lo, hi, false)
		defer it.Close()
		for it.Next() {
			name, rest, err := keyenc.ReadString(it.Key()[len(base):])
			if err != nil {
				return err
			}
			id, _, err := keyenc.ReadString(rest)
			if err != nil {
				return err
			}
			b, _, d, err := decodeDeletedPath(it.Value())
			if err != nil {
				return err
			}
			if !now.Before(d.Expires()) {
				continue
			}
			if len(out) == max {
				last := out[len(out)-1]
				next = last.DeletionID + "!" + last.Blob.Name
				return nil
			}
			b.Name, b.AsOf = name, now
			out = append(out, DeletedPath{Blob: b, DeletionID: id, Deleted: d})
		}
		return it.Err()
	})
	return out, next, err
}

// UndeletePath is Undelete Path (Undelete Blob with x-ms-undelete-source
// naming a deletion id): the deleted entry id of the path at ref comes
// back, a directory with its whole tree as it was. It reports whether the
// path is a directory. An unknown or expired id is 404 BlobNotFound; a
// live path of the name 409 PathAlreadyExists (PathConflict when it is of
// the other type, as for Undelete Blob); a parent that no longer
// exists 404 ParentNotFound, and one that is now a file 409 PathConflict.
func (s *Service) UndeletePath(ctx context.Context, ref Ref, id string) (dir bool, err error) {
	return s.undeletePath(ctx, ref, id, false)
}

// undeletePath is UndeletePath; makeParents (Undelete Blob without a
// deletion id) makes the missing parents as a Blob write makes them
// instead of answering 404 ParentNotFound.
func (s *Service) undeletePath(ctx context.Context, ref Ref, id string, makeParents bool) (dir bool, err error) {
	err = s.eng.Update(ctx, func(tx storage.Tx) error {
		if err := checkPath(ctx, tx, ref, OpWrite); err != nil {
			return err
		}
		if err := containerExists(tx, ref.Account, ref.Container); err != nil {
			return err
		}
		now := s.now()
		v, err := tx.Get(deletedPathKey(ref.Account, ref.Container, ref.Name, id))
		if errors.Is(err, storage.ErrNotFound) {
			return azerr.New(azerr.BlobNotFound)
		}
		if err != nil {
			return err
		}
		root, rootACL, d, err := decodeDeletedPath(v)
		if err != nil {
			return err
		}
		if !now.Before(d.Expires()) {
			return azerr.New(azerr.BlobNotFound)
		}
		hns := s.HierarchicalNamespace(ref.Account)
		if p, err := getPath(tx, hns, ref.Account, ref.Container, ref.Name); err != nil {
			return err
		} else if p != nil && p.Dir != root.IsDir() {
			// A file where a directory now is, or the reverse.
			return azerr.New(azerr.PathConflict)
		} else if p != nil {
			return azerr.New(azerr.PathAlreadyExists)
		}
		if parent := parentOf(ref.Name); parent != "" {
			p, err := getPath(tx, hns, ref.Account, ref.Container, parent)
			if err != nil {
				return err
			}
			if p != nil && !p.Dir {
				return azerr.New(azerr.PathConflict)
			}
			if p == nil && !makeParents {
				return azerr.New(azerr.ParentNotFound)
			}
			if p == nil {
				if err := s.ensureParents(tx, ref.Account, ref.Container, ref.Name, now); err != nil {
					return err
				}
			}
		}
		dir = root.IsDir()
		if err := s.restorePath(tx, ref.Account, ref.Container, ref.Name, root, rootACL); err != nil {
			return err
		}
		// The tree comes back in name order: a directory before what it holds.
		tp := deletedTreePrefix(ref.Account, ref.Container, ref.Name, id)
		type kept struct {
			name string
			b    *Blob
			a    *PathACL
		}
		var tree []kept
		it := tx.Scan(tp, keyenc.PrefixEnd(tp), false)
		for it.Next() {
			name, _, err := keyenc.ReadString(it.Key()[len(tp):])
			if err != nil {
				it.Close()
				return err
			}
			b, a, _, err := decodeDeletedPath(it.Value())
			if err != nil {
				it.Close()
				return err
			}
			tree = append(tree, kept{name, b, a})
		}
		err = it.Err()
		it.Close()
		if err != nil {
			return err
		}
		for _, k := range tree {
			if err := s.restorePath(tx, ref.Account, ref.Container, k.name, k.b, k.a); err != nil {
				return err
			}
		}
		if err := deleteRange(tx, tp); err != nil {
			return err
		}
		if err := tx.Delete(pathExpiryKey(d.Expires(), ref.Account, ref.Container, ref.Name, id)); err != nil {
			return err
		}
		return tx.Delete(deletedPathKey(ref.Account, ref.Container, ref.Name, id))
	})
	return dir, err
}

// restorePath stores the deleted record b of name back as the live path,
// with its access control, and indexes it when it is a directory (its
// parent is back already).
func (s *Service) restorePath(tx storage.Tx, acct, c, name string, b *Blob, a *PathACL) error {
	k, err := s.keyOf(tx, acct, c, name)
	if err != nil {
		return err
	}
	if b.IsDir() {
		if k, _, _, err = s.indexDir(tx, acct, c, name); err != nil {
			return err
		}
	}
	b.Name, b.key, b.Snapshot = name, k, ""
	if err := putBlob(tx, acct, c, b); err != nil {
		return err
	}
	return putACL(tx, acct, c, k, *a)
}

// undeleteLatestPath is Undelete Blob without a deletion id on a name whose
// soft-deleted states are path entries: the newest file entry comes back
// (the Blob API names blobs), or the newest directory entry when the name
// has no file entry, its missing parents made as a Blob write makes them
// (lazuli's choices: Azure's pages do not say). found is false when the
// name has none.
func (s *Service) undeleteLatestPath(ctx context.Context, ref Ref) (found bool, err error) {
	id := ""
	err = s.eng.View(ctx, func(tx storage.Tx) error {
		p := keyenc.AppendString(tupleKey(kindDeletedPath, ref.Account, ref.Container), ref.Name)
		it := tx.Scan(p, keyenc.PrefixEnd(p), true)
		defer it.Close()
		dirID := ""
		for it.Next() {
			b, _, _, err := decodeDeletedPath(it.Value())
			if err != nil {
				return err
			}
			eid, _, err := keyenc.ReadString(it.Key()[len(p):])
			if err != nil {
				return err
			}
			if !b.IsDir() {
				id = eid // the newest deleted file
				return nil
			}
			if dirID == "" {
				dirID = eid // the newest deleted directory, if no file
			}
		}
		id = dirID
		return it.Err()
	})
	if err != nil || id == "" {
		return false, err
	}
	_, err = s.undeletePath(ctx, ref, id, true)
	return true, err
}

// restorePathExpiry sets the expiry entry of the deleted path entry k
// (value v) of a container that comes back.
func restorePathExpiry(tx storage.Tx, acct, c string, k, v []byte) error {
	rest := k[1:]
	var parts [4]string
	for i := range parts {
		var err error
		if parts[i], rest, err = keyenc.ReadString(rest); err != nil {
			return err
		}
	}
	_, _, d, err := decodeDeletedPath(v)
	if err != nil {
		return err
	}
	return tx.Set(pathExpiryKey(d.Expires(), acct, c, parts[2], parts[3]), nil)
}

// purgeExpiredPaths removes the deleted path entries whose retention
// ended, with their trees.
func (s *Service) purgeExpiredPaths(ctx context.Context) error {
	for {
		n := 0
		err := s.eng.Update(ctx, func(tx storage.Tx) error {
			keys, err := dueKeys(tx, kindPathExpiry, s.now())
			if err != nil {
				return err
			}
			n = len(keys)
			for _, k := range keys {
				var parts [4]string
				_, rest, err := keyenc.ReadUint64(k[1:])
				for i := range parts {
					if err != nil {
						return err
					}
					parts[i], rest, err = keyenc.ReadString(rest)
				}
				if err != nil {
					return err
				}
				if err := tx.Delete(k); err != nil {
					return err
				}
				if err := tx.Delete(deletedPathKey(parts[0], parts[1], parts[2], parts[3])); err != nil {
					return err
				}
				if err := deleteRange(tx, deletedTreePrefix(parts[0], parts[1], parts[2], parts[3])); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil || n < purgeBatch {
			return err
		}
	}
}

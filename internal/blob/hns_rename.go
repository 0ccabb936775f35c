package blob

import (
	"context"
	"strings"
	"time"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/conditional"
	"github.com/lazuli-storage/lazuli/internal/content"
	"github.com/lazuli-storage/lazuli/internal/keyenc"
	"github.com/lazuli-storage/lazuli/internal/lease"
	"github.com/lazuli-storage/lazuli/storage"
)

// RenameRequest is Path - Create with x-ms-rename-source.
type RenameRequest struct {
	Src, Dst Ref
	// SrcCond are the x-ms-source-if-* conditions and
	// x-ms-source-lease-id; DstCond the destination's own.
	SrcCond, DstCond Cond
}

// pathKinds are the record kinds keyed by (account, container, name, ...)
// that move with a path: the record and snapshots, the block list, append
// blocks, pages, the staging record, staged blocks and the access control.
var pathKinds = []byte{kindBlob, kindBlockList, kindAppend, kindPage, kindStaging, kindBlock, kindPathACL}

// RenamePath moves a file, or a directory with everything under it, in
// one transaction: no reader sees part of the tree under either name, and
// a racing rename, create or delete is ordered wholly before or after it.
// The cost is one write per record under the directory (the keys name
// each path in full).
func (s *Service) RenamePath(ctx context.Context, req RenameRequest) (*Path, error) {
	if err := ValidateBlobName(req.Dst.Name); err != nil {
		return nil, err
	}
	src, dst := req.Src, req.Dst
	if src.Container == dst.Container && (dst.Name == src.Name || strings.HasPrefix(dst.Name, src.Name+"/")) {
		return nil, azerr.New(azerr.InvalidRenameSourcePath)
	}
	var out *Path
	err := s.eng.Update(ctx, func(tx storage.Tx) error {
		now := s.now()
		sp, err := getPath(tx, s.HierarchicalNamespace(src.Account), src.Account, src.Container, src.Name)
		if err != nil {
			return err
		}
		if sp == nil {
			return azerr.New(azerr.SourcePathNotFound)
		}
		if err := srcCheck(sp, req.SrcCond, now); err != nil {
			return err
		}
		z := authzFor(ctx, tx, src.Account, src.Container)
		if z != nil {
			if err := z.remove(sp); err != nil {
				return err
			}
		}
		if err := containerExists(tx, dst.Account, dst.Container); err != nil {
			return azerr.New(azerr.FilesystemNotFound)
		}
		if parent := parentOf(dst.Name); parent != "" {
			pp, err := getPath(tx, s.HierarchicalNamespace(dst.Account), dst.Account, dst.Container, parent)
			if err != nil {
				return err
			}
			if pp == nil {
				return azerr.New(azerr.RenameDestinationParentPathNotFound)
			}
			if !pp.Dir {
				return azerr.New(azerr.PathConflict)
			}
		}
		dp, err := getPath(tx, s.HierarchicalNamespace(dst.Account), dst.Account, dst.Container, dst.Name)
		if err != nil {
			return err
		}
		if dp != nil && dp.Blob != nil {
			if _, _, err := s.loadChecked(tx, dst, req.DstCond, checkOpts{create: true}, now); err != nil {
				return err
			}
		} else if dp == nil || dp.Blob == nil {
			st := conditional.State{Exists: dp != nil}
			if o, err := conditional.EvalWrite(req.DstCond.Conditions, st); err != nil {
				return err
			} else if o != conditional.Pass {
				return o.Err(azerr.ConditionNotMet, azerr.PathAlreadyExists)
			}
		}
		if z != nil {
			if err := z.renameTo(dst, dp); err != nil {
				return err
			}
		}
		if dp != nil {
			if dp.Dir != sp.Dir {
				return azerr.New(azerr.InvalidSourceOrDestinationResourceType)
			}
			if dp.Dir {
				if kids, err := hasChildren(tx, dst.Account, dst.Container, dst.Name); err != nil {
					return err
				} else if kids {
					return azerr.New(azerr.PathAlreadyExists)
				}
			}
			if dp.Blob != nil {
				if err := s.deletePathRecords(tx, dst.Account, dst.Container, dst.Name); err != nil {
					return err
				}
			}
		}
		if err := s.materialize(tx, src.Account, src.Container, sp, now); err != nil {
			return err
		}
		if sp.Dir {
			if err := s.renameDirIndex(tx, src, dst); err != nil {
				return err
			}
		}
		if err := movePathKeys(tx, src, dst); err != nil {
			return err
		}
		p, err := getPath(tx, s.HierarchicalNamespace(dst.Account), dst.Account, dst.Container, dst.Name)
		if err != nil {
			return err
		}
		out = p
		return nil
	})
	return out, err
}

// srcCheck applies the source conditions of a rename: 412
// SourceConditionNotMet, and the source lease (x-ms-source-lease-id).
func srcCheck(p *Path, cond Cond, now time.Time) error {
	st := conditional.State{Exists: true}
	var ls lease.State
	if p.Blob != nil {
		st.ETag, st.LastModified, ls = content.ETagRaw(p.Blob.ETag), p.Blob.Modified, p.Blob.Lease
	}
	o, err := conditional.EvalWrite(cond.Conditions, st)
	if err != nil {
		return err
	}
	if o != conditional.Pass {
		return azerr.New(azerr.SourceConditionNotMet).WithStatus(412)
	}
	if _, code := lease.Enforce(ls, cond.LeaseID, true, now, lease.BlobTarget); code != 0 {
		return azerr.New(code)
	}
	return nil
}

// movePathKeys rewrites every key of src and of the paths under it to the
// same key under dst. Values move unchanged but for the path records,
// which carry their name, and the tag index, which names its blobs.
func movePathKeys(tx storage.Tx, src, dst Ref) error {
	for _, kind := range pathKinds {
		base := keyenc.AppendString(keyenc.AppendString([]byte{kind}, src.Account), src.Container)
		newBase := keyenc.AppendString(keyenc.AppendString([]byte{kind}, dst.Account), dst.Container)
		// Keys already under dst (what a Blob delete leaves behind, staged
		// blocks of a blob never committed) are replaced; every other key
		// is new, which PostgreSQL writes with a plain INSERT, cheaper
		// than an upsert.
		taken := map[string]bool{}
		err := scanTree(tx, newBase, dst.Name, func(k, _ []byte) error {
			taken[string(k)] = true
			return nil
		})
		if err != nil {
			return err
		}
		type kv struct{ k, v []byte }
		var moves []kv
		err = scanTree(tx, base, src.Name, func(k, v []byte) error {
			moves = append(moves, kv{append([]byte(nil), k...), append([]byte(nil), v...)})
			return nil
		})
		if err != nil {
			return err
		}
		for _, m := range moves {
			name, rest, err := keyenc.ReadString(m.k[len(base):])
			if err != nil {
				return err
			}
			newName := dst.Name + name[len(src.Name):]
			nk := append(keyenc.AppendString(append([]byte(nil), newBase...), newName), rest...)
			v := m.v
			if kind == kindBlob {
				if v, err = renameRecord(tx, src, dst, name, newName, rest, v); err != nil {
					return err
				}
			}
			if err := tx.Delete(m.k); err != nil {
				return err
			}
			if taken[string(nk)] {
				err = tx.Set(nk, v)
			} else {
				err = storage.Insert(tx, nk, v)
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// scanTree calls fn for each key under base that names the path name or a
// path under it.
func scanTree(tx storage.Tx, base []byte, name string, fn func(k, v []byte) error) error {
	self := keyenc.AppendString(append([]byte(nil), base...), name)
	under := keyenc.AppendPrefix(append([]byte(nil), base...), name+"/")
	for _, lo := range [][]byte{self, under} {
		it := tx.Scan(lo, keyenc.PrefixEnd(lo), false)
		for it.Next() {
			if err := fn(it.Key(), it.Value()); err != nil {
				it.Close()
				return err
			}
		}
		err := it.Err()
		it.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// renameRecord re-encodes a blob record under its new name and moves its
// tag index entries.
func renameRecord(tx storage.Tx, src, dst Ref, name, newName string, rest, v []byte) ([]byte, error) {
	snap, _, err := keyenc.ReadString(rest)
	if err != nil {
		return nil, err
	}
	b, err := decodeBlobAt(v, name, snap)
	if err != nil {
		return nil, err
	}
	if snap == "" {
		for _, kv := range b.Tags {
			if err := tx.Delete(tagIndexKey(src.Account, kv[0], kv[1], src.Container, plainKey(name))); err != nil {
				return nil, err
			}
			if err := tx.Set(tagIndexKey(dst.Account, kv[0], kv[1], dst.Container, plainKey(newName)), nil); err != nil {
				return nil, err
			}
		}
	}
	b.Name = newName
	return encodeBlob(b), nil
}

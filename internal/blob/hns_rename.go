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
// The cost is that of moving the one path's records and index entry,
// whatever lies under a directory, within a container or to another one
// of the account (see hns_names.go).
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
		if err := s.keyed(tx, &src); err != nil {
			return err
		}
		if err := s.keyed(tx, &dst); err != nil {
			return err
		}
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
				if kids, err := hasChildren(tx, s.HierarchicalNamespace(dst.Account), dst.Account, dst.Container, dst.Name); err != nil {
					return err
				} else if kids {
					return azerr.New(azerr.PathAlreadyExists)
				}
			}
			if dp.Blob != nil {
				k, err := s.keyOf(tx, dst.Account, dst.Container, dst.Name)
				if err != nil {
					return err
				}
				if err := s.deletePathRecords(tx, dst.Account, dst.Container, dst.Name, k, true); err != nil {
					return err
				}
			}
		}
		if err := s.materialize(tx, src.Account, src.Container, sp, now); err != nil {
			return err
		}
		from, err := s.keyOf(tx, src.Account, src.Container, src.Name)
		if err != nil {
			return err
		}
		if sp.Dir {
			if err := s.renameDirIndex(tx, src, dst); err != nil {
				return err
			}
		}
		to, err := s.keyOf(tx, dst.Account, dst.Container, dst.Name)
		if err != nil {
			return err
		}
		if err := movePath(tx, src, dst, from, to); err != nil {
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

// movePath moves the records of the one path src names, keyed from, to
// the key to of dst: the whole of a rename, whatever lies under a
// directory (the paths under it are keyed by its id and its home, which
// move with it: renameDirIndex), within a container or to another.
func movePath(tx storage.Tx, src, dst Ref, from, to pathKey) error {
	sseg, dseg := segOf(src.Container, from), segOf(dst.Container, to)
	for _, kind := range pathKinds {
		base, nbase := tupleKey(kind, src.Account, sseg), tupleKey(kind, dst.Account, dseg)
		lo := keyenc.AppendString(append([]byte(nil), base...), string(from))
		nlo := keyenc.AppendString(append([]byte(nil), nbase...), string(to))
		if err := moveRange(tx, kind, base, nbase, lo, nlo, src, dst); err != nil {
			return err
		}
	}
	return nil
}

// moveRange moves every key under the prefix lo to the same key under the
// prefix nlo, values unchanged; a base blob record takes its tag index
// and expiry entries along (they name its key and container). base and
// nbase are the kind's prefixes of the two containers' segments.
func moveRange(tx storage.Tx, kind byte, base, nbase, lo, nlo []byte, src, dst Ref) error {
	type kv struct{ k, v []byte }
	var moves []kv
	it := tx.Scan(lo, keyenc.PrefixEnd(lo), false)
	for it.Next() {
		moves = append(moves, kv{append([]byte(nil), it.Key()...), append([]byte(nil), it.Value()...)})
	}
	err := it.Err()
	it.Close()
	if err != nil {
		return err
	}
	for _, m := range moves {
		nk := append(append([]byte(nil), nlo...), m.k[len(lo):]...)
		if kind == kindBlob {
			if err := moveIndexEntries(tx, src, dst, m.k[len(base):], nk[len(nbase):], m.v); err != nil {
				return err
			}
		}
		if err := tx.Delete(m.k); err != nil {
			return err
		}
		if err := tx.Set(nk, m.v); err != nil {
			return err
		}
	}
	return nil
}

// moveIndexEntries moves the tag index and expiry entries of the blob
// record v from its key (the encoded key name and snapshot, rest) in src's
// container to nrest in dst's: the purge finds an expiring blob through
// its entry, so one left at the old key would leave the blob unpurged.
func moveIndexEntries(tx storage.Tx, src, dst Ref, rest, nrest, v []byte) error {
	key, rest, err := keyenc.ReadString(rest)
	if err != nil {
		return err
	}
	if snap, _, err := keyenc.ReadString(rest); err != nil || snap != "" {
		return err
	}
	nkey, _, err := keyenc.ReadString(nrest)
	if err != nil {
		return err
	}
	b, err := decodeBlobAt(v, "", "")
	if err != nil {
		return err
	}
	for _, kv := range b.Tags {
		if err := tx.Delete(tagIndexKey(src.Account, kv[0], kv[1], src.Container, pathKey(key))); err != nil {
			return err
		}
		if err := tx.Set(tagIndexKey(dst.Account, kv[0], kv[1], dst.Container, pathKey(nkey)), nil); err != nil {
			return err
		}
	}
	if !b.ExpiresOn.IsZero() {
		if err := tx.Delete(blobExpiryKey(b.ExpiresOn, src.Account, src.Container, pathKey(key))); err != nil {
			return err
		}
		if err := tx.Set(blobExpiryKey(b.ExpiresOn, dst.Account, dst.Container, pathKey(nkey)), nil); err != nil {
			return err
		}
	}
	return nil
}

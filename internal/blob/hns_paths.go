package blob

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/conditional"
	"github.com/lazuli-storage/lazuli/internal/content"
	"github.com/lazuli-storage/lazuli/internal/keyenc"
	"github.com/lazuli-storage/lazuli/internal/lease"
	"github.com/lazuli-storage/lazuli/storage"
)

// CreatePathRequest is Path - Create of a file or directory (not a
// rename).
type CreatePathRequest struct {
	Ref
	Dir   bool
	Props Props
	Meta  []KV
	// Permissions (symbolic, already parsed) and Umask (octal) as sent;
	// Owner, Group and ACL are stored when given.
	Permissions, Umask, Owner, Group, ACL string
	Cond                                  Cond
	// EncryptionContext is kept on a file (x-ms-encryption-context);
	// a directory takes none.
	EncryptionContext string
	// Expiry, for a file, is x-ms-expiry-option and x-ms-expiry-time as
	// Set Blob Expiry takes them (nil: none).
	Expiry *ExpiryRequest
}

// MaxEncryptionContext is the longest x-ms-encryption-context Azure takes.
const MaxEncryptionContext = 1024

// CreatePath is Path - Create: a new empty file or a directory, with
// every missing ancestor directory. A file replaces a file (unless
// If-None-Match: * says not to) and drops its uncommitted appends; a
// directory over a directory keeps what is under it.
func (s *Service) CreatePath(ctx context.Context, req CreatePathRequest) (*Path, error) {
	if err := ValidateBlobName(req.Name); err != nil {
		return nil, err
	}
	if err := content.ValidateMetadata(req.Meta); err != nil {
		return nil, err
	}
	var out *Path
	err := s.eng.Update(ctx, func(tx storage.Tx) error {
		if err := s.keyed(tx, &req.Ref); err != nil {
			return err
		}
		now := s.now()
		var staged bool
		old, ls, err := s.loadChecked(tx, req.Ref, req.Cond, checkOpts{create: true, staged: &staged}, now)
		if err != nil {
			return err
		}
		if old != nil && old.IsDir() != req.Dir {
			return azerr.New(azerr.PathConflict)
		}
		if old == nil && !req.Dir {
			if kids, err := hasChildren(tx, s.HierarchicalNamespace(req.Account), req.Account, req.Container, req.Name); err != nil {
				return err
			} else if kids {
				// An implied directory is there.
				return azerr.New(azerr.PathConflict)
			}
		}
		made, err := checkCreate(ctx, tx, req, old)
		if err != nil {
			return err
		}
		if err := s.ensureParents(tx, req.Account, req.Container, req.Name, now); err != nil {
			return err
		}
		// The parents may be new: key the path under them.
		if err := s.keyed(tx, &req.Ref); err != nil {
			return err
		}
		if err := made(); err != nil {
			return err
		}
		var b *Blob
		if req.Dir {
			if _, _, _, err := s.indexDir(tx, req.Account, req.Container, req.Name); err != nil {
				return err
			}
			b = s.newDirRecord(req.key(), req.Name, req.Meta, now)
		} else {
			b = &Blob{Name: req.Name, Type: BlockBlob, Created: now, Modified: s.written(now), Meta: req.Meta, PathCreated: true, EncryptionContext: req.EncryptionContext, key: req.key()}
		}
		b.Props, b.Lease = req.Props, ls
		var prev uint64
		if old != nil {
			prev, b.Created = old.ETag, old.Created
		}
		b.ETag = s.etag(prev, now)
		if staged {
			if err := dropStaged(tx, req.Ref); err != nil {
				return err
			}
		}
		b.replacing(old)
		if req.Expiry != nil && !req.Dir {
			if err := setExpiry(tx, req.Ref, b, *req.Expiry, now); err != nil {
				return err
			}
		}
		if err := putBlob(tx, req.Account, req.Container, b); err != nil {
			return err
		}
		a := defaultACL(req.Dir)
		umask := req.Umask
		if old != nil {
			if a, err = loadACL(tx, req.Account, req.Container, old); err != nil {
				return err
			}
		} else if parent, ok, err := parentACL(tx, req.Account, req.Container, req.Name); err != nil {
			return err
		} else if ok {
			a.Group = parent.Group
			if in, ok := inherit(parent, req.Dir, req.Permissions); ok && req.ACL == "" {
				// The parent's default ACL decides; the umask is ignored.
				a, umask = in, ""
			}
		}
		if umask != req.Umask && req.Umask != "" {
			// A malformed umask is still 400 when it goes unused.
			if _, err := ApplyUmask("rwxrwxrwx", req.Umask); err != nil {
				return err
			}
		}
		perms := req.Permissions
		if umask == "" && old == nil && a.ACL != "" {
			// The create mode is in the inherited ACL already.
			perms = ""
		}
		if err := applyAccess(&a, perms, umask, req.Owner, req.Group, req.ACL, old == nil, req.Dir); err != nil {
			return err
		}
		a.Created = b.Created
		if err := putACL(tx, req.Account, req.Container, req.key(), a); err != nil {
			return err
		}
		out = &Path{Name: req.Name, Dir: req.Dir, Blob: b, ACL: a}
		return nil
	})
	return out, err
}

// applyAccess applies the access headers of a create: the permissions
// given (or the default 0777 / 0666 for a new path) masked by the umask,
// then owner, group and ACL.
func applyAccess(a *PathACL, perms, umask, owner, group, acl string, fresh, dir bool) error {
	if perms != "" || (fresh && umask != "") {
		p := perms
		if p == "" {
			p = "rw-rw-rw-"
			if dir {
				p = "rwxrwxrwx"
			}
		}
		masked, err := ApplyUmask(p, umask)
		if err != nil {
			return err
		}
		a.SetPermissions(masked)
	}
	if owner != "" {
		a.Owner = owner
	}
	if group != "" {
		a.Group = group
	}
	if acl != "" {
		return a.SetACL(acl)
	}
	return nil
}

// GetPath is Path - Get Properties (getStatus, getAccessControl and the
// default): the read conditions apply to a path with a record.
func (s *Service) GetPath(ctx context.Context, ref Ref, cond Cond) (*Path, error) {
	var out *Path
	err := s.eng.View(ctx, func(tx storage.Tx) error {
		if err := s.keyed(tx, &ref); err != nil {
			return err
		}
		p, err := getPath(tx, s.HierarchicalNamespace(ref.Account), ref.Account, ref.Container, ref.Name)
		if err != nil {
			return err
		}
		now := s.now()
		if p == nil || (p.Blob != nil && p.Blob.expired(now)) {
			return azerr.New(azerr.PathNotFound)
		}
		if z := authzFor(ctx, tx, ref.Account, ref.Container); z != nil {
			if err := z.access(ref.Name, 0); err != nil {
				return err
			}
		}
		st := conditional.State{Exists: true}
		if p.Blob != nil {
			st.ETag, st.LastModified = content.ETagRaw(p.Blob.ETag), p.Blob.Modified
			if _, code := lease.Enforce(p.Blob.Lease, cond.LeaseID, false, now, lease.BlobTarget); code != 0 {
				return azerr.New(code)
			}
			p.Blob.AsOf = now
		}
		o, err := conditional.EvalRead(cond.Conditions, st, "")
		if err != nil {
			return err
		}
		if o != conditional.Pass {
			return o.Err(azerr.ConditionNotMet, 0)
		}
		out = p
		return nil
	})
	return out, err
}

// modifyPath runs a write on an existing path (an implied directory gets
// a record first) under the write conditions and the lease rule.
func (s *Service) modifyPath(ctx context.Context, ref *Ref, cond Cond, fn func(tx storage.Tx, p *Path, now time.Time) error) (*Path, error) {
	var out *Path
	err := s.eng.Update(ctx, func(tx storage.Tx) error {
		if err := s.keyed(tx, ref); err != nil {
			return err
		}
		now := s.now()
		p, err := getPath(tx, s.HierarchicalNamespace(ref.Account), ref.Account, ref.Container, ref.Name)
		if err != nil {
			return err
		}
		if p == nil {
			return azerr.New(azerr.PathNotFound)
		}
		if err := s.materialize(tx, ref.Account, ref.Container, p, now); err != nil {
			return err
		}
		b, ls, err := s.loadChecked(tx, *ref, cond, checkOpts{mustExist: true}, now)
		if err != nil {
			return err
		}
		b.Lease = ls
		p.Blob = b
		if err := fn(tx, p, now); err != nil {
			return err
		}
		b.Modified, b.ETag = s.written(now), s.etag(b.ETag, now)
		if err := putBlob(tx, ref.Account, ref.Container, b); err != nil {
			return err
		}
		p.ACL.Created = b.Created
		out = p
		return putACL(tx, ref.Account, ref.Container, ref.key(), p.ACL)
	})
	return out, err
}

// SetAccessControl is Path - Update (setAccessControl): owner, group,
// and either permissions or an ACL (both is 400, checked by the caller).
func (s *Service) SetAccessControl(ctx context.Context, ref Ref, owner, group, perms, acl string, cond Cond) (*Path, error) {
	return s.modifyPath(ctx, &ref, cond, func(tx storage.Tx, p *Path, now time.Time) error {
		if z := authzFor(ctx, tx, ref.Account, ref.Container); z != nil {
			if err := z.setAccess(p, owner, group); err != nil {
				return err
			}
		}
		if perms != "" {
			p.ACL.SetPermissions(perms)
		}
		return applyAccess(&p.ACL, "", "", owner, group, acl, false, p.Dir)
	})
}

// SetPathProperties is Path - Update (setProperties): metadata (the
// directory marker stays) and, when given, content properties.
func (s *Service) SetPathProperties(ctx context.Context, ref Ref, meta []KV, setMeta bool, props *Props, cond Cond) (*Path, error) {
	if err := content.ValidateMetadata(meta); err != nil {
		return nil, err
	}
	return s.modifyPath(ctx, &ref, cond, func(tx storage.Tx, p *Path, now time.Time) error {
		if z := authzFor(ctx, tx, ref.Account, ref.Container); z != nil {
			if err := z.access(ref.Name, permW); err != nil {
				return err
			}
		}
		if setMeta {
			if p.Dir {
				meta = append([]KV{{FolderMeta, "true"}}, withoutFolder(meta)...)
			}
			p.Blob.Meta = meta
		}
		if props != nil {
			p.Blob.Props = *props
		}
		return nil
	})
}

// DeleteBatch is how many paths one Path - Delete of a large directory
// removes before it answers with a continuation.
const DeleteBatch = 5000

// DeletePath is Path - Delete. A directory with paths under it needs
// recursive; a recursive delete removes up to DeleteBatch paths per call
// and returns the continuation to pass to the next call ("" when the
// directory itself is gone). Each call is one transaction.
func (s *Service) DeletePath(ctx context.Context, ref Ref, recursive bool, continuation string, cond Cond) (string, error) {
	next, _, err := s.DeletePathKept(ctx, ref, recursive, continuation, cond)
	return next, err
}

// DeletePathKept is DeletePath reporting the deletion id of the deleted
// path entry soft delete kept ("" when it kept none, or the delete goes
// on with the continuation).
func (s *Service) DeletePathKept(ctx context.Context, ref Ref, recursive bool, continuation string, cond Cond) (next, deletionID string, err error) {
	err = s.eng.Update(ctx, func(tx storage.Tx) error {
		if err := s.keyed(tx, &ref); err != nil {
			return err
		}
		next, deletionID = "", ""
		now := s.now()
		var sd *pathSoftDelete
		if s.HierarchicalNamespace(ref.Account) {
			pol, err := deletePolicy(tx, ref.Account)
			if err != nil {
				return err
			}
			if id := continuedDeletion(continuation); pol != nil && id != "" {
				sd = resumePathSoftDelete(id, pol)
			} else if pol != nil {
				if sd, err = newPathSoftDelete(tx, ref.Account, ref.Container, ref.Name, pol, now); err != nil {
					return err
				}
			}
		}
		p, err := getPath(tx, s.HierarchicalNamespace(ref.Account), ref.Account, ref.Container, ref.Name)
		if err != nil {
			return err
		}
		if p == nil {
			return azerr.New(azerr.PathNotFound)
		}
		z := authzFor(ctx, tx, ref.Account, ref.Container)
		if z != nil {
			if err := z.remove(p); err != nil {
				return err
			}
		}
		if p.Blob != nil {
			if _, _, err := s.loadChecked(tx, ref, cond, checkOpts{mustExist: true}, now); err != nil {
				return err
			}
		} else if cond.IfMatch != nil || cond.LeaseID != "" {
			return azerr.New(azerr.ConditionNotMet)
		}
		if p.Dir {
			lo := childrenPrefix(ref.Account, ref.Container, ref.Name)
			hi := keyenc.PrefixEnd(lo)
			if !recursive {
				if kids, err := hasChildren(tx, s.HierarchicalNamespace(ref.Account), ref.Account, ref.Container, ref.Name); err != nil {
					return err
				} else if kids {
					return azerr.New(azerr.DirectoryNotEmpty)
				}
			}
			names, keys, err := s.treePaths(tx, ref, lo, hi, "", DeleteBatch+1)
			if err != nil {
				return err
			}
			if len(names) > DeleteBatch {
				next, names, keys = names[DeleteBatch], names[:DeleteBatch], keys[:DeleteBatch]
			}
			if z != nil && len(names) > 0 {
				if err := z.removeTree(ref.Name, names); err != nil {
					return err
				}
			}
			for i, n := range names {
				// A directory above the next path stays for a later
				// batch: the walk reaches the rest of its tree through
				// it.
				if next != "" && strings.HasPrefix(next, n+"/") {
					continue
				}
				if sd != nil {
					if err := sd.keep(tx, ref.Account, ref.Container, ref.Name, n, keys[i]); err != nil {
						return err
					}
				}
				if err := s.deletePathRecords(tx, ref.Account, ref.Container, n, keys[i], true); err != nil {
					return err
				}
			}
			if next != "" {
				next = encodeDeleteContinuation(sd, next)
				return nil
			}
		}
		if p.Blob == nil {
			return nil
		}
		if sd != nil {
			if err := sd.keep(tx, ref.Account, ref.Container, ref.Name, ref.Name, ref.key()); err != nil {
				return err
			}
			deletionID = sd.id
		}
		return s.deletePathRecords(tx, ref.Account, ref.Container, ref.Name, ref.key(), true)
	})
	return next, deletionID, err
}

// treePaths returns the names and keys of the first n paths under the
// directory ref from the name from on (the records in [lo, hi) on an
// account without a hierarchical namespace, a walk of the name index on
// one with).
func (s *Service) treePaths(tx storage.Tx, ref Ref, lo, hi []byte, from string, n int) (names []string, keys []pathKey, err error) {
	add := func(name string, k pathKey) {
		if len(names) == 0 || names[len(names)-1] != name {
			names, keys = append(names, name), append(keys, k)
		}
	}
	if s.HierarchicalNamespace(ref.Account) {
		id, ok := "", true
		if ref.Name != "" {
			if id, ok, err = dirIDOf(tx, ref.Account, ref.Container, ref.key()); err != nil || !ok {
				return nil, nil, err
			}
		}
		w := walkTree(tx, ref.Account, ref.Container, ref.Name, id, "", from)
		defer w.Close()
		for len(names) < n && w.Next() {
			if w.Snap == "" {
				add(w.Name, w.Key())
			}
		}
		return names, keys, w.Err()
	}
	base := blobsPrefix(ref.Account, ref.Container)
	if from != "" {
		if f := keyenc.AppendString(append([]byte(nil), base...), from); string(f) > string(lo) {
			lo = f
		}
	}
	it := tx.Scan(lo, hi, false)
	defer it.Close()
	for len(names) < n && it.Next() {
		name, _, err := keyenc.ReadString(it.Key()[len(base):])
		if err != nil {
			return nil, nil, err
		}
		add(name, plainKey(name))
	}
	return names, keys, it.Err()
}

// deletePathRecords removes one path, keyed k: its record, snapshots,
// uncommitted appends and access control, and (unindex) the index
// entries of a directory and of the directories under it.
func (s *Service) deletePathRecords(tx storage.Tx, acct, c, name string, k pathKey, unindex bool) error {
	if unindex && s.HierarchicalNamespace(acct) {
		id, ok, err := dirIDOf(tx, acct, c, k)
		if err != nil {
			return err
		}
		if ok {
			if err := dropDirTree(tx, acct, c, k, id); err != nil {
				return err
			}
		}
	}
	ref := Ref{Account: acct, Container: c, Name: name, k: k}
	snaps, err := snapshotIDs(tx, ref)
	if err != nil {
		return err
	}
	for _, sn := range snaps {
		if err := deleteBlobKey(tx, acct, c, k, sn); err != nil {
			return err
		}
	}
	if err := dropStaging(tx, ref); err != nil {
		return err
	}
	if err := tx.Delete(pathACLKey(acct, c, k)); err != nil {
		return err
	}
	return deleteBlobKey(tx, acct, c, k, "")
}

// appendID is the id an append at pos is staged under: fixed width, so
// that the staged appends of a file sort by position.
func appendID(pos int64) string { return fmt.Sprintf("dfs-%020d", pos) }

// AppendData is Path - Update (append): data is staged at position and
// becomes part of the file only when a flush reaches past it.
func (s *Service) AppendData(ctx context.Context, ref Ref, position int64, data Ingested, cond Cond) error {
	if position < 0 {
		return azerr.InvalidQuery("position", fmt.Sprint(position), "")
	}
	return s.eng.Update(ctx, func(tx storage.Tx) error {
		if err := s.keyed(tx, &ref); err != nil {
			return err
		}
		if z := authzFor(ctx, tx, ref.Account, ref.Container); z != nil {
			if err := z.access(ref.Name, permW); err != nil {
				return err
			}
		}
		now := s.now()
		b, _, err := s.loadChecked(tx, ref, Cond{LeaseID: cond.LeaseID}, checkOpts{mustExist: true}, now)
		if err != nil {
			return err
		}
		if b.IsDir() || b.Type != BlockBlob {
			return azerr.New(azerr.InvalidAppendOperation)
		}
		st, err := liveStaging(tx, ref, now)
		if err != nil {
			return err
		}
		if st == nil {
			if err := dropStaging(tx, ref); err != nil {
				return err
			}
			st = &Staging{}
		}
		id := appendID(position)
		k := blockKey(ref.Account, ref.Container, ref.key(), id)
		if _, err := tx.Get(k); errors.Is(err, storage.ErrNotFound) {
			if st.Count >= MaxUncommitted {
				return azerr.New(azerr.BlockCountExceedsLimit)
			}
			st.Count++
		} else if err != nil {
			return err
		}
		st.IDLen, st.Touched = len(id), now
		if err := tx.Set(k, encodeBlock(&Block{ID: id, Size: data.Size, Segs: data.Segs})); err != nil {
			return err
		}
		return tx.Set(stagingKey(ref.Account, ref.Container, ref.key()), encode(st))
	})
}

// FlushRequest is Path - Update (flush).
type FlushRequest struct {
	Ref
	Position int64
	// Retain keeps appended data past Position for a later flush.
	Retain bool
	// Props, when set, replace the content properties.
	Props *Props
	Cond  Cond
}

// FlushData is Path - Update (flush): the appends from the end of the
// file up to Position, which must be contiguous and end exactly there
// (400 InvalidFlushPosition otherwise), become its content.
func (s *Service) FlushData(ctx context.Context, req FlushRequest) (*Blob, error) {
	var out *Blob
	err := s.eng.Update(ctx, func(tx storage.Tx) error {
		if err := s.keyed(tx, &req.Ref); err != nil {
			return err
		}
		if z := authzFor(ctx, tx, req.Account, req.Container); z != nil {
			if err := z.access(req.Name, permW); err != nil {
				return err
			}
		}
		now := s.now()
		b, ls, err := s.loadChecked(tx, req.Ref, req.Cond, checkOpts{mustExist: true}, now)
		if err != nil {
			return err
		}
		if b.IsDir() || b.Type != BlockBlob {
			return azerr.New(azerr.InvalidFlushOperation)
		}
		if req.Position < b.Size {
			return azerr.New(azerr.InvalidFlushPosition)
		}
		st, err := liveStaging(tx, req.Ref, now)
		if err != nil {
			return err
		}
		var segs []Segment
		var used [][]byte
		for cur := b.Size; cur < req.Position; {
			if st == nil {
				return azerr.New(azerr.InvalidFlushPosition)
			}
			k := blockKey(req.Account, req.Container, req.key(), appendID(cur))
			v, err := tx.Get(k)
			if errors.Is(err, storage.ErrNotFound) {
				return azerr.New(azerr.InvalidFlushPosition)
			} else if err != nil {
				return err
			}
			bl, err := decodeBlock(v)
			if err != nil {
				return err
			}
			if bl.Size == 0 || cur+bl.Size > req.Position {
				return azerr.New(azerr.InvalidFlushPosition)
			}
			segs = append(segs, bl.Segs...)
			used = append(used, k)
			cur += bl.Size
		}
		if err := hydrate(tx, req.Account, req.Container, b); err != nil {
			return err
		}
		if len(segs) > 0 {
			// Flushed data joins the last anonymous block, so that many
			// small flushes do not run into the committed block limit.
			n := len(b.Blocks)
			if n > 0 && b.Blocks[n-1].ID == "" {
				b.Blocks[n-1].Segs = append(b.Blocks[n-1].Segs, segs...)
				b.Blocks[n-1].Size += req.Position - b.Size
			} else {
				b.Blocks = append(b.Blocks, Block{Size: req.Position - b.Size, Segs: segs})
			}
		}
		if st != nil {
			if err := s.settleAppends(tx, req.Ref, st, used, req.Position, req.Retain); err != nil {
				return err
			}
		}
		b.Size, b.Lease = req.Position, ls
		if req.Props != nil {
			b.Props = *req.Props
		}
		b.Modified, b.ETag = s.written(now), s.etag(b.ETag, now)
		out = b
		return putBlob(tx, req.Account, req.Container, b)
	})
	return out, err
}

// settleAppends drops the appends a flush used, and the others too unless
// retain asks to keep those past the flushed end.
func (s *Service) settleAppends(tx storage.Tx, ref Ref, st *Staging, used [][]byte, end int64, retain bool) error {
	if !retain {
		return dropStaged(tx, ref)
	}
	for _, k := range used {
		if err := tx.Delete(k); err != nil {
			return err
		}
	}
	st.Count -= len(used)
	// Appends that start before the new end can never be flushed.
	lo := blocksPrefix(ref.Account, ref.Container, ref.key())
	hi := blockKey(ref.Account, ref.Container, ref.key(), appendID(end))
	n, err := storage.DeleteRange(tx, lo, hi, 0)
	if err != nil {
		return err
	}
	st.Count -= n
	if st.Count <= 0 {
		return dropStaged(tx, ref)
	}
	return tx.Set(stagingKey(ref.Account, ref.Container, ref.key()), encode(st))
}

// RecursiveACLResult is what one Set Access Control Recursive call did.
type RecursiveACLResult struct {
	Directories, Files, Failures int
	// Failed are the paths the change failed on.
	Failed []FailedEntry
	// Next is the continuation for the next call ("" when done).
	Next string
}

// SetAccessControlRecursive is Path - Update (setAccessControlRecursive):
// mode set, modify or remove applied to the path and every path under
// it, up to max paths per call (one transaction each), resuming at the
// path continuation names. A path the change fails on (one the caller
// does not own) is counted and named; the call stops there unless force
// (forceFlag) says to go on, and then no continuation is returned.
func (s *Service) SetAccessControlRecursive(ctx context.Context, ref Ref, mode, acl, continuation string, max int, force bool) (RecursiveACLResult, error) {
	if max <= 0 {
		max = 2000
	}
	// Check the ACL once up front, so that a bad one fails the call with
	// 400 rather than counting every path as a failure.
	if err := (&PathACL{Permissions: "rwxr-x---"}).EditACL(mode, acl, true); err != nil {
		return RecursiveACLResult{}, err
	}
	var out RecursiveACLResult
	err := s.eng.Update(ctx, func(tx storage.Tx) error {
		if err := s.keyed(tx, &ref); err != nil {
			return err
		}
		out = RecursiveACLResult{}
		now := s.now()
		p, err := recursiveTarget(tx, ref.Account, ref.Container, ref.Name)
		if err != nil {
			return err
		}
		if p == nil {
			return azerr.New(azerr.PathNotFound)
		}
		z := authzFor(ctx, tx, ref.Account, ref.Container)
		if z != nil {
			if _, err := z.reach(ref.Name); err != nil {
				return err
			}
		}
		var names []string
		if continuation == "" {
			names = append(names, ref.Name)
		}
		if p.Dir {
			lo := childrenPrefix(ref.Account, ref.Container, ref.Name)
			under, _, err := s.treePaths(tx, ref, lo, keyenc.PrefixEnd(lo), continuation, max+1-len(names))
			if err != nil {
				return err
			}
			names = append(names, under...)
		}
		if len(names) > max {
			out.Next, names = names[max], names[:max]
		}
		for _, n := range names {
			q, err := recursiveTarget(tx, ref.Account, ref.Container, n)
			if err != nil {
				return err
			}
			if q == nil {
				continue
			}
			if n != "" {
				if err := s.materialize(tx, ref.Account, ref.Container, q, now); err != nil {
					return err
				}
			}
			var fail error
			if z != nil && !z.owns(q) {
				fail = denied()
			} else {
				fail = q.ACL.EditACL(mode, acl, q.Dir)
			}
			if fail != nil {
				out.Failures++
				out.Failed = append(out.Failed, failedEntry(q, fail))
				if !force {
					out.Next = ""
					return nil
				}
				continue
			}
			if q.Blob != nil {
				q.ACL.Created = q.Blob.Created
			}
			k := pathKey("") // the root's
			if q.Blob != nil {
				k = q.Blob.key
			}
			if err := putACL(tx, ref.Account, ref.Container, k, q.ACL); err != nil {
				return err
			}
			if q.Dir {
				out.Directories++
			} else {
				out.Files++
			}
		}
		return nil
	})
	return out, err
}

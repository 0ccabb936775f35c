package file

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/content"
	"github.com/lazuli-storage/lazuli/internal/keyenc"
	"github.com/lazuli-storage/lazuli/internal/lease"
	"github.com/lazuli-storage/lazuli/internal/md5lanes"
	"github.com/lazuli-storage/lazuli/internal/worker"
	"github.com/lazuli-storage/lazuli/storage"
)

// Service is the File service over one engine.
type Service struct {
	// eng is raw as the service's Updates see it (see watchedEngine).
	eng   storage.Engine
	raw   storage.Engine
	now   func() time.Time
	newID func() string
	// chunks writes request bodies to the chunk store and streams
	// segments back.
	chunks *content.Chunks
	// clock stamps ETags and written times; its floor is set by UseFloor.
	clock content.Clock
	// hub holds the service's CHANGE_NOTIFY watchers (see Watch).
	hub *hub
	// purge runs the removal of deleted shares' keys (see Run).
	purge worker.Loop
	// breaks delivers SMB cache breaks and waits for their
	// acknowledgements (leases.go).
	breakOnce sync.Once
	breaks    *breaks
}

// New returns the File service over eng. newID makes lease and copy ids.
func New(eng storage.Engine, now func() time.Time, newID func() string) *Service {
	h := newHub()
	return &Service{eng: watchedEngine{eng, h}, raw: eng, hub: h, now: now, newID: newID, chunks: content.NewChunks(eng)}
}

// UseMD5Lanes makes the service hash Put Range bodies with l.
func (s *Service) UseMD5Lanes(l *md5lanes.Lanes) { s.chunks.UseMD5Lanes(l) }

// UseFloor makes the times the service writes (Last-Modified) and its
// ETag stamps never go below f() (content.Clock.UseFloor).
func (s *Service) UseFloor(f func() time.Time) { s.clock.UseFloor(f) }

// written is the time a write made at now records (content.Clock.Written).
func (s *Service) written(now time.Time) time.Time { return s.clock.Written(now) }

// etag is the ETag stamp of a write over prev (content.Clock.ETag).
func (s *Service) etag(prev uint64, now time.Time) uint64 { return s.clock.ETag(prev, now) }

// Engine returns the engine the service runs on.
func (s *Service) Engine() storage.Engine { return s.raw }

// ---- shares ----

// ShareRef names a share or one of its snapshots.
type ShareRef struct {
	Account, Name, Snapshot string
}

func getShare(tx storage.Tx, ref ShareRef) (*Share, error) {
	v, err := tx.Get(shareKey(ref.Account, ref.Name, ref.Snapshot))
	if errors.Is(err, storage.ErrNotFound) {
		return nil, azerr.New(azerr.ShareNotFound)
	}
	if err != nil {
		return nil, err
	}
	return decode[Share](v)
}

// writableShare loads the live share for a write; a snapshot is read-only.
func writableShare(tx storage.Tx, ref ShareRef) (*Share, error) {
	if ref.Snapshot != "" {
		return nil, azerr.New(azerr.ShareSnapshotOperationNotSupported)
	}
	return getShare(tx, ref)
}

// writableShareID is writableShare for operations that need only the
// share's id.
func writableShareID(tx storage.Tx, ref ShareRef) (*Share, error) {
	if ref.Snapshot != "" {
		return nil, azerr.New(azerr.ShareSnapshotOperationNotSupported)
	}
	sid, err := shareID(tx, ref)
	if err != nil {
		return nil, err
	}
	return &Share{ID: sid, Name: ref.Name}, nil
}

// CreateShareRequest is Create Share.
type CreateShareRequest struct {
	Ref        ShareRef
	Quota      int // GiB; 0 for the default
	Meta       []content.KV
	AccessTier string
	Protocols  string
	RootSquash string
}

// DefaultSDDL is the security descriptor of files and directories created
// without one (owner and group BUILTIN\Administrators, full control for
// Administrators, SYSTEM and Authenticated Users).
const DefaultSDDL = "O:BAG:BAD:(A;OICI;FA;;;BA)(A;OICI;FA;;;SY)(A;OICI;0x1301bf;;;AU)"

// CreateShare is Create Share.
func (s *Service) CreateShare(ctx context.Context, req CreateShareRequest) (*Share, error) {
	if err := content.ValidateMetadata(req.Meta); err != nil {
		return nil, err
	}
	quota := req.Quota
	if quota < 0 || quota > MaxShareQuotaGiB {
		return nil, azerr.InvalidValue(InputShareQuota, strconv.Itoa(quota))
	}
	if quota == 0 {
		quota = DefaultQuotaGiB
	}
	sid := newID()
	var out *Share
	err := s.eng.Update(ctx, func(tx storage.Tx) error {
		if _, err := tx.Get(shareKey(req.Ref.Account, req.Ref.Name, "")); err == nil {
			return azerr.New(azerr.ShareAlreadyExists)
		} else if !errors.Is(err, storage.ErrNotFound) {
			return err
		}
		now := s.now()
		sh := &Share{Name: req.Ref.Name, ID: sid, Created: now, Modified: s.written(now), ETag: s.etag(0, now),
			Quota: quota, AccessTier: req.AccessTier, Protocols: req.Protocols, RootSquash: req.RootSquash, Meta: req.Meta}
		if sh.AccessTier == "" {
			sh.AccessTier = "TransactionOptimized"
		}
		sh.TierChanged = now
		if err := putShare(tx, req.Ref.Account, sh); err != nil {
			return err
		}
		if err := tx.Set(quotaKey(sid), []byte(strconv.Itoa(quota))); err != nil {
			return err
		}
		pk := PermissionKey(DefaultSDDL)
		if err := tx.Set(permKey(sid, pk), []byte(DefaultSDDL)); err != nil {
			return err
		}
		root := &Node{ID: rootID, Parent: rootParent, Dir: true, Modified: s.written(now), ETag: sh.ETag, Attrs: AttrDirectory,
			CreationTime: now, LastWriteTime: now, ChangeTime: now, LastAccessTime: now, PermKey: pk}
		if err := putNode(tx, sid, root); err != nil {
			return err
		}
		out = sh
		return nil
	})
	return out, err
}

// GetShare is Get Share Properties / Metadata (of the share or a snapshot).
func (s *Service) GetShare(ctx context.Context, ref ShareRef, leaseID string) (*Share, error) {
	var out *Share
	err := s.eng.View(ctx, func(tx storage.Tx) error {
		sh, err := getShare(tx, ref)
		if err != nil {
			return err
		}
		now := s.now()
		if leaseID != "" && ref.Snapshot == "" {
			if _, code := lease.Enforce(sh.Lease, leaseID, false, now, lease.ShareTarget); code != 0 {
				return azerr.New(code)
			}
		}
		sh.AsOf = now
		out = sh
		return nil
	})
	return out, err
}

// ShareUpdate is Set Share Properties, Set Share Metadata or Set Share
// ACL: nil fields are left as they are.
type ShareUpdate struct {
	LeaseID    string
	Quota      *int
	AccessTier *string
	RootSquash *string
	Meta       *[]content.KV
	ACL        *[]SignedIdentifier
}

// SetShare applies u to the live share, checking the share lease.
func (s *Service) SetShare(ctx context.Context, ref ShareRef, u ShareUpdate) (*Share, error) {
	if u.Meta != nil {
		if err := content.ValidateMetadata(*u.Meta); err != nil {
			return nil, err
		}
	}
	if u.Quota != nil && (*u.Quota < MinShareQuotaGiB || *u.Quota > MaxShareQuotaGiB) {
		return nil, azerr.InvalidValue(InputShareQuota, strconv.Itoa(*u.Quota))
	}
	var out *Share
	err := s.eng.Update(ctx, func(tx storage.Tx) error {
		sh, err := writableShare(tx, ref)
		if err != nil {
			return err
		}
		now := s.now()
		ls, code := lease.Enforce(sh.Lease, u.LeaseID, true, now, lease.ShareTarget)
		if code != 0 {
			return azerr.New(code)
		}
		sh.Lease = ls
		if u.Quota != nil {
			sh.Quota = *u.Quota
			if err := tx.Set(quotaKey(sh.ID), []byte(strconv.Itoa(sh.Quota))); err != nil {
				return err
			}
		}
		if u.AccessTier != nil && *u.AccessTier != sh.AccessTier {
			sh.AccessTier, sh.TierChanged = *u.AccessTier, now
		}
		if u.RootSquash != nil {
			sh.RootSquash = *u.RootSquash
		}
		if u.Meta != nil {
			sh.Meta = *u.Meta
		}
		if u.ACL != nil {
			sh.ACL = *u.ACL
		}
		sh.Modified, sh.ETag = s.written(now), s.etag(sh.ETag, now)
		if err := tx.Set(shareKey(ref.Account, ref.Name, ""), encode(sh)); err != nil {
			return err
		}
		sh.AsOf = now
		out = sh
		return nil
	})
	return out, err
}

// DeleteSnapshots is x-ms-delete-snapshots of Delete Share.
type DeleteSnapshots int

// Delete Share's treatment of snapshots.
const (
	// KeepSnapshots: a share with snapshots is 409 ShareHasSnapshots.
	KeepSnapshots DeleteSnapshots = iota
	// IncludeSnapshots ("include"): snapshots go too, unless one is leased
	// (409 DeleteShareWhenSnapshotLeased).
	IncludeSnapshots
	// IncludeLeased ("include-leased"): snapshots go too, leased or not.
	IncludeLeased
)

// DeleteShare is Delete Share: of a snapshot, or of the share and (as ds
// says) its snapshots. Readers see the share gone at once; its files
// are purged in the background.
func (s *Service) DeleteShare(ctx context.Context, ref ShareRef, leaseID string, ds DeleteSnapshots) error {
	err := s.eng.Update(ctx, func(tx storage.Tx) error {
		now := s.now()
		if ref.Snapshot != "" {
			sh, err := getShare(tx, ref)
			if err != nil {
				return err
			}
			if sh.Lease.Active(now) {
				if _, code := lease.Enforce(sh.Lease, leaseID, true, now, lease.ShareTarget); code != 0 {
					return azerr.New(code)
				}
			}
			return dropShare(tx, ref.Account, sh)
		}
		sh, err := getShare(tx, ref)
		if err != nil {
			return err
		}
		if _, code := lease.Enforce(sh.Lease, leaseID, true, now, lease.ShareTarget); code != 0 {
			return azerr.New(code)
		}
		snaps, err := listSnapshots(tx, ref.Account, ref.Name)
		if err != nil {
			return err
		}
		if len(snaps) > 0 && ds == KeepSnapshots {
			return azerr.New(azerr.ShareHasSnapshots)
		}
		for _, sn := range snaps {
			if sn.Lease.Active(now) && ds != IncludeLeased {
				return azerr.New(azerr.DeleteShareWhenSnapshotLeased)
			}
		}
		// The share's SMB handles close with it.
		if err := s.closeShareHandles(tx, sh.ID); err != nil {
			return err
		}
		days, err := retentionDays(tx, ref.Account)
		if err != nil {
			return err
		}
		if days > 0 {
			return softDelete(tx, ref.Account, sh, snaps, days, now)
		}
		for _, sn := range append(snaps, sh) {
			if err := dropShare(tx, ref.Account, sn); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		s.purge.Kick()
	}
	return err
}

// dropShare removes a share record and leaves a tombstone for its keys.
func dropShare(tx storage.Tx, acct string, sh *Share) error {
	if err := tx.Delete(shareKey(acct, sh.Name, sh.Snapshot)); err != nil {
		return err
	}
	if err := tx.Delete(shareIDKey(acct, sh.Name, sh.Snapshot)); err != nil {
		return err
	}
	return tx.Set(tombKey(sh.ID), nil)
}

func listSnapshots(tx storage.Tx, acct, name string) ([]*Share, error) {
	lo := keyenc.AppendString(shareVersionsPrefix(acct, name), "")
	lo = keyenc.After(lo)
	hi := keyenc.PrefixEnd(shareVersionsPrefix(acct, name))
	it := tx.Scan(lo, hi, false)
	defer it.Close()
	var out []*Share
	for it.Next() {
		sh, err := decode[Share](it.Value())
		if err != nil {
			return nil, err
		}
		out = append(out, sh)
	}
	return out, it.Err()
}

// SnapshotShare is Snapshot Share: a read-only, point-in-time copy of the
// whole share made in one transaction, so it holds every file either
// wholly before or wholly after each concurrent write.
func (s *Service) SnapshotShare(ctx context.Context, ref ShareRef, meta []content.KV) (*Share, error) {
	if ref.Snapshot != "" {
		return nil, azerr.New(azerr.ShareSnapshotOperationNotSupported)
	}
	if err := content.ValidateMetadata(meta); err != nil {
		return nil, err
	}
	var out *Share
	err := s.eng.Update(ctx, func(tx storage.Tx) error {
		sh, err := getShare(tx, ref)
		if err != nil {
			return err
		}
		snaps, err := listSnapshots(tx, ref.Account, ref.Name)
		if err != nil {
			return err
		}
		if len(snaps) >= MaxSnapshots {
			return azerr.New(azerr.ShareSnapshotCountExceeded)
		}
		now := s.now()
		id := FormatTime(now)
		for _, sn := range snaps {
			if sn.Snapshot >= id {
				// Snapshot ids are unique and increasing: a second
				// snapshot in the same tick gets the next tick.
				t, _ := ParseTime(sn.Snapshot)
				id = FormatTime(t.Add(100 * time.Nanosecond))
			}
		}
		snap := *sh
		snap.Snapshot, snap.ID, snap.Lease = id, newID(), lease.State{}
		if meta != nil {
			snap.Meta = meta
		}
		if err := copyShareKeys(tx, sh.ID, snap.ID); err != nil {
			return err
		}
		if err := putShare(tx, ref.Account, &snap); err != nil {
			return err
		}
		out = &snap
		return nil
	})
	return out, err
}

// copyShareKeys copies every node, index, extent, permission and usage
// key of share id from to share id to.
func copyShareKeys(tx storage.Tx, from, to uint64) error {
	for _, tag := range sidTags {
		src := sidPrefix(tag, from)
		dst := sidPrefix(tag, to)
		type kv struct{ k, v []byte }
		var batch []kv
		it := tx.Scan(src, keyenc.PrefixEnd(src), false)
		for it.Next() {
			k := append(append([]byte(nil), dst...), it.Key()[len(src):]...)
			batch = append(batch, kv{k, it.Value()})
		}
		err := it.Err()
		it.Close()
		if err != nil {
			return err
		}
		for _, e := range batch {
			if err := tx.Set(e.k, e.v); err != nil {
				return err
			}
		}
	}
	return nil
}

// ListSharesRequest is List Shares.
type ListSharesRequest struct {
	Account, Prefix, Marker string
	Max                     int
	Snapshots               bool
}

// ListShares returns shares (and, with Snapshots, their snapshots after
// each) in name order, and the marker of the next page ("" at the end).
func (s *Service) ListShares(ctx context.Context, req ListSharesRequest) ([]*Share, string, error) {
	var out []*Share
	next := ""
	err := s.eng.View(ctx, func(tx storage.Tx) error {
		p := keyenc.AppendPrefix(sharesPrefix(req.Account), req.Prefix)
		lo := p
		if req.Marker != "" && req.Marker > req.Prefix {
			lo = keyenc.AppendString(sharesPrefix(req.Account), req.Marker)
		}
		it := tx.Scan(lo, keyenc.PrefixEnd(p), false)
		defer it.Close()
		for it.Next() {
			sh, err := decode[Share](it.Value())
			if err != nil {
				return err
			}
			if sh.Snapshot != "" && !req.Snapshots {
				continue
			}
			if sh.Snapshot == "" && len(out) >= req.Max {
				next = sh.Name
				return nil
			}
			sh.AsOf = s.now()
			out = append(out, sh)
		}
		return it.Err()
	})
	return out, next, err
}

// ShareUsage returns the bytes the share's files take (Get Share Stats).
func (s *Service) ShareUsage(ctx context.Context, ref ShareRef) (int64, error) {
	var n int64
	err := s.eng.View(ctx, func(tx storage.Tx) error {
		sh, err := getShare(tx, ref)
		if err != nil {
			return err
		}
		n, err = usage(tx, sh.ID)
		return err
	})
	return n, err
}

func usage(tx storage.Tx, sid uint64) (int64, error) {
	v, err := tx.Get(usageKey(sid))
	if errors.Is(err, storage.ErrNotFound) {
		return 0, nil
	}
	if err != nil || len(v) != 8 {
		return 0, err
	}
	return int64(binary.BigEndian.Uint64(v)), nil
}

// addUsage changes the used bytes of share id sid by delta, refusing
// growth past the quota with ShareSizeLimitReached.
func addUsage(tx storage.Tx, sid uint64, delta int64) error {
	if delta == 0 {
		return nil
	}
	n, err := usage(tx, sid)
	if err != nil {
		return err
	}
	n += delta
	// No quota is below MinShareQuotaGiB, so a share that stays within it
	// needs no quota read (one Get less for most writes that grow files).
	if delta > 0 && n > MinShareQuotaGiB<<30 {
		quota := int64(MaxShareQuotaGiB)
		if v, err := tx.Get(quotaKey(sid)); err == nil {
			if q, err := strconv.ParseInt(string(v), 10, 64); err == nil {
				quota = q
			}
		} else if !errors.Is(err, storage.ErrNotFound) {
			return err
		}
		if n > quota<<30 {
			return azerr.New(azerr.ShareSizeLimitReached)
		}
	}
	return tx.Set(usageKey(sid), binary.BigEndian.AppendUint64(nil, uint64(max(n, 0))))
}

// shareID finds the id of a share or snapshot through its small name
// index, which every file operation reads instead of the share record.
func shareID(tx storage.Tx, ref ShareRef) (uint64, error) {
	v, err := tx.Get(shareIDKey(ref.Account, ref.Name, ref.Snapshot))
	if errors.Is(err, storage.ErrNotFound) {
		return 0, azerr.New(azerr.ShareNotFound)
	}
	if err != nil {
		return 0, err
	}
	if len(v) != 8 {
		return 0, errors.New("file: corrupt share id record")
	}
	return binary.BigEndian.Uint64(v), nil
}

// putShare stores a share record and its name index.
func putShare(tx storage.Tx, acct string, sh *Share) error {
	if err := tx.Set(shareKey(acct, sh.Name, sh.Snapshot), encode(sh)); err != nil {
		return err
	}
	return tx.Set(shareIDKey(acct, sh.Name, sh.Snapshot), binary.BigEndian.AppendUint64(nil, sh.ID))
}

// LeaseShare is Lease Share.
func (s *Service) LeaseShare(ctx context.Context, ref ShareRef, a lease.Action) (*Share, lease.Result, error) {
	var out *Share
	var res lease.Result
	err := s.eng.Update(ctx, func(tx storage.Tx) error {
		sh, err := getShare(tx, ref)
		if err != nil {
			return err
		}
		now := s.now()
		st, r, code := lease.Apply(sh.Lease, a, now)
		if code != 0 {
			return azerr.New(code)
		}
		sh.Lease, res = st, r
		if err := tx.Set(shareKey(ref.Account, ref.Name, ref.Snapshot), encode(sh)); err != nil {
			return err
		}
		sh.AsOf = now
		out = sh
		return nil
	})
	return out, res, err
}

// ---- permissions ----

// PermissionKey is the key a security descriptor is stored under: two
// decimal numbers from its SHA-256, in the shape Azure's keys have.
func PermissionKey(sddl string) string {
	h := sha256.Sum256([]byte(sddl))
	return strconv.FormatUint(binary.BigEndian.Uint64(h[:8])>>1, 10) + "*" + strconv.FormatUint(binary.BigEndian.Uint64(h[8:16])>>1, 10)
}

// CreatePermission is Create Permission: it stores sddl once per share
// and returns its key.
func (s *Service) CreatePermission(ctx context.Context, ref ShareRef, sddl string) (string, error) {
	if err := ValidateSDDL(sddl); err != nil {
		return "", err
	}
	key := PermissionKey(sddl)
	err := s.eng.Update(ctx, func(tx storage.Tx) error {
		sh, err := writableShare(tx, ref)
		if err != nil {
			return err
		}
		return tx.Set(permKey(sh.ID, key), []byte(sddl))
	})
	return key, err
}

// GetPermission is Get Permission.
func (s *Service) GetPermission(ctx context.Context, ref ShareRef, key string) (string, error) {
	var out string
	err := s.eng.View(ctx, func(tx storage.Tx) error {
		sh, err := getShare(tx, ref)
		if err != nil {
			return err
		}
		v, err := tx.Get(permKey(sh.ID, key))
		if errors.Is(err, storage.ErrNotFound) {
			return azerr.New(azerr.FileInvalidPermissionKey)
		}
		out = string(v)
		return err
	})
	return out, err
}

// storePermission resolves the permission of a create or set: an SDDL is
// stored and its key returned; a key must exist; "" keeps def.
func storePermission(tx storage.Tx, sid uint64, p Permission, def string) (string, error) {
	switch {
	case p.SDDL != "":
		if err := ValidateSDDL(p.SDDL); err != nil {
			return "", err
		}
		key := PermissionKey(p.SDDL)
		return key, tx.Set(permKey(sid, key), []byte(p.SDDL))
	case p.Key != "":
		if _, err := tx.Get(permKey(sid, p.Key)); errors.Is(err, storage.ErrNotFound) {
			return "", azerr.New(azerr.FileInvalidPermissionKey)
		} else if err != nil {
			return "", err
		}
		return p.Key, nil
	}
	return def, nil
}

// Permission is x-ms-file-permission (SDDL) or x-ms-file-permission-key;
// both empty means inherit (create) or preserve (set).
type Permission struct {
	SDDL, Key string
}

// ValidateSDDL checks the shape of a security descriptor string: an owner,
// group, DACL or SACL part, balanced parentheses around ACEs, and only
// printable ASCII (400 FileInvalidPermission otherwise).
func ValidateSDDL(sddl string) error {
	bad := azerr.New(azerr.FileInvalidPermission)
	if len(sddl) == 0 || len(sddl) > MaxPermissionBody {
		return bad
	}
	depth, parts := 0, 0
	for i := 0; i < len(sddl); i++ {
		c := sddl[i]
		if c < 0x20 || c > 0x7e {
			return bad
		}
		switch c {
		case '(':
			if depth > 0 {
				return bad
			}
			depth++
		case ')':
			if depth == 0 {
				return bad
			}
			depth--
		case ':':
			if depth == 0 && i > 0 {
				switch sddl[i-1] {
				case 'O', 'G', 'D', 'S':
					parts++
				default:
					return bad
				}
			}
		}
	}
	if depth != 0 || parts == 0 {
		return bad
	}
	return nil
}

// ---- service properties ----

// GetServiceProps returns the stored File service properties (nil XML when
// never set).
func (s *Service) GetServiceProps(ctx context.Context, acct string) (ServiceProps, error) {
	var out ServiceProps
	v, err := storage.GetValue(ctx, s.eng, propsKey(acct))
	if errors.Is(err, storage.ErrNotFound) {
		return out, nil
	}
	if err != nil {
		return out, err
	}
	p, err := decode[ServiceProps](v)
	if err != nil {
		return out, err
	}
	return *p, nil
}

// SetServiceProps stores the File service properties.
func (s *Service) SetServiceProps(ctx context.Context, acct string, p ServiceProps) error {
	return s.eng.Update(ctx, func(tx storage.Tx) error {
		return tx.Set(propsKey(acct), encode(&p))
	})
}

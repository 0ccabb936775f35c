package blob

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/conditional"
	"github.com/lazuli-storage/lazuli/internal/content"
	"github.com/lazuli-storage/lazuli/internal/keyenc"
	"github.com/lazuli-storage/lazuli/internal/lease"
	"github.com/lazuli-storage/lazuli/storage"
)

// Ref addresses a blob or one of its snapshots.
type Ref struct {
	Account, Container, Name, Snapshot string

	// k is the key name of Name, once keyed has resolved it in the
	// transaction of the operation (see key).
	k pathKey
}

// checkOpts says how a write treats a missing blob and unmet conditions.
type checkOpts struct {
	mustExist bool       // 404 BlobNotFound when missing
	create    bool       // If-None-Match: * over an existing blob → 409 BlobAlreadyExists
	failCode  azerr.Code // 412 code (default ConditionNotMet)
	read      bool       // lease rule of a read (id optional)
	// staged, when set, asks for the blob's staging record too (see
	// getBlobIn); *staged reports whether it is there.
	staged *bool
	// policy, with staged, receives the delete retention policy read with
	// the blob, for keepOverwritten to use instead of reading it again.
	policy *policyRead
	// guard refuses the write while an immutability policy or legal hold
	// protects the version (immutableErr).
	guard bool
}

// tierSetAt is the access tier change time of a blob written with tier: a
// tier given explicitly (x-ms-access-tier) is a tier set now, reported as
// x-ms-access-tier-change-time; an inferred tier has none.
func tierSetAt(tier string, now time.Time) time.Time {
	if tier == "" {
		return time.Time{}
	}
	return now
}

// tierDatesMet evaluates the access tier change time conditions of cond
// against b, at the second as HTTP dates go.
func tierDatesMet(cond Cond, b *Blob) bool {
	if cond.TierModifiedSince.IsZero() && cond.TierUnmodifiedSince.IsZero() {
		return true
	}
	changed := b.TierChanged
	if changed.IsZero() {
		changed = b.Created
	}
	changed = changed.UTC().Truncate(time.Second)
	if t := cond.TierModifiedSince; !t.IsZero() && !changed.After(t.UTC().Truncate(time.Second)) {
		return false
	}
	if t := cond.TierUnmodifiedSince; !t.IsZero() && changed.After(t.UTC().Truncate(time.Second)) {
		return false
	}
	return true
}

// loadChecked loads the blob of ref inside tx and applies, in this order:
// container existence, blob existence (when required), conditional
// headers, x-ms-if-tags, and the lease rule. It returns the lease state
// the blob should keep after a write. The container record is only
// looked up, not decoded: no blob operation needs its contents.
func (s *Service) loadChecked(tx storage.Tx, ref Ref, cond Cond, o checkOpts, now time.Time) (*Blob, lease.State, error) {
	var b *Blob
	var err error
	if o.staged != nil {
		var pol policyRead
		b, *o.staged, pol, err = getBlobStagedIn(tx, ref, !s.Versioning(ref.Account))
		if o.policy != nil {
			*o.policy = pol
		}
	} else {
		b, err = getBlobIn(tx, ref)
	}
	if err != nil {
		return nil, lease.State{}, err
	}
	if b != nil && b.expired(now) {
		// Set Blob Expiry's time has come: the blob is gone. A write
		// removes it before going on (reads may run in a snapshot
		// transaction; the purge removes it then).
		if !o.read {
			if err := removeExpired(tx, ref, b); err != nil {
				return nil, lease.State{}, err
			}
		}
		b = nil
	}
	if b == nil && o.mustExist {
		return nil, lease.State{}, azerr.New(azerr.BlobNotFound)
	}
	if b != nil {
		b.settleRehydration(now)
	}
	if b != nil && cond.CreateOnly {
		return nil, lease.State{}, azerr.New(azerr.AuthorizationPermissionMismatch)
	}
	failCode := o.failCode
	if failCode == 0 {
		failCode = azerr.ConditionNotMet
	}
	st := conditional.State{}
	if b != nil {
		st = conditional.State{Exists: true, ETag: content.ETagRaw(b.ETag), LastModified: b.Modified}
	}
	out, err := conditional.EvalWrite(cond.Conditions, st)
	if err != nil {
		return nil, lease.State{}, err
	}
	if out != conditional.Pass {
		var exists azerr.Code
		if o.create {
			exists = azerr.BlobAlreadyExists
		}
		return nil, lease.State{}, out.Err(failCode, exists)
	}
	if err := checkKey(cond, b); err != nil && !o.create {
		return nil, lease.State{}, err
	}
	if b != nil && !tierDatesMet(cond, b) {
		return nil, lease.State{}, azerr.New(azerr.AccessTierChangeTimeConditionNotMet)
	}
	if cond.IfTags != "" {
		var tags []KV
		if b != nil {
			tags = b.Tags
		}
		ok, err := MatchTags(cond.IfTags, tags, "")
		if err != nil {
			return nil, lease.State{}, err
		}
		if !ok {
			return nil, lease.State{}, azerr.New(failCode).WithStatus(412)
		}
	}
	var ls lease.State
	if b != nil {
		ls = b.Lease
	}
	if ref.Snapshot == "" {
		n, code := lease.Enforce(ls, cond.LeaseID, !o.read, now, lease.BlobTarget)
		if code != 0 {
			return nil, lease.State{}, azerr.New(code)
		}
		ls = n
	}
	if o.guard {
		if err := immutableErr(b, now); err != nil {
			return nil, lease.State{}, err
		}
	}
	return b, ls, nil
}

// getBlobIn loads the blob of ref (nil when absent) after making sure its
// container exists (404 ContainerNotFound). A blob record is only ever
// written in the transaction that found its container, and Delete
// Container removes the blob records with the container record, so a
// stored blob proves its container: the container is looked up only when
// the blob is not there.
func getBlobIn(tx storage.Tx, ref Ref) (*Blob, error) {
	b, err := getBlob(tx, ref.Account, ref.Container, ref.key(), ref.Name, ref.Snapshot)
	if err != nil || b != nil {
		return b, err
	}
	if id, ok := VersionOf(ref.Snapshot); ok {
		// The current version is the blob itself.
		if b, err = getBlob(tx, ref.Account, ref.Container, ref.key(), ref.Name, ""); err != nil || b != nil && b.VersionID == id {
			return b, err
		}
	}
	return nil, containerExists(tx, ref.Account, ref.Container)
}

// getBlobStagedIn is getBlobIn for writes that replace a blob whole (Put
// Blob), which also drop its uncommitted blocks: it reads the blob
// record, the staging record and the container record together, in one
// round trip on a server engine instead of up to three (lazuli-bench
// blob-put-ifmatch on PostgreSQL: see the commit that introduced it).
// With policy set (an account without versioning, whose overwrite then
// consults the delete retention policy: keepOverwritten) it reads the
// policy record in the same statement: the PostgreSQL engine answers the
// later read of it from what the transaction already read, one round
// trip and one statement fewer per Put Blob; the other engines are spared
// the second read by handing the policy on (pol).
func getBlobStagedIn(tx storage.Tx, ref Ref, policy bool) (b *Blob, staged bool, pol policyRead, err error) {
	keys := [][]byte{
		blobKey(ref.Account, ref.Container, ref.key(), ref.Snapshot),
		stagingKey(ref.Account, ref.Container, ref.key()),
		containerKey(ref.Account, ref.Container),
	}
	if policy {
		keys = append(keys, policyKey(ref.Account))
	}
	vals, err := storage.GetMany(tx, keys)
	if err != nil {
		return nil, false, pol, err
	}
	staged = vals[1] != nil
	if vals[2] == nil && vals[0] == nil {
		return nil, false, pol, azerr.New(azerr.ContainerNotFound)
	}
	if policy {
		pol.known = true
		if vals[3] != nil {
			if pol.pol, err = decode[DeletePolicy](vals[3]); err != nil {
				return nil, false, pol, err
			}
		}
	}
	if vals[0] == nil {
		return nil, staged, pol, nil
	}
	if b, err = decodeBlobAt(vals[0], ref.Name, ref.Snapshot); err != nil {
		return nil, false, pol, err
	}
	b.key = ref.key()
	b.loaded = true
	b.storedTags = b.Tags
	return b, staged, pol, nil
}

// readChecked is loadChecked for reads (Get Blob, Get Blob Properties):
// conditions follow the read rules (304 / 412).
func (s *Service) readChecked(tx storage.Tx, ref Ref, cond Cond, version string, now time.Time, readsContent bool) (*Blob, error) {
	b, err := getBlobIn(tx, ref)
	if err != nil {
		return nil, err
	}
	if b == nil || b.expired(now) {
		return nil, azerr.New(azerr.BlobNotFound)
	}
	b.settleRehydration(now)
	st := conditional.State{Exists: true, ETag: content.ETagRaw(b.ETag), LastModified: b.Modified}
	out, err := conditional.EvalRead(cond.Conditions, st, version)
	if err != nil {
		return nil, err
	}
	if out != conditional.Pass {
		return nil, out.Err(azerr.ConditionNotMet, 0)
	}
	if err := checkKey(cond, b); err != nil {
		return nil, err
	}
	if cond.IfTags != "" {
		ok, err := MatchTags(cond.IfTags, b.Tags, "")
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, azerr.New(azerr.ConditionNotMet)
		}
	}
	if ref.Snapshot == "" {
		if _, code := lease.Enforce(b.Lease, cond.LeaseID, false, now, lease.BlobTarget); code != 0 {
			return nil, azerr.New(code)
		}
	}
	if readsContent {
		if b.AccessTier == "Archive" {
			// An archived blob's content is offline until rehydrated.
			return nil, azerr.New(azerr.BlobArchived)
		}
		if err := hydrate(tx, ref.Account, ref.Container, b); err != nil {
			return nil, err
		}
	}
	b.AsOf = now
	return b, nil
}

func snapshotWrite(ref Ref) error {
	if ref.Snapshot != "" {
		return azerr.New(azerr.InvalidOperation)
	}
	return nil
}

// dropStaging removes the uncommitted blocks of a blob. Uncommitted
// blocks are only ever stored together with the staging record (Put Block
// writes both, dropStaging and Delete Container remove both), so a blob
// without a staging record, the common case, costs one point read.
func dropStaging(tx storage.Tx, ref Ref) error {
	sk := stagingKey(ref.Account, ref.Container, ref.key())
	if _, err := tx.Get(sk); errors.Is(err, storage.ErrNotFound) {
		return nil
	} else if err != nil {
		return err
	}
	return dropStaged(tx, ref)
}

// dropStaged removes the uncommitted blocks of a blob whose staging record
// is there.
func dropStaged(tx storage.Tx, ref Ref) error {
	if err := tx.Delete(stagingKey(ref.Account, ref.Container, ref.key())); err != nil {
		return err
	}
	return deleteRange(tx, blocksPrefix(ref.Account, ref.Container, ref.key()))
}

// PutBlobRequest is Put Blob (and the create of page and append blobs).
type PutBlobRequest struct {
	Ref
	Type     string
	Data     Ingested // written by Ingest before the call (block blobs)
	Props    Props
	Meta     []KV
	Tags     []KV
	Cond     Cond
	PageSize int64 // page blobs: x-ms-blob-content-length
	Seq      int64 // page blobs: x-ms-blob-sequence-number
	Tier     string
	Protect  *Protection // immutability policy and legal hold of the new version
}

// PutBlob is Put Blob: it replaces any blob of any type, drops its staged
// blocks, keeps its snapshots, and keeps an active lease when the request
// carried its id.
func (s *Service) PutBlob(ctx context.Context, req PutBlobRequest) (*Blob, error) {
	if err := snapshotWrite(req.Ref); err != nil {
		return nil, err
	}
	if err := content.ValidateMetadata(req.Meta); err != nil {
		return nil, err
	}
	if err := ValidateTags(req.Tags); err != nil {
		return nil, err
	}
	var out *Blob
	err := s.eng.Update(ctx, func(tx storage.Tx) error {
		if err := s.keyed(tx, &req.Ref); err != nil {
			return err
		}
		now := s.now()
		var staged bool
		var pol policyRead
		old, ls, err := s.loadChecked(tx, req.Ref, req.Cond, checkOpts{create: true, staged: &staged, policy: &pol}, now)
		if err != nil {
			return err
		}
		b := &Blob{Name: req.Name, Type: req.Type, Created: now, Modified: s.written(now), Props: req.Props,
			Meta: req.Meta, Tags: req.Tags, Lease: ls, AccessTier: req.Tier, TierChanged: tierSetAt(req.Tier, now), KeySHA256: req.Cond.KeySHA256,
			EncryptionScope: req.Cond.EncryptionScope, key: req.key()}
		var prev uint64
		if old != nil {
			// An overwrite keeps the blob's creation time.
			prev, b.Created = old.ETag, old.Created
		}
		b.ETag = s.etag(prev, now)
		switch req.Type {
		case BlockBlob:
			b.Size = req.Data.Size
			if len(req.Data.Segs) > 0 {
				b.Blocks = []Block{{Size: req.Data.Size, Segs: req.Data.Segs}}
			}
			if len(b.Props.ContentMD5) == 0 {
				b.Props.ContentMD5 = req.Data.MD5
			}
		case PageBlob:
			b.Size, b.Seq = req.PageSize, req.Seq
		case AppendBlob:
		}
		if staged {
			if err := dropStaged(tx, req.Ref); err != nil {
				return err
			}
		}
		if err := s.checkOverwrite(tx, req.Ref, old, req.Protect, now); err != nil {
			return err
		}
		req.Protect.apply(b)
		if err := s.beforeReplace(ctx, tx, req.Ref, old, b, pol, now); err != nil {
			return err
		}
		b.replacing(old)
		out = b
		return putBlob(tx, req.Account, req.Container, b)
	})
	return out, err
}

// GetBlob loads a blob for Get Blob / Get Blob Properties / Get Metadata,
// applying the read conditions and the lease id if one is given.
func (s *Service) GetBlob(ctx context.Context, ref Ref, cond Cond, version string) (*Blob, error) {
	var out *Blob
	err := s.eng.View(ctx, func(tx storage.Tx) error {
		if err := s.keyed(tx, &ref); err != nil {
			return err
		}
		if err := checkPath(ctx, tx, ref, OpRead); err != nil {
			return err
		}
		b, err := s.readChecked(tx, ref, cond, version, s.now(), true)
		out = b
		return err
	})
	return out, err
}

// GetBlobProperties is GetBlob without the content layout: enough for Get
// Blob Properties and Get Blob Metadata, and cheaper for blobs whose
// blocks or pages live outside the record.
func (s *Service) GetBlobProperties(ctx context.Context, ref Ref, cond Cond, version string) (*Blob, error) {
	return s.getProps(ctx, ref, cond, version, OpStat)
}

// GetBlobMetadata is GetBlobProperties for Get Blob Metadata, which reads
// the blob (read permission on an HNS account) rather than reaching it.
func (s *Service) GetBlobMetadata(ctx context.Context, ref Ref, cond Cond, version string) (*Blob, error) {
	return s.getProps(ctx, ref, cond, version, OpRead)
}

func (s *Service) getProps(ctx context.Context, ref Ref, cond Cond, version string, op PathOp) (*Blob, error) {
	var out *Blob
	err := s.eng.View(ctx, func(tx storage.Tx) error {
		if err := s.keyed(tx, &ref); err != nil {
			return err
		}
		if err := checkPath(ctx, tx, ref, op); err != nil {
			return err
		}
		b, err := s.readChecked(tx, ref, cond, version, s.now(), false)
		out = b
		return err
	})
	return out, err
}

// modify runs the common write path on an existing blob: checks, fn, new
// ETag and Last-Modified unless fn says the write does not change them.
func (s *Service) modify(ctx context.Context, ref *Ref, cond Cond, o checkOpts, fn func(tx storage.Tx, b *Blob, now time.Time) (touch bool, err error)) (*Blob, error) {
	if err := snapshotWrite(*ref); err != nil {
		return nil, err
	}
	o.mustExist = true
	var out *Blob
	err := s.eng.Update(ctx, func(tx storage.Tx) error {
		if err := s.keyed(tx, ref); err != nil {
			return err
		}
		now := s.now()
		if err := checkPath(ctx, tx, *ref, OpWrite); err != nil {
			return err
		}
		b, ls, err := s.loadChecked(tx, *ref, cond, o, now)
		if err != nil {
			return err
		}
		b.Lease = ls
		touch, err := fn(tx, b, now)
		if err != nil {
			return err
		}
		if touch {
			b.Modified, b.ETag = s.written(now), s.etag(b.ETag, now)
		}
		out = b
		return putBlob(tx, ref.Account, ref.Container, b)
	})
	return out, err
}

// SetPropsRequest is Set Blob Properties.
type SetPropsRequest struct {
	Props Props
	// Page blobs: resize and sequence number action.
	NewSize   *int64
	SeqAction string // "", "max", "update", "increment"
	Seq       *int64
	Cond      Cond
	// ReplaceProps is set when the request sets content properties (not
	// for a pure resize or sequence number update).
	ReplaceProps bool
}

// SetBlobProperties is Set Blob Properties: every content property is
// replaced (an omitted one is cleared).
func (s *Service) SetBlobProperties(ctx context.Context, ref Ref, req SetPropsRequest) (*Blob, error) {
	return s.modify(ctx, &ref, req.Cond, checkOpts{guard: req.NewSize != nil}, func(tx storage.Tx, b *Blob, now time.Time) (bool, error) {
		if (req.NewSize != nil || req.SeqAction != "") && b.Type != PageBlob {
			return false, azerr.New(azerr.InvalidBlobType)
		}
		if req.NewSize != nil {
			n := *req.NewSize
			if n%512 != 0 || n < 0 || n > MaxPageBlobSize {
				return false, azerr.InvalidValue(InputPageBlobSize, strconv.FormatInt(n, 10))
			}
			if n < b.Size {
				pp := pagesPrefix(ref.Account, ref.Container, b.key, "")
				if err := content.ClearStoredPages(tx, pp, n, b.Size); err != nil {
					return false, err
				}
			}
			b.Size = n
		}
		switch req.SeqAction {
		case "max":
			if *req.Seq > b.Seq {
				b.Seq = *req.Seq
			}
		case "update":
			b.Seq = *req.Seq
		case "increment":
			if b.Seq == 1<<63-1 {
				return false, azerr.New(azerr.SequenceNumberIncrementTooLarge)
			}
			b.Seq++
		}
		if req.ReplaceProps {
			b.Props = req.Props
		}
		return true, nil
	})
}

// SetBlobMetadata is Set Blob Metadata (replaces all metadata).
func (s *Service) SetBlobMetadata(ctx context.Context, ref Ref, meta []KV, cond Cond) (*Blob, error) {
	if err := content.ValidateMetadata(meta); err != nil {
		return nil, err
	}
	return s.modify(ctx, &ref, cond, checkOpts{guard: true}, func(tx storage.Tx, b *Blob, now time.Time) (bool, error) {
		if err := s.newMetadataVersion(tx, ref, b, now); err != nil {
			return false, err
		}
		b.Meta = s.namespaceMeta(ref, b, meta)
		return true, nil
	})
}

// DeleteBlob is Delete Blob. deleteSnapshots is "", "include" or "only".
func (s *Service) DeleteBlob(ctx context.Context, ref Ref, deleteSnapshots string, cond Cond) error {
	_, err := s.DeleteBlobKept(ctx, ref, deleteSnapshots, cond)
	return err
}

// DeleteBlobKept is DeleteBlob reporting whether soft delete kept what it
// deleted (x-ms-delete-type-permanent: false).
func (s *Service) DeleteBlobKept(ctx context.Context, ref Ref, deleteSnapshots string, cond Cond) (kept bool, err error) {
	return kept, s.eng.Update(ctx, func(tx storage.Tx) error {
		if err := s.keyed(tx, &ref); err != nil {
			return err
		}
		kept = false
		now := s.now()
		if ref.Snapshot != "" && deleteSnapshots != "" {
			return azerr.InvalidValue(InputDeleteSnapshots, deleteSnapshots)
		}
		if err := checkPath(ctx, tx, ref, OpDelete); err != nil {
			return err
		}
		b, _, err := s.loadChecked(tx, ref, cond, checkOpts{mustExist: true, guard: deleteSnapshots != "only"}, now)
		if err != nil {
			return err
		}
		if deleteSnapshots != "" {
			if err := snapshotsDeletable(tx, ref, now); err != nil {
				return err
			}
		}
		if err := s.namespaceDelete(ctx, tx, ref, b); err != nil {
			return err
		}
		pol, err := deletePolicy(tx, ref.Account)
		if err != nil {
			return err
		}
		if ref.Snapshot != "" && b.Snapshot == "" {
			// versionid= of the current version: the blob goes without
			// leaving that version behind.
			kept = pol != nil
			ref.Snapshot = ""
			return removeBlob(tx, ref, "", pol, false, now)
		}
		versioned := ref.Snapshot == "" && deleteSnapshots != "only" && s.Versioning(ref.Account)
		kept = pol != nil || versioned
		if pol != nil && !versioned && ref.Snapshot == "" && deleteSnapshots != "only" && s.HierarchicalNamespace(ref.Account) {
			return s.softDeleteBase(tx, ref, deleteSnapshots, pol, now)
		}
		return removeBlob(tx, ref, deleteSnapshots, pol, versioned, now)
	})
}

// snapshotsDeletable refuses a Delete Blob with x-ms-delete-snapshots
// while one of the snapshots it would remove has a legal hold or a policy
// whose date is ahead, as a delete of that snapshot alone is refused.
func snapshotsDeletable(tx storage.Tx, ref Ref, now time.Time) error {
	ids, err := snapshotIDs(tx, ref)
	if err != nil {
		return err
	}
	for _, id := range ids {
		sb, err := getBlob(tx, ref.Account, ref.Container, ref.key(), ref.Name, id)
		if err != nil {
			return err
		}
		if err := immutableErr(sb, now); err != nil {
			return err
		}
	}
	return nil
}

// snapshotIDs lists the snapshots of a blob.
func snapshotIDs(tx storage.Tx, ref Ref) ([]string, error) {
	p := blobVersionsPrefix(ref.Account, ref.Container, ref.key())
	var out []string
	it := tx.Scan(p, keyenc.PrefixEnd(p), false)
	defer it.Close()
	for it.Next() {
		sn, _, err := keyenc.ReadString(it.Key()[len(p):])
		if err != nil {
			return nil, err
		}
		if _, version := VersionOf(sn); sn != "" && !version {
			out = append(out, sn)
		}
	}
	return out, it.Err()
}

// SnapshotBlob is Snapshot Blob. The snapshot copies content, properties
// and metadata (or meta when given), not the lease; the base blob's ETag
// and Last-Modified do not change.
func (s *Service) SnapshotBlob(ctx context.Context, ref Ref, meta []KV, cond Cond) (*Blob, error) {
	if err := snapshotWrite(ref); err != nil {
		return nil, err
	}
	if err := content.ValidateMetadata(meta); err != nil {
		return nil, err
	}
	var out *Blob
	err := s.eng.Update(ctx, func(tx storage.Tx) error {
		if err := s.keyed(tx, &ref); err != nil {
			return err
		}
		now := s.now()
		if err := checkPath(ctx, tx, ref, OpWrite); err != nil {
			return err
		}
		b, _, err := s.loadChecked(tx, ref, cond, checkOpts{mustExist: true, read: true}, now)
		if err != nil {
			return err
		}
		if err := hydrate(tx, ref.Account, ref.Container, b); err != nil {
			return err
		}
		snap := *b
		snap.loaded = false // a new record: its append blocks are written anew
		// A snapshot is no version: it answers no x-ms-version-id.
		snap.Lease, snap.VersionID = lease.State{}, ""
		if meta != nil {
			snap.Meta = meta
			snap.Modified = s.written(now)
		}
		// Soft-deleted snapshots keep their ids, which a restore needs free.
		if snap.Snapshot, err = freeSnapshotID(tx, ref.Account, ref.Container, ref.key(), ref.Name, now); err != nil {
			return err
		}
		out = &snap
		return putBlob(tx, ref.Account, ref.Container, &snap)
	})
	return out, err
}

// LeaseBlob is Lease Blob. It changes neither ETag nor Last-Modified.
func (s *Service) LeaseBlob(ctx context.Context, ref Ref, req LeaseRequest) (*Blob, lease.Result, error) {
	if ref.Snapshot != "" {
		return nil, lease.Result{}, azerr.InvalidQuery("snapshot", ref.Snapshot, "")
	}
	var out *Blob
	var res lease.Result
	a := req.Action
	if a.Kind == lease.Acquire && a.ProposedID == "" {
		// Only an acquire without a proposed id takes a new id; make it
		// before the transaction, which may run more than once.
		a.NewID = s.newID()
	}
	// The lease id of a lease request is not a condition.
	cond := req.Cond
	cond.LeaseID = ""
	err := s.eng.Update(ctx, func(tx storage.Tx) error {
		if err := s.keyed(tx, &ref); err != nil {
			return err
		}
		now := s.now()
		if err := checkPath(ctx, tx, ref, OpWrite); err != nil {
			return err
		}
		b, _, err := s.loadChecked(tx, ref, cond, checkOpts{mustExist: true, read: true}, now)
		if err != nil {
			return err
		}
		if b.Copy != nil && b.Copy.Status == "pending" {
			return azerr.New(azerr.PendingCopyOperation)
		}
		n, r, code := lease.Apply(b.Lease, a, now)
		if code != 0 {
			return azerr.New(code)
		}
		b.Lease, res, out = n, r, b
		return putBlob(tx, ref.Account, ref.Container, b)
	})
	return out, res, err
}

// setSnapshotTier is Set Blob Tier on a snapshot: a snapshot has a tier of
// its own, but one moved to the archive tier cannot be rehydrated (Azure:
// copy it to a new blob instead), which answers 409 BlobArchived.
func (s *Service) setSnapshotTier(ctx context.Context, ref Ref, tier string, cond Cond) error {
	return s.eng.Update(ctx, func(tx storage.Tx) error {
		if err := s.keyed(tx, &ref); err != nil {
			return err
		}
		now := s.now()
		if err := checkPath(ctx, tx, ref, OpWrite); err != nil {
			return err
		}
		b, _, err := s.loadChecked(tx, ref, cond, checkOpts{mustExist: true}, now)
		if err != nil {
			return err
		}
		if b.Type != BlockBlob {
			return azerr.New(azerr.InvalidBlobType)
		}
		if b.AccessTier == "Archive" && tier != "Archive" {
			return azerr.New(azerr.BlobArchived)
		}
		if b.AccessTier == tier {
			return nil
		}
		b.AccessTier, b.TierChanged = tier, now
		return putBlob(tx, ref.Account, ref.Container, b)
	})
}

// SetTier is Set Blob Tier for block blobs. Leaving the archive tier
// rehydrates at once (rehydrated reports it, Azure answers such a request
// 202); there are no rehydration delays. It changes neither ETag nor
// Last-Modified.
func (s *Service) SetTier(ctx context.Context, ref Ref, tier, priority string, cond Cond) (rehydrated bool, err error) {
	if ref.Snapshot != "" {
		return false, s.setSnapshotTier(ctx, ref, tier, cond)
	}
	if priority == "" {
		priority = "Standard"
	}
	_, err = s.modify(ctx, &ref, cond, checkOpts{}, func(tx storage.Tx, b *Blob, now time.Time) (bool, error) {
		if b.Type != BlockBlob {
			return false, azerr.New(azerr.InvalidBlobType)
		}
		if b.RehydrateTo != "" {
			// Only the priority of a pending rehydration may change, and
			// only up.
			if tier != b.RehydrateTo {
				return false, azerr.New(azerr.BlobBeingRehydrated)
			}
			if priority == "High" && b.RehydratePriority != "High" {
				b.RehydratePriority = "High"
				if due := now.Add(RehydrateHigh); due.Before(b.RehydrateDone) {
					b.RehydrateDone = due
				}
			}
			rehydrated = true
			return false, nil
		}
		if b.AccessTier == "Archive" && tier != "Archive" {
			// Rehydration: the blob stays archived until it completes.
			d := RehydrateStandard
			if priority == "High" {
				d = RehydrateHigh
			}
			b.RehydrateTo, b.RehydratePriority, b.RehydrateDone = tier, priority, now.Add(d)
			rehydrated = true
			return false, nil
		}
		if b.AccessTier != tier {
			b.TierChanged = now
		}
		b.AccessTier = tier
		return false, nil
	})
	return rehydrated, err
}

// How long a rehydration from the archive tier takes: what Azure states
// for a blob under 10 GiB ("may complete in under one hour" at High
// priority, "up to 15 hours" at Standard). Tests move the server clock.
const (
	RehydrateHigh     = time.Hour
	RehydrateStandard = 15 * time.Hour
)

// settleRehydration completes a pending rehydration whose time has come:
// the blob takes its new tier, changed at the completion time.
func (b *Blob) settleRehydration(now time.Time) {
	if b.RehydrateTo == "" || now.Before(b.RehydrateDone) {
		return
	}
	b.AccessTier, b.TierChanged = b.RehydrateTo, b.RehydrateDone
	b.RehydrateTo, b.RehydratePriority, b.RehydrateDone = "", "", time.Time{}
}

// key is the key name of the path ref names (see pathKey), as keyed
// resolved it in the operation's transaction. A ref used unkeyed is a bug
// that would touch the wrong records on an account with a namespace, so
// it stops the request instead.
func (r Ref) key() pathKey {
	if r.k == "" {
		panic("blob: ref not keyed: " + r.Name)
	}
	return r.k
}

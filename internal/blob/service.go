package blob

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/conditional"
	"github.com/lazuli-storage/lazuli/internal/content"
	"github.com/lazuli-storage/lazuli/internal/keyenc"
	"github.com/lazuli-storage/lazuli/internal/lease"
	"github.com/lazuli-storage/lazuli/internal/worker"
	"github.com/lazuli-storage/lazuli/storage"
)

// Service runs Blob operations against one engine.
type Service struct {
	eng   storage.Engine
	now   func() time.Time
	newID func() string
	// Chunks writes request bodies to the chunk store and reads them
	// back (Ingest, OpenSegments, UseMD5Lanes).
	*content.Chunks
	// clock stamps ETags and written times; its floor is set by UseFloor.
	clock content.Clock
	// purge removes soft-deleted blobs whose retention ended (see Run).
	purge worker.Loop
	// versioning says which accounts keep blob versions (UseVersioning).
	versioning func(acct string) bool
	// containerDays is the container delete retention of an account
	// (UseContainerRetention).
	containerDays func(acct string) int
	// namespace says which accounts have a hierarchical namespace
	// (UseHierarchicalNamespace).
	namespace func(acct string) bool
	// upns caches the user principal names the engine holds (LearnUPN).
	upns upnCache
}

// UseFloor makes the times the service writes (Last-Modified) and its
// ETag stamps never go below f() (content.Clock.UseFloor).
func (s *Service) UseFloor(f func() time.Time) { s.clock.UseFloor(f) }

// written is the time a write made at now records (content.Clock.Written).
func (s *Service) written(now time.Time) time.Time { return s.clock.Written(now) }

// etag is the ETag stamp of a write over prev (content.Clock.ETag).
func (s *Service) etag(prev uint64, now time.Time) uint64 { return s.clock.ETag(prev, now) }

// New returns a Service. now is the clock of every time rule; newID makes
// lease and copy ids (GUIDs).
func New(eng storage.Engine, now func() time.Time, newID func() string) *Service {
	return &Service{eng: eng, now: now, newID: newID, Chunks: content.NewChunks(eng)}
}

// Engine returns the engine the service runs on.
func (s *Service) Engine() storage.Engine { return s.eng }

// Cond is what a request says about the state it expects: conditional
// headers, x-ms-lease-id and x-ms-if-tags.
type Cond struct {
	conditional.Conditions
	LeaseID string
	IfTags  string
	// CreateOnly is set for a write authorized by a SAS with create but
	// not write permission: it may create the blob, not overwrite it
	// (403 AuthorizationPermissionMismatch).
	CreateOnly bool
	// SourceRead marks the x-ms-source-if-* conditions of a From-URL
	// operation, which Azure applies as to the GET of its source: an unmet
	// If-None-Match or If-Modified-Since is 304 CannotVerifyCopySource,
	// an unmet If-Match or If-Unmodified-Since 412 SourceConditionNotMet.
	SourceRead bool
	// TierModifiedSince and TierUnmodifiedSince are Delete Blob's
	// x-ms-access-tier-if-(un)modified-since, checked against the access
	// tier change time (the creation time when the tier never changed):
	// 412 AccessTierChangeTimeConditionNotMet.
	TierModifiedSince, TierUnmodifiedSince time.Time
	// KeyCheck is set by the operations that read or change a blob's
	// content or metadata, which must present the customer-provided key
	// the blob was written with (KeySHA256, its SHA-256) and none for a
	// blob written without: 409 BlobUsesCustomerSpecifiedEncryption /
	// BlobDoesNotUseCustomerSpecifiedEncryption.
	KeyCheck  bool
	KeySHA256 string
	// EncryptionScope is the scope a creating write stores with the blob.
	EncryptionScope string
}

// checkKey applies cond's customer-provided key rule to b.
func checkKey(cond Cond, b *Blob) error {
	if !cond.KeyCheck || b == nil || cond.KeySHA256 == b.KeySHA256 {
		return nil
	}
	if b.KeySHA256 == "" {
		return azerr.New(azerr.BlobDoesNotUseCustomerSpecifiedEncryption)
	}
	if cond.KeySHA256 == "" {
		return azerr.New(azerr.BlobUsesCustomerSpecifiedEncryption)
	}
	return azerr.Newf(azerr.BlobUsesCustomerSpecifiedEncryption, "The given customer specified encryption key does not match the key used to encrypt the blob.")
}

// ValidateContainerName checks the container naming rules.
func ValidateContainerName(name string) error {
	if name == "$root" || name == "$logs" || name == "$web" {
		return nil
	}
	if len(name) < 3 || len(name) > 63 {
		return azerr.New(azerr.OutOfRangeInput)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		ok := c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-'
		if !ok {
			return azerr.New(azerr.InvalidResourceName)
		}
	}
	if name[0] == '-' || name[len(name)-1] == '-' || strings.Contains(name, "--") {
		return azerr.New(azerr.InvalidResourceName)
	}
	return nil
}

// ValidateBlobName checks the blob naming rules: 1..1024 characters, valid
// UTF-8, no control characters that URLs cannot carry, <= 254 segments.
// The noncharacters U+FFFE and U+FFFF are accepted as Azure accepts them;
// listings send such names encoded.
func ValidateBlobName(name string) error {
	n := utf8.RuneCountInString(name)
	if n < 1 || n > 1024 {
		return azerr.New(azerr.OutOfRangeInput)
	}
	if !utf8.ValidString(name) {
		return azerr.New(azerr.InvalidResourceName)
	}
	for _, r := range name {
		if r == utf8.RuneError || (r < 0x20 && r != '\t') || r == 0x7f || (r >= 0xD800 && r <= 0xDFFF) {
			return azerr.New(azerr.InvalidResourceName)
		}
	}
	if strings.Count(name, "/") >= 254 {
		return azerr.New(azerr.InvalidResourceName)
	}
	return nil
}

func getContainer(tx storage.Tx, acct, name string) (*Container, error) {
	v, err := tx.Get(containerKey(acct, name))
	if errors.Is(err, storage.ErrNotFound) {
		return nil, azerr.New(azerr.ContainerNotFound)
	}
	if err != nil {
		return nil, err
	}
	return decode[Container](v)
}

// containerExists is getContainer for callers that need only to know the
// container is there: it skips decoding the record.
func containerExists(tx storage.Tx, acct, name string) error {
	_, err := tx.Get(containerKey(acct, name))
	if errors.Is(err, storage.ErrNotFound) {
		return azerr.New(azerr.ContainerNotFound)
	}
	return err
}

// getBlob loads the record of the path name, keyed k, at snap (nil when
// there is none).
func getBlob(tx storage.Tx, acct, c string, k pathKey, name, snap string) (*Blob, error) {
	v, err := tx.Get(blobKey(acct, c, k, snap))
	if errors.Is(err, storage.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	b, err := decodeBlobAt(v, name, snap)
	if err != nil {
		return nil, err
	}
	// The name stored in the record is the one it was written under; a
	// rename of an ancestor since leaves it behind.
	b.Name = name
	b.loaded = true
	b.storedTags = b.Tags
	b.key = k
	return b, nil
}

// reindexTags moves the tag index entries of a base blob from old to new.
func reindexTags(tx storage.Tx, acct, c string, k pathKey, old, new []KV) error {
	if sameTags(old, new) {
		return nil
	}
	for _, kv := range old {
		if err := tx.Delete(tagIndexKey(acct, kv[0], kv[1], c, k)); err != nil {
			return err
		}
	}
	for _, kv := range new {
		if err := tx.Set(tagIndexKey(acct, kv[0], kv[1], c, k), nil); err != nil {
			return err
		}
	}
	return nil
}

func sameTags(a, b []KV) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) == 0 {
		return true
	}
	m := map[KV]bool{}
	for _, kv := range a {
		m[kv] = true
	}
	for _, kv := range b {
		if !m[kv] {
			return false
		}
	}
	return true
}

// storedTagsAt returns the tags of the record stored under a blob key.
func storedTagsAt(tx storage.Tx, acct, c string, k pathKey, snap string) ([]KV, error) {
	old, err := getBlob(tx, acct, c, k, string(k), snap)
	if err != nil || old == nil {
		return nil, err
	}
	return old.Tags, nil
}

// hydrate loads the blocks of an append blob (kept under their own keys)
// into b.Blocks; other blobs already carry their content.
func hydrate(tx storage.Tx, acct, c string, b *Blob) error {
	if b.Type == PageBlob && b.Pages == nil {
		p := pagesPrefix(acct, c, b.key, b.Snapshot)
		it := tx.Scan(p, keyenc.PrefixEnd(p), false)
		defer it.Close()
		b.Pages = []Page{}
		for it.Next() {
			pg, err := content.DecodePage(it.Value())
			if err != nil {
				return err
			}
			b.Pages = append(b.Pages, pg)
		}
		return it.Err()
	}
	if b.Type == BlockBlob && b.ExtBlocks && b.Blocks == nil {
		v, err := tx.Get(blockListKey(acct, c, b.key, b.Snapshot))
		if err != nil {
			return fmt.Errorf("blob: block list of %q: %w", b.Name, err)
		}
		lb, err := decodeBlob(v)
		if err != nil {
			return err
		}
		b.Blocks = lb.Blocks
		return nil
	}
	if b.Type != AppendBlob || b.Blocks != nil {
		return nil
	}
	p := appendsPrefix(acct, c, b.key, b.Snapshot)
	it := tx.Scan(p, keyenc.PrefixEnd(p), false)
	defer it.Close()
	b.Blocks = []Block{}
	for it.Next() {
		bl, err := decodeBlock(it.Value())
		if err != nil {
			return err
		}
		b.Blocks = append(b.Blocks, *bl)
	}
	return it.Err()
}

// putBlob stores b. A blob that was not loaded from the store replaces
// whatever was stored under its key, append blocks included; an append
// blob's blocks go to their own keys.
func putBlob(tx storage.Tx, acct, c string, b *Blob) error {
	if b.key == "" {
		return fmt.Errorf("blob: record of %q without a key name", b.Name)
	}
	if b.Snapshot == "" {
		old := b.storedTags
		if !b.loaded && !b.tagsKnown {
			var err error
			if old, err = storedTagsAt(tx, acct, c, b.key, ""); err != nil {
				return err
			}
		}
		if err := reindexTags(tx, acct, c, b.key, old, b.Tags); err != nil {
			return err
		}
		b.storedTags = b.Tags
	}
	rec := b
	if !b.loaded {
		var err error
		if b.tagsKnown {
			err = deleteExtentsOf(tx, acct, c, b.key, b.Snapshot, b.replaced)
		} else {
			err = deleteExtents(tx, acct, c, b.key, b.Snapshot)
		}
		if err != nil {
			return err
		}
		switch b.Type {
		case AppendBlob:
			for i := range b.Blocks {
				if err := tx.Set(appendKey(acct, c, b.key, b.Snapshot, i), encodeBlock(&b.Blocks[i])); err != nil {
					return err
				}
			}
		case PageBlob:
			pp := pagesPrefix(acct, c, b.key, b.Snapshot)
			for _, pg := range b.Pages {
				if err := tx.Set(content.PageKey(pp, pg.Start), content.EncodePage(pg)); err != nil {
					return err
				}
			}
		}
	}
	cp := *b
	rec = &cp
	switch b.Type {
	case AppendBlob:
		cp.Blocks = nil
	case PageBlob:
		cp.Pages = nil
	case BlockBlob:
		// Long block lists live under their own key so that reading the
		// record (properties, listings) stays cheap; short ones, and
		// inlined content, stay in the record.
		if b.Blocks != nil || !b.loaded {
			if len(b.Blocks) > ExtBlocksMin {
				if err := tx.Set(blockListKey(acct, c, b.key, b.Snapshot), encodeBlob(&Blob{Blocks: b.Blocks})); err != nil {
					return err
				}
				cp.Blocks, cp.ExtBlocks = nil, true
			} else {
				if b.loaded && b.ExtBlocks {
					if err := tx.Delete(blockListKey(acct, c, b.key, b.Snapshot)); err != nil {
						return err
					}
				}
				cp.ExtBlocks = false
			}
		}
	}
	return tx.Set(blobKey(acct, c, b.key, b.Snapshot), encodeBlob(rec))
}

// deleteBlobKey removes one blob or snapshot record with its append blocks.
func deleteBlobKey(tx storage.Tx, acct, c string, k pathKey, snap string) error {
	old, err := getBlob(tx, acct, c, k, string(k), snap)
	if err != nil {
		return err
	}
	if old == nil {
		// No record, so no extents either (see deleteExtentsOf).
		return nil
	}
	if snap == "" {
		if err := reindexTags(tx, acct, c, k, old.Tags, nil); err != nil {
			return err
		}
	}
	if err := deleteExtentsOf(tx, acct, c, k, snap, old); err != nil {
		return err
	}
	return tx.Delete(blobKey(acct, c, k, snap))
}

// deleteExtentsOf removes the extents stored for old, the record being
// replaced (nil when there is none). Extents exist only next to a record
// of the type that writes them: append blocks for an append blob, pages
// for a page blob, a block list key for a block blob whose record says
// ExtBlocks. A record's type changes only when a new record replaces it,
// which removes the old extents first, so old alone says what is stored
// and a new blob costs no scans at all.
func deleteExtentsOf(tx storage.Tx, acct, c string, k pathKey, snap string, old *Blob) error {
	if old == nil {
		return nil
	}
	switch old.Type {
	case AppendBlob:
		return deleteRange(tx, appendsPrefix(acct, c, k, snap))
	case PageBlob:
		return deleteRange(tx, pagesPrefix(acct, c, k, snap))
	case BlockBlob:
		if old.ExtBlocks {
			return tx.Delete(blockListKey(acct, c, k, snap))
		}
		return nil
	}
	return deleteExtents(tx, acct, c, k, snap)
}

// deleteExtents removes the append blocks and pages stored for a blob.
func deleteExtents(tx storage.Tx, acct, c string, k pathKey, snap string) error {
	if err := deleteRange(tx, appendsPrefix(acct, c, k, snap)); err != nil {
		return err
	}
	if err := tx.Delete(blockListKey(acct, c, k, snap)); err != nil {
		return err
	}
	return deleteRange(tx, pagesPrefix(acct, c, k, snap))
}

func putContainer(tx storage.Tx, acct string, c *Container) error {
	return tx.Set(containerKey(acct, c.Name), encode(c))
}

// ---- Containers ----

// CreateContainer is Create Container.
func (s *Service) CreateContainer(ctx context.Context, acct, name string, meta []KV, public string) (*Container, error) {
	return s.CreateContainerScoped(ctx, acct, name, meta, public, "", false)
}

// CreateContainerScoped is Create Container with a default encryption
// scope and its deny-override rule.
func (s *Service) CreateContainerScoped(ctx context.Context, acct, name string, meta []KV, public, scope string, deny bool) (*Container, error) {
	return s.CreateContainerWith(ctx, acct, name, ContainerOptions{Meta: meta, Public: public, Scope: scope, Deny: deny})
}

// ContainerOptions are what Create Container sets on a new container.
type ContainerOptions struct {
	Meta   []KV
	Public string
	// Scope and Deny are the default encryption scope and its
	// deny-override rule.
	Scope string
	Deny  bool
	// ImmutableVersioning turns version-level immutability support on
	// (x-ms-immutable-storage-with-versioning-enabled); the caller has
	// checked that versioning is on for the account, as Azure requires.
	ImmutableVersioning bool
}

// CreateContainerWith is Create Container with every option.
func (s *Service) CreateContainerWith(ctx context.Context, acct, name string, o ContainerOptions) (*Container, error) {
	meta := o.Meta
	if err := ValidateContainerName(name); err != nil {
		return nil, err
	}
	if err := content.ValidateMetadata(meta); err != nil {
		return nil, err
	}
	var out *Container
	err := s.eng.Update(ctx, func(tx storage.Tx) error {
		if _, err := tx.Get(containerKey(acct, name)); err == nil {
			return azerr.New(azerr.ContainerAlreadyExists)
		} else if !errors.Is(err, storage.ErrNotFound) {
			return err
		}
		now := s.now()
		c := &Container{Name: name, Created: now, Modified: s.written(now), ETag: s.etag(0, now), Meta: meta, Public: o.Public,
			DefaultScope: o.Scope, DenyScopeOverride: o.Deny, ImmutableVersioning: o.ImmutableVersioning}
		out = c
		if err := setRootOwner(ctx, tx, acct, c); err != nil {
			return err
		}
		return putContainer(tx, acct, c)
	})
	return out, err
}

// containerCheck applies the date conditions and the container lease rule
// of a container operation.
func containerCheck(c *Container, cond Cond, write bool, now time.Time) (lease.State, error) {
	st := conditional.State{Exists: true, ETag: content.ETagRaw(c.ETag), LastModified: c.Modified}
	if o := conditional.EvalDates(cond.Conditions, st); o != conditional.Pass {
		return c.Lease, o.Err(azerr.ConditionNotMet, 0)
	}
	ls, code := lease.Enforce(c.Lease, cond.LeaseID, write, now, lease.ContainerTarget)
	if code != 0 {
		return c.Lease, azerr.New(code)
	}
	return ls, nil
}

// DeleteContainer is Delete Container: only the container lease guards it;
// leases on blobs inside are ignored. Blobs, snapshots and staged blocks
// go with it.
func (s *Service) DeleteContainer(ctx context.Context, acct, name string, cond Cond) error {
	return s.eng.Update(ctx, func(tx storage.Tx) error {
		c, err := getContainer(tx, acct, name)
		if err != nil {
			return err
		}
		now := s.now()
		if _, err := containerCheck(c, cond, true, now); err != nil {
			return err
		}
		if err := checkImmutableContainer(tx, s.HierarchicalNamespace(acct), acct, c); err != nil {
			return err
		}
		hns := s.HierarchicalNamespace(acct)
		if days := s.containerRetention(acct); days > 0 {
			return softDeleteContainer(tx, hns, acct, c, days, now)
		}
		if err := tx.Delete(containerKey(acct, name)); err != nil {
			return err
		}
		if err := unindexContainer(tx, hns, acct, name); err != nil {
			return err
		}
		if !hns {
			for _, kind := range containerKinds {
				if err := deleteRange(tx, tupleKey(kind, acct, name)); err != nil {
					return err
				}
			}
			return nil
		}
		kvs, err := collectContainerKeys(tx, true, acct, name, containerKinds)
		if err != nil {
			return err
		}
		for _, kv := range kvs {
			if err := tx.Delete(kv[0]); err != nil {
				return err
			}
		}
		return nil
	})
}

// unindexContainer removes the tag index entries of a container's blobs.
func unindexContainer(tx storage.Tx, hns bool, acct, c string) error {
	type entry struct {
		key  pathKey
		tags []KV
	}
	var all []entry
	err := containerKeys(tx, hns, acct, c, []byte{kindBlob}, func(k, v []byte) error {
		b, err := decodeBlob(v)
		if err != nil {
			return err
		}
		if b.Snapshot == "" && len(b.Tags) > 0 {
			// The tag index names the key, not the name in the record.
			all = append(all, entry{recordKey(k), b.Tags})
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, e := range all {
		if err := reindexTags(tx, acct, c, e.key, e.tags, nil); err != nil {
			return err
		}
	}
	return nil
}

func deleteRange(tx storage.Tx, prefix []byte) error {
	_, err := storage.DeleteRange(tx, prefix, keyenc.PrefixEnd(prefix), 0)
	return err
}

// GetContainer is Get Container Properties / Metadata / ACL: a read that
// fails only when a lease id is given that does not match.
func (s *Service) GetContainer(ctx context.Context, acct, name, leaseID string) (*Container, error) {
	var out *Container
	err := s.eng.View(ctx, func(tx storage.Tx) error {
		c, err := getContainer(tx, acct, name)
		if err != nil {
			return err
		}
		now := s.now()
		if _, err := containerCheck(c, Cond{LeaseID: leaseID}, false, now); err != nil {
			return err
		}
		c.AsOf = now
		out = c
		return nil
	})
	return out, err
}

// ContainerExists reports whether the container exists (used for public
// access and policy lookups).
func (s *Service) ContainerExists(ctx context.Context, acct, name string) (*Container, error) {
	var out *Container
	err := s.eng.View(ctx, func(tx storage.Tx) error {
		c, err := getContainer(tx, acct, name)
		if err != nil {
			if e, ok := azerr.As(err); ok && e.Code == azerr.ContainerNotFound {
				return nil
			}
			return err
		}
		out = c
		return nil
	})
	return out, err
}

// SetContainerMetadata is Set Container Metadata (If-Modified-Since only).
func (s *Service) SetContainerMetadata(ctx context.Context, acct, name string, meta []KV, cond Cond) (*Container, error) {
	if err := content.ValidateMetadata(meta); err != nil {
		return nil, err
	}
	return s.updateContainer(ctx, acct, name, cond, func(c *Container) error {
		c.Meta = meta
		return nil
	})
}

// SetContainerACL is Set Container ACL.
func (s *Service) SetContainerACL(ctx context.Context, acct, name, public string, ids []SignedIdentifier, cond Cond) (*Container, error) {
	if len(ids) > MaxSignedIDs {
		return nil, azerr.Newf(azerr.InvalidXmlDocument, "XML specified is not syntactically valid.")
	}
	return s.updateContainer(ctx, acct, name, cond, func(c *Container) error {
		c.Public, c.ACL = public, ids
		return nil
	})
}

func (s *Service) updateContainer(ctx context.Context, acct, name string, cond Cond, fn func(*Container) error) (*Container, error) {
	var out *Container
	err := s.eng.Update(ctx, func(tx storage.Tx) error {
		c, err := getContainer(tx, acct, name)
		if err != nil {
			return err
		}
		now := s.now()
		// Only Delete Container needs the lease id; a given id must match.
		if _, err := containerCheck(c, cond, false, now); err != nil {
			return err
		}
		if err := fn(c); err != nil {
			return err
		}
		c.Modified, c.ETag = s.written(now), s.etag(c.ETag, now)
		out = c
		return putContainer(tx, acct, c)
	})
	return out, err
}

// LeaseRequest is a lease action as the HTTP layer decoded it.
type LeaseRequest struct {
	Action lease.Action
	Cond   Cond
}

// LeaseContainer is Lease Container. It changes neither ETag nor
// Last-Modified.
func (s *Service) LeaseContainer(ctx context.Context, acct, name string, req LeaseRequest) (*Container, lease.Result, error) {
	var out *Container
	var res lease.Result
	err := s.eng.Update(ctx, func(tx storage.Tx) error {
		c, err := getContainer(tx, acct, name)
		if err != nil {
			return err
		}
		st := conditional.State{Exists: true, ETag: content.ETagRaw(c.ETag), LastModified: c.Modified}
		if o := conditional.EvalDates(req.Cond.Conditions, st); o != conditional.Pass {
			return o.Err(azerr.ConditionNotMet, 0)
		}
		a := req.Action
		a.NewID = s.newID()
		n, r, code := lease.Apply(c.Lease, a, s.now())
		if code != 0 {
			return azerr.New(code)
		}
		c.Lease, res, out = n, r, c
		return putContainer(tx, acct, c)
	})
	return out, res, err
}

// ListContainers is List Containers: names after marker with the prefix,
// at most max of them, and the marker of the next page ("" at the end).
func (s *Service) ListContainers(ctx context.Context, acct, prefix, marker string, max int) ([]*Container, string, error) {
	var out []*Container
	next := ""
	err := s.eng.View(ctx, func(tx storage.Tx) error {
		now := s.now()
		base := containersPrefix(acct)
		lo := keyenc.AppendPrefix(append([]byte(nil), base...), prefix)
		hi := keyenc.PrefixEnd(lo)
		if marker != "" {
			if m := keyenc.AppendString(append([]byte(nil), base...), marker); string(m) > string(lo) {
				lo = m
			}
		}
		it := tx.Scan(lo, hi, false)
		defer it.Close()
		for it.Next() {
			c, err := decode[Container](it.Value())
			if err != nil {
				return err
			}
			if len(out) == max {
				next = c.Name
				break
			}
			c.AsOf = now
			out = append(out, c)
		}
		return it.Err()
	})
	return out, next, err
}

// ---- Service properties ----

// GetServiceProps returns the stored service properties (nil XML when
// never set).
func (s *Service) GetServiceProps(ctx context.Context, acct string) (*ServiceProps, error) {
	var out *ServiceProps
	err := s.eng.View(ctx, func(tx storage.Tx) error {
		v, err := tx.Get(serviceKey(acct))
		if errors.Is(err, storage.ErrNotFound) {
			out = &ServiceProps{}
			return nil
		}
		if err != nil {
			return err
		}
		out, err = decode[ServiceProps](v)
		return err
	})
	return out, err
}

// SetServiceProps stores the service properties.
func (s *Service) SetServiceProps(ctx context.Context, acct string, p *ServiceProps) error {
	return s.eng.Update(ctx, func(tx storage.Tx) error {
		if err := storePolicy(tx, acct, p.XML); err != nil {
			return err
		}
		return tx.Set(serviceKey(acct), encode(p))
	})
}

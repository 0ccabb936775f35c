package blob

import (
	"context"
	"strings"
	"time"

	"github.com/lazuli-storage/lazuli/internal/keyenc"
	"github.com/lazuli-storage/lazuli/internal/lease"
	"github.com/lazuli-storage/lazuli/storage"
)

// Blob versioning: while it is on for an account, every write that
// replaces a blob's content or metadata (Put Blob, Put Block List, Copy
// Blob, Put Blob From URL, Set Blob Metadata) gives the blob a new version
// id and keeps the state it replaced as a previous version; Delete Blob
// turns the current version into a previous one. Previous versions are
// immutable records stored exactly like snapshots, under the snapshot slot
// VersionKey(id) of the blob's key (so their extents, reads, tier and
// deletion reuse the snapshot paths, and writes to them are refused as
// writes to snapshots are); snapshot ids are timestamps and never start
// with the version mark.

// versionMark starts the snapshot slot of a previous version.
const versionMark = "v"

// VersionKey is the snapshot slot that holds version id of a blob; a Ref
// whose Snapshot is VersionKey(id) addresses that version (versionid=).
func VersionKey(id string) string { return versionMark + id }

// VersionOf returns the version id a snapshot slot holds, if it is one.
func VersionOf(snap string) (string, bool) {
	if strings.HasPrefix(snap, versionMark) {
		return snap[len(versionMark):], true
	}
	return "", false
}

// UseVersioning makes versioning on for the accounts on reports.
func (s *Service) UseVersioning(on func(acct string) bool) { s.versioning = on }

// Versioning reports whether versioning is on for acct.
func (s *Service) Versioning(acct string) bool { return s.versioning != nil && s.versioning(acct) }

// newVersionID returns the version id of a new current version of ref: the
// clock, but above every version the blob had (ids order versions).
func newVersionID(tx storage.Tx, ref Ref, old *Blob, now time.Time) (string, error) {
	t := now
	floor := ""
	if old != nil {
		floor = old.VersionID
	}
	// The newest previous version: a reverse seek over the version slots.
	base := blobVersionsPrefix(ref.Account, ref.Container, ref.key())
	lo := keyenc.AppendPrefix(append([]byte(nil), base...), versionMark)
	it := tx.Scan(lo, keyenc.PrefixEnd(lo), true)
	if it.Next() {
		snap, _, err := keyenc.ReadString(it.Key()[len(base):])
		if err != nil {
			it.Close()
			return "", err
		}
		if id, ok := VersionOf(snap); ok && id > floor {
			floor = id
		}
	}
	err := it.Err()
	it.Close()
	if err != nil {
		return "", err
	}
	for SnapshotTime(t) <= floor {
		if f, err := time.Parse("2006-01-02T15:04:05.9999999Z", floor); err == nil && !f.Before(t) {
			t = f
		}
		t = t.Add(100 * time.Nanosecond)
	}
	return SnapshotTime(t), nil
}

// saveVersion keeps cur, the current record of ref (loaded from the
// store), as a previous version. A blob written while versioning was off
// has no id: its version is named after its last change.
func saveVersion(tx storage.Tx, ref Ref, cur *Blob) error {
	if err := hydrate(tx, ref.Account, ref.Container, cur); err != nil {
		return err
	}
	id := cur.VersionID
	if id == "" {
		id = SnapshotTime(cur.Modified)
	}
	v := *cur
	v.loaded, v.tagsKnown, v.replaced, v.storedTags = false, false, nil, nil
	v.Lease = lease.State{}
	v.Snapshot, v.VersionID = VersionKey(id), id
	return putBlob(tx, ref.Account, ref.Container, &v)
}

// beforeReplace is called by the writes that replace a whole blob (Put
// Blob, Put Block List, Copy Blob) before they store b over old (nil when
// there is none): on an account with a hierarchical namespace it makes
// the parent directories (namespaceWrite); with versioning on, old becomes
// a previous version and b gets a new version id; otherwise soft delete
// may keep old (pol: the delete retention policy, when already read).
func (s *Service) beforeReplace(ctx context.Context, tx storage.Tx, ref Ref, old, b *Blob, pol policyRead, now time.Time) error {
	if err := s.namespaceWrite(ctx, tx, ref, old, b, now); err != nil {
		return err
	}
	if !s.Versioning(ref.Account) {
		return keepOverwritten(tx, ref, old, pol, now)
	}
	if old != nil {
		if err := saveVersion(tx, ref, old); err != nil {
			return err
		}
	}
	id, err := newVersionID(tx, ref, old, now)
	b.VersionID = id
	return err
}

// newMetadataVersion is Set Blob Metadata's part in versioning: the state
// before the change becomes a previous version, b a new one.
func (s *Service) newMetadataVersion(tx storage.Tx, ref Ref, b *Blob, now time.Time) error {
	if !s.Versioning(ref.Account) {
		return nil
	}
	if err := saveVersion(tx, ref, b); err != nil {
		return err
	}
	id, err := newVersionID(tx, ref, b, now)
	b.VersionID = id
	return err
}

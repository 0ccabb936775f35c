package blob

import (
	"context"
	"encoding/binary"
	"encoding/xml"
	"errors"
	"time"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/keyenc"
	"github.com/lazuli-storage/lazuli/internal/lease"
	"github.com/lazuli-storage/lazuli/internal/svcprops"
	"github.com/lazuli-storage/lazuli/storage"
)

// Blob soft delete: with the service's DeleteRetentionPolicy on, Delete
// Blob moves the blob (or snapshot) to a deleted record that keeps its
// whole content, and Put Blob, Put Block List and Copy Blob keep the state
// they overwrite as a soft-deleted snapshot. Deleted records are listed
// with include=deleted, brought back by Undelete Blob, and purged once
// their retention days have passed.
//
// A deleted record lives under its own key kind, so that no live read or
// write ever sees it, and carries its content inline (blocks, pages and
// appends hydrated into the record): the extents of the live key are
// removed with it, and a restore writes them anew.

// Key kinds of soft delete (see the key table in model.go).
const (
	// kindDeleted: d account container name snapshot -> deleted record
	// ("" is the deleted base blob).
	kindDeleted = 'd'
	// kindExpiry: y expiry(uint64 ns) account container name snapshot ->
	// nothing; the purge scans it up to the clock.
	kindExpiry = 'y'
	// kindPolicy: r account -> the DeleteRetentionPolicy while it is on,
	// so that writes learn it with one point read.
	kindPolicy = 'r'
)

// DeletePolicy is the Blob service's DeleteRetentionPolicy while enabled.
type DeletePolicy struct {
	Days int `json:"d"`
	// AllowPermanent is AllowPermanentDelete: Delete Blob with
	// deletetype=permanent may remove a soft-deleted snapshot for good.
	AllowPermanent bool `json:"p,omitempty"`
}

// Deletion is what a listing reports of a soft-deleted blob or snapshot.
type Deletion struct {
	Time time.Time
	Days int
}

// Expires is when the retention of d ends.
func (d Deletion) Expires() time.Time { return d.Time.Add(time.Duration(d.Days) * 24 * time.Hour) }

// RemainingDays is RemainingRetentionDays as of now (whole days, rounded
// up, as Azure counts them).
func (d Deletion) RemainingDays(now time.Time) int {
	left := d.Expires().Sub(now)
	if left <= 0 {
		return 0
	}
	return int((left + 24*time.Hour - 1) / (24 * time.Hour))
}

func policyKey(acct string) []byte { return tupleKey(kindPolicy, acct) }

func deletedKey(acct, c string, k pathKey, snap string) []byte {
	return tupleKey(kindDeleted, acct, segOf(c, k), string(k), snap)
}

func deletedContainerPrefix(acct, c string) []byte { return tupleKey(kindDeleted, acct, c) }

func deletedNamePrefix(acct, c string, k pathKey) []byte {
	return tupleKey(kindDeleted, acct, segOf(c, k), string(k))
}

func expiryKey(at time.Time, acct, c string, pk pathKey, snap string) []byte {
	k := keyenc.AppendUint64([]byte{kindExpiry}, uint64(at.UnixNano()))
	for _, p := range [...]string{acct, segOf(c, pk), string(pk), snap} {
		k = keyenc.AppendString(k, p)
	}
	return k
}

// deletedTag starts a deleted record: the tag, the deletion time (Unix
// nanoseconds) and the retention days, both big-endian, then the blob
// record in the binary layout.
const deletedTag = 0x01

func encodeDeleted(b *Blob, d Deletion) []byte {
	dst := make([]byte, 11, 11+blobRecordSize(b))
	dst[0] = deletedTag
	binary.BigEndian.PutUint64(dst[1:], uint64(d.Time.UnixNano()))
	binary.BigEndian.PutUint16(dst[9:], uint16(d.Days))
	return encodeBlobBinary(dst, b)
}

func decodeDeleted(v []byte) (*Blob, Deletion, error) {
	if len(v) < 12 || v[0] != deletedTag {
		return nil, Deletion{}, errCorruptBlob
	}
	d := Deletion{Time: time.Unix(0, int64(binary.BigEndian.Uint64(v[1:]))).UTC(), Days: int(binary.BigEndian.Uint16(v[9:]))}
	b, err := decodeBlob(v[11:])
	return b, d, err
}

// parseDeletePolicy reads DeleteRetentionPolicy from stored service
// properties (nil when absent or off).
func parseDeletePolicy(doc []byte) *DeletePolicy {
	if doc == nil {
		return nil
	}
	p, err := svcprops.ParseStored(doc)
	if err != nil {
		return nil
	}
	for _, e := range p.Extra {
		if e.XMLName.Local != "DeleteRetentionPolicy" {
			continue
		}
		var pol struct {
			Enabled              bool `xml:"Enabled"`
			Days                 int  `xml:"Days"`
			AllowPermanentDelete bool `xml:"AllowPermanentDelete"`
		}
		if xml.Unmarshal([]byte("<p>"+e.Inner+"</p>"), &pol) != nil || !pol.Enabled {
			return nil
		}
		return &DeletePolicy{Days: min(max(pol.Days, 1), 365), AllowPermanent: pol.AllowPermanentDelete}
	}
	return nil
}

// storePolicy keeps the policy key in step with stored service properties.
func storePolicy(tx storage.Tx, acct string, doc []byte) error {
	p := parseDeletePolicy(doc)
	if p == nil {
		return tx.Delete(policyKey(acct))
	}
	return tx.Set(policyKey(acct), encode(p))
}

// deletePolicy returns the account's policy, nil while soft delete is off.
func deletePolicy(tx storage.Tx, acct string) (*DeletePolicy, error) {
	v, err := tx.Get(policyKey(acct))
	if errors.Is(err, storage.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return decode[DeletePolicy](v)
}

// policyRead is the delete retention policy as a write read it: known
// says it was read, pol is nil when the policy is off.
type policyRead struct {
	pol   *DeletePolicy
	known bool
}

// DeletePolicyOf returns the account's DeleteRetentionPolicy (nil: off).
func (s *Service) DeletePolicyOf(ctx context.Context, acct string) (*DeletePolicy, error) {
	var out *DeletePolicy
	err := s.eng.View(ctx, func(tx storage.Tx) (err error) {
		out, err = deletePolicy(tx, acct)
		return err
	})
	return out, err
}

// getDeleted loads a deleted record (nil when there is none, or its
// retention has ended: it is only waiting for the purge).
func getDeleted(tx storage.Tx, acct, c string, k pathKey, snap string, now time.Time) (*Blob, *Deletion, error) {
	v, err := tx.Get(deletedKey(acct, c, k, snap))
	if errors.Is(err, storage.ErrNotFound) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	b, d, err := decodeDeleted(v)
	if err != nil {
		return nil, nil, err
	}
	if !now.Before(d.Expires()) {
		return nil, nil, nil
	}
	return b, &d, nil
}

// deletedName keys the soft-deleted records of the path name: by its
// full name on every account, so that one outlives the directories it
// was deleted from (Undelete Blob brings them back with it).
func deletedName(name string) pathKey { return plainKey(name) }

// putDeleted stores b as the deleted record of snap, with its expiry entry.
func putDeleted(tx storage.Tx, acct, c string, b *Blob, d Deletion) error {
	k := deletedName(b.Name)
	if err := tx.Set(deletedKey(acct, c, k, b.Snapshot), encodeDeleted(b, d)); err != nil {
		return err
	}
	return tx.Set(expiryKey(d.Expires(), acct, c, k, b.Snapshot), nil)
}

// dropDeleted removes a deleted record and its expiry entry.
func dropDeleted(tx storage.Tx, acct, c string, k pathKey, snap string, d Deletion) error {
	if err := tx.Delete(expiryKey(d.Expires(), acct, c, k, snap)); err != nil {
		return err
	}
	return tx.Delete(deletedKey(acct, c, k, snap))
}

// freeSnapshotID is a snapshot id of name (keyed k) at or after t that
// neither a live nor a deleted snapshot holds.
func freeSnapshotID(tx storage.Tx, acct, c string, k pathKey, name string, t time.Time) (string, error) {
	for {
		id := SnapshotTime(t)
		_, err := tx.Get(blobKey(acct, c, k, id))
		if errors.Is(err, storage.ErrNotFound) {
			_, err = tx.Get(deletedKey(acct, c, deletedName(name), id))
			if errors.Is(err, storage.ErrNotFound) {
				return id, nil
			}
		}
		if err != nil {
			return "", err
		}
		t = t.Add(100 * time.Nanosecond)
	}
}

// retain stores the live record b (loaded from the store) as deleted under
// the snapshot id snap, content inline; the caller removes or replaces the
// live record.
func retain(tx storage.Tx, acct, c string, b *Blob, snap string, d Deletion) error {
	if err := hydrate(tx, acct, c, b); err != nil {
		return err
	}
	rec := *b
	rec.Snapshot, rec.Lease, rec.ExtBlocks = snap, lease.State{}, false
	return putDeleted(tx, acct, c, &rec, d)
}

// demoteDeletedBase turns a deleted base blob of name (if any) into a
// deleted snapshot, so that a newer base can take its key. An expired one
// is simply dropped.
func demoteDeletedBase(tx storage.Tx, acct, c string, k pathKey, name string, now time.Time) error {
	v, err := tx.Get(deletedKey(acct, c, deletedName(name), ""))
	if errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	b, d, err := decodeDeleted(v)
	if err != nil {
		return err
	}
	if err := dropDeleted(tx, acct, c, deletedName(name), "", d); err != nil || !now.Before(d.Expires()) {
		return err
	}
	b.key, b.Name = k, name
	if b.Snapshot, err = freeSnapshotID(tx, acct, c, k, name, b.Modified); err != nil {
		return err
	}
	return putDeleted(tx, acct, c, b, d)
}

// keepOverwritten is called by the writes that replace a whole blob (Put
// Blob, Put Block List, Copy Blob) before they store the new record: with
// soft delete on, the state they overwrite (old, nil when there is none)
// becomes a soft-deleted snapshot, and a soft-deleted base of the same
// name gives way to the new blob as a soft-deleted snapshot. known is the
// policy when the write already read it (Put Blob: getBlobStagedIn).
func keepOverwritten(tx storage.Tx, ref Ref, old *Blob, known policyRead, now time.Time) error {
	pol := known.pol
	if !known.known {
		var err error
		if pol, err = deletePolicy(tx, ref.Account); err != nil {
			return err
		}
	}
	if pol == nil {
		return nil
	}
	if old == nil {
		return demoteDeletedBase(tx, ref.Account, ref.Container, ref.key(), ref.Name, now)
	}
	id, err := freeSnapshotID(tx, ref.Account, ref.Container, ref.key(), ref.Name, now)
	if err != nil {
		return err
	}
	return retain(tx, ref.Account, ref.Container, old, id, Deletion{Time: now, Days: pol.Days})
}

// removeBlob is the rest of Delete Blob once the blob at ref is checked:
// the blob or snapshot at ref and, for a base blob, the snapshots
// deleteSnapshots names go. With a policy (pol) they move to deleted
// records; with versioned set the base blob becomes a previous version
// instead.
func removeBlob(tx storage.Tx, ref Ref, deleteSnapshots string, pol *DeletePolicy, versioned bool, now time.Time) error {
	remove := func(snap string) error {
		if pol != nil {
			b, err := getBlob(tx, ref.Account, ref.Container, ref.key(), ref.Name, snap)
			if err != nil || b == nil {
				return err
			}
			if err := retain(tx, ref.Account, ref.Container, b, snap, Deletion{Time: now, Days: pol.Days}); err != nil {
				return err
			}
		}
		return deleteBlobKey(tx, ref.Account, ref.Container, ref.key(), snap)
	}
	if ref.Snapshot != "" {
		return remove(ref.Snapshot)
	}
	snaps, err := snapshotIDs(tx, ref)
	if err != nil {
		return err
	}
	if deleteSnapshots == "" && len(snaps) > 0 {
		return azerr.New(azerr.SnapshotsPresent)
	}
	for _, sn := range snaps {
		if err := remove(sn); err != nil {
			return err
		}
	}
	if deleteSnapshots == "only" {
		return nil
	}
	if err := dropStaging(tx, ref); err != nil {
		return err
	}
	if versioned {
		// The previous version keeps what the delete removes.
		cur, err := getBlob(tx, ref.Account, ref.Container, ref.key(), ref.Name, "")
		if err != nil || cur == nil {
			return err
		}
		if err := saveVersion(tx, ref, cur); err != nil {
			return err
		}
		return deleteBlobKey(tx, ref.Account, ref.Container, ref.key(), "")
	}
	if pol != nil {
		if err := demoteDeletedBase(tx, ref.Account, ref.Container, ref.key(), ref.Name, now); err != nil {
			return err
		}
	}
	return remove("")
}

// PermanentDelete is Delete Blob with deletetype=permanent: a soft-deleted
// snapshot is removed for good. The account's DeleteRetentionPolicy must
// allow it (AllowPermanentDelete; otherwise 400 InvalidOperation), and it
// names a snapshot (a base blob is 400 InvalidQueryParameterValue): Azure
// offers it to purge retained states, never a live blob, so a snapshot
// that is not soft-deleted is 404 BlobNotFound.
func (s *Service) PermanentDelete(ctx context.Context, ref Ref) error {
	if ref.Snapshot == "" {
		return azerr.InvalidQuery("deletetype", "permanent", "")
	}
	return s.eng.Update(ctx, func(tx storage.Tx) error {
		if err := s.keyed(tx, &ref); err != nil {
			return err
		}
		if err := checkPath(ctx, tx, ref, OpDelete); err != nil {
			return err
		}
		if err := containerExists(tx, ref.Account, ref.Container); err != nil {
			return err
		}
		pol, err := deletePolicy(tx, ref.Account)
		if err != nil {
			return err
		}
		if pol == nil || !pol.AllowPermanent {
			return azerr.Newf(azerr.InvalidOperation, "Permanent delete is not enabled for this account.")
		}
		now := s.now()
		b, d, err := getDeleted(tx, ref.Account, ref.Container, deletedName(ref.Name), ref.Snapshot, now)
		if err != nil {
			return err
		}
		if b == nil {
			return azerr.New(azerr.BlobNotFound)
		}
		return dropDeleted(tx, ref.Account, ref.Container, deletedName(ref.Name), ref.Snapshot, *d)
	})
}

// Undelete is Undelete Blob: the soft-deleted snapshots of the blob come
// back, and so does the soft-deleted base blob when no live blob took its
// name (otherwise it comes back as a snapshot, the state that blob
// overwrote). A blob with nothing to restore is left as it is; a name
// with neither a live nor a deleted blob is 404 BlobNotFound.
func (s *Service) Undelete(ctx context.Context, ref Ref) error {
	if s.HierarchicalNamespace(ref.Account) && ref.Snapshot == "" {
		// A path deleted on an account with a namespace is a deleted
		// path entry: the newest comes back, then the deleted
		// snapshots of the name.
		found, err := s.undeleteLatestPath(ctx, ref)
		if err != nil {
			return err
		}
		if found {
			if err := s.undeleteBlob(ctx, ref); err != nil {
				if e, ok := azerr.As(err); !ok || e.Code != azerr.BlobNotFound {
					return err
				}
			}
			return nil
		}
	}
	return s.undeleteBlob(ctx, ref)
}

func (s *Service) undeleteBlob(ctx context.Context, ref Ref) error {
	return s.eng.Update(ctx, func(tx storage.Tx) error {
		if err := s.keyed(tx, &ref); err != nil {
			return err
		}
		if err := checkPath(ctx, tx, ref, OpWrite); err != nil {
			return err
		}
		if err := containerExists(tx, ref.Account, ref.Container); err != nil {
			return err
		}
		now := s.now()
		live, err := getBlob(tx, ref.Account, ref.Container, ref.key(), ref.Name, "")
		if err != nil {
			return err
		}
		type entry struct {
			b *Blob
			d Deletion
		}
		var found []entry
		p := deletedNamePrefix(ref.Account, ref.Container, deletedName(ref.Name))
		it := tx.Scan(p, keyenc.PrefixEnd(p), false)
		for it.Next() {
			b, d, err := decodeDeleted(it.Value())
			if err != nil {
				it.Close()
				return err
			}
			b.Name = ref.Name
			found = append(found, entry{b, d})
		}
		err = it.Err()
		it.Close()
		if err != nil {
			return err
		}
		for _, e := range found {
			if e.b.Snapshot == "" && now.Before(e.d.Expires()) {
				if err := s.namespaceRestore(tx, ref, live, e.b, now); err != nil {
					return err
				}
			}
		}
		// The parents may be back: the records go under them.
		if err := s.keyed(tx, &ref); err != nil {
			return err
		}
		restored := live != nil
		for _, e := range found {
			b := e.b
			b.key = ref.key()
			if err := dropDeleted(tx, ref.Account, ref.Container, deletedName(ref.Name), b.Snapshot, e.d); err != nil {
				return err
			}
			if !now.Before(e.d.Expires()) {
				continue
			}
			if b.Snapshot == "" && live != nil {
				if b.Snapshot, err = freeSnapshotID(tx, ref.Account, ref.Container, ref.key(), ref.Name, b.Modified); err != nil {
					return err
				}
			}
			restored = true
			if err := putBlob(tx, ref.Account, ref.Container, b); err != nil {
				return err
			}
			if b.Snapshot == "" && b.IsDir() {
				// A directory back under its name is back in the index.
				if _, _, _, err := s.indexDir(tx, ref.Account, ref.Container, ref.Name); err != nil {
					return err
				}
			}
		}
		if !restored {
			return azerr.New(azerr.BlobNotFound)
		}
		return nil
	})
}

// decodeListedDeleted decodes a deleted record for List Blobs (nil when
// its retention has ended).
func decodeListedDeleted(v []byte, now time.Time) (*Blob, *Deletion, error) {
	b, d, err := decodeDeleted(v)
	if err != nil {
		return nil, nil, err
	}
	if !now.Before(d.Expires()) {
		return nil, nil, nil
	}
	b.AsOf = now
	return b, &d, nil
}

// purgeBatch is how many deleted records one purge transaction removes.
const purgeBatch = 256

// purgeEvery is how often the purge looks for ended retentions on its own.
const purgeEvery = time.Hour

// Run is the service's background worker: it removes deleted records
// whose retention has ended, once at start, every purgeEvery, and when
// Kick asks. The server runs it.
func (s *Service) Run(ctx context.Context) error {
	t := time.NewTicker(purgeEvery)
	defer t.Stop()
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				s.purge.Kick()
			}
		}
	}()
	return s.purge.Run(ctx, func(ctx context.Context) { s.PurgeExpired(ctx) })
}

// KickPurge asks the background worker for a purge pass (after the clock
// was moved, say).
func (s *Service) KickPurge() { s.purge.Kick() }

// WaitPurged waits for the purge passes asked for so far.
func (s *Service) WaitPurged(ctx context.Context) error { return s.purge.Wait(ctx) }

// PurgeExpired removes every soft-deleted container and blob whose
// retention has ended.
func (s *Service) PurgeExpired(ctx context.Context) error {
	if err := s.purgeContainers(ctx); err != nil {
		return err
	}
	if err := s.purgeExpiredBlobs(ctx); err != nil {
		return err
	}
	if err := s.purgeExpiredPaths(ctx); err != nil {
		return err
	}
	for {
		n := 0
		err := s.eng.Update(ctx, func(tx storage.Tx) error {
			n = 0
			now := s.now()
			keys, err := dueKeys(tx, kindExpiry, now)
			if err != nil {
				return err
			}
			for _, k := range keys {
				parts, err := expiryParts(k)
				if err != nil {
					return err
				}
				if err := tx.Delete(k); err != nil {
					return err
				}
				// The record may be younger than this entry (its
				// container was deleted and made again): only an ended
				// retention goes.
				dk := deletedKey(parts[0], parts[1], pathKey(parts[2]), parts[3])
				v, err := tx.Get(dk)
				if errors.Is(err, storage.ErrNotFound) {
					continue
				}
				if err != nil {
					return err
				}
				if _, d, err := decodeDeleted(v); err != nil {
					return err
				} else if now.Before(d.Expires()) {
					continue
				}
				if err := tx.Delete(dk); err != nil {
					return err
				}
			}
			n = len(keys)
			return nil
		})
		if err != nil || n < purgeBatch {
			return err
		}
	}
}

// expiryParts reads account, container, name and snapshot of an expiry key.
func expiryParts(k []byte) ([4]string, error) {
	var out [4]string
	_, rest, err := keyenc.ReadUint64(k[1:])
	if err != nil {
		return out, err
	}
	for i := range out {
		if out[i], rest, err = keyenc.ReadString(rest); err != nil {
			return out, err
		}
	}
	return out, nil
}

package blob

import (
	"context"
	"errors"
	"time"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/content"
	"github.com/lazuli-storage/lazuli/storage"
)

// Version-level immutability (WORM). A container created with
// x-ms-immutable-storage-with-versioning-enabled (which needs versioning
// on for its account) lets each blob version carry a time-based retention
// policy (until a date, Unlocked or Locked) and a legal hold. While either
// applies, the version cannot be deleted and its metadata and content
// cannot change in place (Delete Blob, Set Blob Metadata, Put Page, Append
// Block, a resize); Put Blob, Put Block List and Copy Blob still overwrite
// the blob, because versioning keeps the protected state as a previous
// version, which keeps its policy and hold. Every check runs in the
// transaction of the write it refuses, so once Set Blob Legal Hold has
// answered no write to the version can land.

// Immutability policy modes.
const (
	ModeUnlocked = "Unlocked"
	ModeLocked   = "Locked"
)

// Protection is the immutability a write that creates a version asks for
// (x-ms-immutability-policy-until-date and -mode, x-ms-legal-hold on Put
// Blob, Put Block List and the copies).
type Protection struct {
	Until     time.Time // zero: no policy
	Mode      string
	LegalHold bool
}

// set reports whether p asks for anything.
func (p *Protection) set() bool { return p != nil && (!p.Until.IsZero() || p.LegalHold) }

// apply gives b the protection p asks for.
func (p *Protection) apply(b *Blob) {
	if p == nil {
		return
	}
	if !p.Until.IsZero() {
		b.ImmutableUntil, b.ImmutableMode = p.Until.UTC().Truncate(time.Second), p.Mode
	}
	b.LegalHold = p.LegalHold
}

// immutableErr is the error a write that would change or delete b meets
// at now: 409 BlobImmutableDueToLegalHold while it has a legal hold, 409
// BlobImmutableDueToPolicy while its policy's date is ahead; nil otherwise.
func immutableErr(b *Blob, now time.Time) error {
	if b == nil {
		return nil
	}
	if b.LegalHold {
		return azerr.New(azerr.BlobImmutableDueToLegalHold)
	}
	if b.ImmutableMode != "" && now.Before(b.ImmutableUntil) {
		return azerr.New(azerr.BlobImmutableDueToPolicy)
	}
	return nil
}

// errNoVersionImmutability answers an immutability request in a container
// without version-level immutability support (lazuli's choice, pinned by
// a test: Azure documents no code for it).
func errNoVersionImmutability() error {
	return azerr.Newf(azerr.InvalidOperation, "The container does not have immutable storage with versioning enabled.")
}

// checkProtectable refuses p for a blob of container c of acct unless the
// container has version-level immutability.
func checkProtectable(tx storage.Tx, acct, c string, p *Protection) error {
	if !p.set() {
		return nil
	}
	ct, err := getContainer(tx, acct, c)
	if err != nil {
		return err
	}
	if !ct.ImmutableVersioning {
		return errNoVersionImmutability()
	}
	return nil
}

// protect runs fn on the blob, version or snapshot at ref for Set/Delete
// Blob Immutability Policy and Set Blob Legal Hold: the container must
// support version-level immutability; If-Unmodified-Since is the only
// condition these operations take, and they neither need a lease id nor
// change the ETag.
func (s *Service) protect(ctx context.Context, ref *Ref, cond Cond, fn func(b *Blob, now time.Time) error) (*Blob, error) {
	var out *Blob
	err := s.eng.Update(ctx, func(tx storage.Tx) error {
		if err := s.keyed(tx, ref); err != nil {
			return err
		}
		now := s.now()
		if err := checkPath(ctx, tx, *ref, OpWrite); err != nil {
			return err
		}
		ct, err := getContainer(tx, ref.Account, ref.Container)
		if err != nil {
			return err
		}
		b, _, err := s.loadChecked(tx, *ref, cond, checkOpts{mustExist: true, read: true}, now)
		if err != nil {
			return err
		}
		if !ct.ImmutableVersioning {
			return errNoVersionImmutability()
		}
		if err := fn(b, now); err != nil {
			return err
		}
		b.AsOf = now
		out = b
		return putBlob(tx, ref.Account, ref.Container, b)
	})
	return out, err
}

// SetImmutabilityPolicy is Set Blob Immutability Policy: the version gets
// a policy until the date in mode (Unlocked or Locked). A locked policy
// stays locked and its date can only move later (409
// BlobImmutableDueToPolicy otherwise, lazuli's pinned choice); an unlocked
// one can be changed freely. A date in the past is the caller's to refuse.
func (s *Service) SetImmutabilityPolicy(ctx context.Context, ref Ref, until time.Time, mode string, cond Cond) (*Blob, error) {
	until = until.UTC().Truncate(time.Second)
	return s.protect(ctx, &ref, cond, func(b *Blob, now time.Time) error {
		if b.ImmutableMode == ModeLocked && (mode != ModeLocked || until.Before(b.ImmutableUntil)) {
			return azerr.New(azerr.BlobImmutableDueToPolicy)
		}
		b.ImmutableUntil, b.ImmutableMode = until, mode
		return nil
	})
}

// DeleteImmutabilityPolicy is Delete Blob Immutability Policy: an
// unlocked policy goes (none at all is no error); a locked one is 409
// BlobImmutableDueToPolicy.
func (s *Service) DeleteImmutabilityPolicy(ctx context.Context, ref Ref) error {
	_, err := s.protect(ctx, &ref, Cond{}, func(b *Blob, now time.Time) error {
		if b.ImmutableMode == ModeLocked {
			return azerr.New(azerr.BlobImmutableDueToPolicy)
		}
		b.ImmutableUntil, b.ImmutableMode = time.Time{}, ""
		return nil
	})
	return err
}

// SetLegalHold is Set Blob Legal Hold: it sets or clears the version's
// legal hold.
func (s *Service) SetLegalHold(ctx context.Context, ref Ref, hold bool) (*Blob, error) {
	return s.protect(ctx, &ref, Cond{}, func(b *Blob, now time.Time) error {
		b.LegalHold = hold
		return nil
	})
}

// checkOverwrite is Put Blob's, Put Block List's and the copies' part in
// immutability: old, a protected current version, may be replaced only
// while versioning keeps it as a previous version; the new version may ask
// for protection only in a container that supports it.
func (s *Service) checkOverwrite(tx storage.Tx, ref Ref, old *Blob, p *Protection, now time.Time) error {
	if old != nil && !s.Versioning(ref.Account) {
		if err := immutableErr(old, now); err != nil {
			return err
		}
	}
	return checkProtectable(tx, ref.Account, ref.Container, p)
}

// containerHoldsBlobs reports whether container c of acct holds any blob
// record (a blob, snapshot or version).
func containerHoldsBlobs(tx storage.Tx, hns bool, acct, c string) (bool, error) {
	found := false
	err := containerKeys(tx, hns, acct, c, []byte{kindBlob}, func(k, v []byte) error {
		found = true
		return errStop
	})
	if errors.Is(err, errStop) {
		err = nil
	}
	return found, err
}

// errStop ends a containerKeys walk early.
var errStop = errors.New("blob: stop")

// checkImmutableContainer is Delete Container's part in immutability: a
// container with version-level immutability support that still holds
// blobs is 409 ContainerImmutableStorageWithVersioningEnabled. (Azure's
// data plane refuses such a container even empty and leaves its deletion
// to the management plane, which lazuli does not have.)
func checkImmutableContainer(tx storage.Tx, hns bool, acct string, c *Container) error {
	if !c.ImmutableVersioning {
		return nil
	}
	has, err := containerHoldsBlobs(tx, hns, acct, c.Name)
	if err != nil {
		return err
	}
	if has {
		return azerr.New(azerr.ContainerImmutableStorageWithVersioningEnabled)
	}
	return nil
}

// Bits of the second flags byte of a binary blob record (flagExt).
const (
	extPolicy            = 1 << iota // policy date and mode follow
	extLegalHold                     // the version has a legal hold
	extExpiry                        // the expiry time follows
	extPathCreated                   // a file made by Path - Create
	extEncryptionContext             // the encryption context follows
)

// extFlags is the second flags byte of b's record (0: none needed).
func (b *Blob) extFlags() byte {
	var f byte
	if b.ImmutableMode != "" {
		f |= extPolicy
	}
	if b.LegalHold {
		f |= extLegalHold
	}
	if !b.ExpiresOn.IsZero() {
		f |= extExpiry
	}
	if b.PathCreated {
		f |= extPathCreated
	}
	if b.EncryptionContext != "" {
		f |= extEncryptionContext
	}
	return f
}

// appendExt appends the second flags byte ext and the fields it announces.
func (b *Blob) appendExt(dst []byte, ext byte) []byte {
	dst = append(dst, ext)
	if ext&extPolicy != 0 {
		dst = content.AppendTime(content.AppendStr(dst, b.ImmutableMode), b.ImmutableUntil)
	}
	if ext&extExpiry != 0 {
		dst = content.AppendTime(dst, b.ExpiresOn)
	}
	if ext&extEncryptionContext != 0 {
		dst = content.AppendStr(dst, b.EncryptionContext)
	}
	return dst
}

// readExt reads what appendExt wrote.
func (b *Blob) readExt(r *content.Reader) {
	ext := r.Byte()
	if ext&^(extPolicy|extLegalHold|extExpiry|extPathCreated|extEncryptionContext) != 0 {
		r.Fail()
		return
	}
	if ext&extPolicy != 0 {
		b.ImmutableMode = r.StrOf(ModeUnlocked, ModeLocked)
		b.ImmutableUntil = r.Time()
	}
	b.LegalHold = ext&extLegalHold != 0
	b.PathCreated = ext&extPathCreated != 0
	if ext&extExpiry != 0 {
		b.ExpiresOn = r.Time()
	}
	if ext&extEncryptionContext != 0 {
		b.EncryptionContext = r.Str()
	}
}

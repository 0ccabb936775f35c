package blob

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/conditional"
	"github.com/lazuli-storage/lazuli/internal/keyenc"
	"github.com/lazuli-storage/lazuli/storage"
)

// Set Blob Expiry: on an account with a hierarchical namespace (the only
// kind Azure offers it on) a blob can be given a time at which it goes.
// From that instant, by the service's clock, it reads as absent; the
// first write to its name removes it, and the purge removes it otherwise
// (an index entry per expiry time tells the purge where to look).

// kindBlobExpiry: e time account container name -> nil, an expiry time set
// on a base blob. An entry may outlive its expiry (the expiry was changed
// or the blob replaced); the purge checks the blob before removing it.
const kindBlobExpiry = 'e'

// Expiry options (x-ms-expiry-option).
const (
	ExpiryRelativeToCreation = "RelativeToCreation"
	ExpiryRelativeToNow      = "RelativeToNow"
	ExpiryAbsolute           = "Absolute"
	ExpiryNever              = "NeverExpire"
)

// ExpiryRequest is Set Blob Expiry: Option and, for the relative options,
// After; for Absolute, At.
type ExpiryRequest struct {
	Option string
	After  time.Duration
	At     time.Time
}

// ParseExpiry reads an expiry option and time as Set Blob Expiry and
// Path - Create take them: a count of milliseconds for the
// relative options, an HTTP date after now for Absolute, no time for
// NeverExpire.
func ParseExpiry(opt, tv string, now time.Time) (ExpiryRequest, error) {
	req := ExpiryRequest{Option: opt}
	switch opt {
	case "":
		return req, missingValue(InputExpiryOption)
	case ExpiryNever:
		if tv != "" {
			return req, azerr.InvalidValue(InputExpiryTime, tv)
		}
	case ExpiryRelativeToNow, ExpiryRelativeToCreation:
		if tv == "" {
			return req, missingValue(InputExpiryTime)
		}
		ms, err := strconv.ParseInt(tv, 10, 64)
		if err != nil || ms < 0 || ms > int64(time.Duration(1<<62)/time.Millisecond) {
			return req, azerr.InvalidValue(InputExpiryTime, tv)
		}
		req.After = time.Duration(ms) * time.Millisecond
	case ExpiryAbsolute:
		if tv == "" {
			return req, missingValue(InputExpiryTime)
		}
		t, ok := conditional.ParseDate(tv)
		if !ok || !t.After(now) {
			return req, azerr.InvalidValue(InputExpiryTime, tv)
		}
		req.At = t
	default:
		return req, azerr.InvalidValue(InputExpiryOption, opt)
	}
	return req, nil
}

// missingValue is 400 MissingRequiredHeader for the absent value in (the
// REST layer names its header).
func missingValue(in azerr.Input) *azerr.Error {
	e := azerr.New(azerr.MissingRequiredHeader)
	e.Input = in
	return e
}

// UseHierarchicalNamespace tells the service which accounts have a
// hierarchical namespace (the accounts Set Blob Expiry is offered on).
func (s *Service) UseHierarchicalNamespace(on func(acct string) bool) { s.namespace = on }

// HierarchicalNamespace reports whether acct has a hierarchical namespace.
func (s *Service) HierarchicalNamespace(acct string) bool {
	return s.namespace != nil && s.namespace(acct)
}

// expired reports whether b, a base blob, has reached its expiry time at
// now. Snapshots and versions copy the field but never expire.
func (b *Blob) expired(now time.Time) bool {
	return b.Snapshot == "" && !b.ExpiresOn.IsZero() && !now.Before(b.ExpiresOn)
}

func blobExpiryKey(at time.Time, acct, c string, pk pathKey) []byte {
	k := keyenc.AppendUint64([]byte{kindBlobExpiry}, uint64(at.UnixNano()))
	for _, p := range [...]string{acct, segOf(c, pk), string(pk)} {
		k = keyenc.AppendString(k, p)
	}
	return k
}

// removeExpired removes b, the expired base blob of ref's name, with its
// snapshots and staged blocks.
func removeExpired(tx storage.Tx, ref Ref, b *Blob) error {
	return removeBlob(tx, Ref{Account: ref.Account, Container: ref.Container, Name: b.Name, k: b.key}, "include", nil, false, time.Time{})
}

// SetExpiry is Set Blob Expiry on the base blob at ref: the blob goes at
// the time req names (NeverExpire clears it). It changes neither the ETag
// nor Last-Modified. The caller has checked that the account has a
// hierarchical namespace.
func (s *Service) SetExpiry(ctx context.Context, ref Ref, req ExpiryRequest, cond Cond) (*Blob, error) {
	if err := snapshotWrite(ref); err != nil {
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
		if err := setExpiry(tx, ref, b, req, now); err != nil {
			return err
		}
		b.AsOf = now
		out = b
		return putBlob(tx, ref.Account, ref.Container, b)
	})
	return out, err
}

// setExpiry gives b, the base blob at ref, the expiry time req names at
// now (none for NeverExpire) and indexes it for the purge; the caller
// stores b.
func setExpiry(tx storage.Tx, ref Ref, b *Blob, req ExpiryRequest, now time.Time) error {
	var at time.Time
	switch req.Option {
	case ExpiryRelativeToNow:
		at = now.Add(req.After)
	case ExpiryRelativeToCreation:
		at = b.Created.Add(req.After)
	case ExpiryAbsolute:
		at = req.At
	}
	b.ExpiresOn = at.UTC()
	if at.IsZero() {
		return nil
	}
	return tx.Set(blobExpiryKey(at, ref.Account, ref.Container, ref.key()), nil)
}

// purgeExpiredBlobs removes the blobs whose expiry time has passed.
func (s *Service) purgeExpiredBlobs(ctx context.Context) error {
	for {
		n := 0
		err := s.eng.Update(ctx, func(tx storage.Tx) error {
			now := s.now()
			keys, err := dueKeys(tx, kindBlobExpiry, now)
			if err != nil {
				return err
			}
			n = len(keys)
			for _, k := range keys {
				if err := tx.Delete(k); err != nil {
					return err
				}
				_, rest, err := keyenc.ReadUint64(k[1:])
				if err != nil {
					return err
				}
				var parts [3]string
				for i := range parts {
					if parts[i], rest, err = keyenc.ReadString(rest); err != nil {
						return err
					}
				}
				// parts[1] is the key's container segment: the container
				// the path lies in comes from its ancestors.
				c, name, err := keyName(tx, s.HierarchicalNamespace(parts[0]), parts[0], parts[1], pathKey(parts[2]))
				if errors.Is(err, storage.ErrNotFound) {
					continue // the directory above it is gone
				}
				if err != nil {
					return err
				}
				b, err := getBlob(tx, parts[0], c, pathKey(parts[2]), name, "")
				if err != nil {
					return err
				}
				if b == nil || !b.expired(now) {
					continue
				}
				if err := removeExpired(tx, Ref{Account: parts[0], Container: c}, b); err != nil {
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

// dueKeys returns up to purgeBatch keys of the time-ordered index of kind
// (a uint64 of Unix nanoseconds after the kind byte) that are due at now.
func dueKeys(tx storage.Tx, kind byte, now time.Time) ([][]byte, error) {
	lo := []byte{kind}
	hi := keyenc.AppendUint64([]byte{kind}, uint64(now.UnixNano())+1)
	var keys [][]byte
	it := tx.Scan(lo, hi, false)
	defer it.Close()
	for it.Next() && len(keys) < purgeBatch {
		keys = append(keys, append([]byte(nil), it.Key()...))
	}
	return keys, it.Err()
}

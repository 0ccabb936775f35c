package blob

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/keyenc"
	"github.com/lazuli-storage/lazuli/internal/lease"
	"github.com/lazuli-storage/lazuli/storage"
)

// Container soft delete: with a container delete retention (Azure keeps it
// in the account's management-plane settings; lazuli takes it from the
// server's configuration), Delete Container moves every key of the
// container under a deleted-container version: List Containers shows it
// with include=deleted, Restore Container brings it back whole, and the
// purge removes it once the retention days have passed.

const (
	// kindDeletedContainer: z account name version -> DeletedContainer.
	kindDeletedContainer = 'z'
	// kindMoved: w account name version <original key> -> original value.
	kindMoved = 'w'
)

// DeletedContainer is the record of a soft-deleted container.
type DeletedContainer struct {
	Container Container `json:"c"`
	Version   string    `json:"v"`
	Deleted   time.Time `json:"d"`
	Days      int       `json:"days"`
}

// Deletion is the deletion time and retention of d.
func (d *DeletedContainer) Deletion() Deletion { return Deletion{Time: d.Deleted, Days: d.Days} }

// UseContainerRetention turns container soft delete on for the accounts
// days reports more than zero retention days for.
func (s *Service) UseContainerRetention(days func(acct string) int) { s.containerDays = days }

func (s *Service) containerRetention(acct string) int {
	if s.containerDays == nil {
		return 0
	}
	return s.containerDays(acct)
}

func deletedContainerKey(acct, name, version string) []byte {
	return tupleKey(kindDeletedContainer, acct, name, version)
}

func movedPrefix(acct, name, version string) []byte { return tupleKey(kindMoved, acct, name, version) }

// containerKinds are the key kinds whose keys start with account and
// container: everything a container holds.
var containerKinds = []byte{kindBlob, kindStaging, kindBlock, kindAppend, kindPage, kindBlockList, kindDeleted, kindPathACL, kindDirID, kindDirName, kindDeletedPath, kindDeletedTree}

// softDeleteContainer moves container c and everything in it under a new
// deleted-container version.
func softDeleteContainer(tx storage.Tx, hns bool, acct string, c *Container, days int, now time.Time) error {
	version := ""
	for t := now.UnixNano(); ; t++ {
		version = fmt.Sprintf("%016X", t)
		if _, err := tx.Get(deletedContainerKey(acct, c.Name, version)); errors.Is(err, storage.ErrNotFound) {
			break
		} else if err != nil {
			return err
		}
	}
	if err := unindexContainer(tx, hns, acct, c.Name); err != nil {
		return err
	}
	mp := movedPrefix(acct, c.Name, version)
	kvs, err := collectContainerKeys(tx, hns, acct, c.Name, containerKinds)
	if err != nil {
		return err
	}
	for _, kv := range kvs {
		if err := tx.Set(append(append([]byte(nil), mp...), kv[0]...), kv[1]); err != nil {
			return err
		}
		if err := tx.Delete(kv[0]); err != nil {
			return err
		}
	}
	d := &DeletedContainer{Container: *c, Version: version, Deleted: now, Days: days}
	d.Container.Lease = lease.State{}
	if err := tx.Set(deletedContainerKey(acct, c.Name, version), encode(d)); err != nil {
		return err
	}
	return tx.Delete(containerKey(acct, c.Name))
}

// ListDeletedContainers returns the soft-deleted containers of an account
// whose names start with prefix and whose retention has not ended.
func (s *Service) ListDeletedContainers(ctx context.Context, acct, prefix string) ([]*DeletedContainer, error) {
	var out []*DeletedContainer
	err := s.eng.View(ctx, func(tx storage.Tx) error {
		now := s.now()
		p := keyenc.AppendPrefix(tupleKey(kindDeletedContainer, acct), prefix)
		it := tx.Scan(p, keyenc.PrefixEnd(p), false)
		defer it.Close()
		for it.Next() {
			d, err := decode[DeletedContainer](it.Value())
			if err != nil {
				return err
			}
			if now.Before(d.Deletion().Expires()) {
				out = append(out, d)
			}
		}
		return it.Err()
	})
	return out, err
}

// RestoreContainer is Restore Container: the soft-deleted container name
// of version comes back with everything it held. A live container of that
// name is 409 ContainerAlreadyExists; an unknown or expired version 404
// ContainerNotFound.
func (s *Service) RestoreContainer(ctx context.Context, acct, name, version string) (*Container, error) {
	var out *Container
	err := s.eng.Update(ctx, func(tx storage.Tx) error {
		v, err := tx.Get(deletedContainerKey(acct, name, version))
		if errors.Is(err, storage.ErrNotFound) {
			return azerr.New(azerr.ContainerNotFound)
		}
		if err != nil {
			return err
		}
		d, err := decode[DeletedContainer](v)
		if err != nil {
			return err
		}
		now := s.now()
		if !now.Before(d.Deletion().Expires()) {
			return azerr.New(azerr.ContainerNotFound)
		}
		if _, err := tx.Get(containerKey(acct, name)); err == nil {
			return azerr.New(azerr.ContainerAlreadyExists)
		} else if !errors.Is(err, storage.ErrNotFound) {
			return err
		}
		mp := movedPrefix(acct, name, version)
		var kvs [][2][]byte
		it := tx.Scan(mp, keyenc.PrefixEnd(mp), false)
		for it.Next() {
			kvs = append(kvs, [2][]byte{append([]byte(nil), it.Key()[len(mp):]...), append([]byte(nil), it.Value()...)})
		}
		err = it.Err()
		it.Close()
		if err != nil {
			return err
		}
		for _, kv := range kvs {
			if err := tx.Set(kv[0], kv[1]); err != nil {
				return err
			}
			switch kv[0][0] {
			case kindBlob:
				// Base blobs go back into the tag index.
				b, err := decodeBlob(kv[1])
				if err != nil {
					return err
				}
				if b.Snapshot == "" && len(b.Tags) > 0 {
					if err := reindexTags(tx, acct, name, recordKey(kv[0]), nil, b.Tags); err != nil {
						return err
					}
				}
			case kindDeleted:
				// Soft-deleted blobs get their expiry entries back.
				b, del, err := decodeDeleted(kv[1])
				if err != nil {
					return err
				}
				if err := tx.Set(expiryKey(del.Expires(), acct, name, recordKey(kv[0]), b.Snapshot), nil); err != nil {
					return err
				}
			case kindDeletedPath:
				// So do deleted paths (the purge may have passed theirs).
				if err := restorePathExpiry(tx, acct, name, kv[0], kv[1]); err != nil {
					return err
				}
			}
		}
		if err := deleteRange(tx, mp); err != nil {
			return err
		}
		if err := tx.Delete(deletedContainerKey(acct, name, version)); err != nil {
			return err
		}
		c := d.Container
		c.Modified, c.ETag = s.written(now), s.etag(c.ETag, now)
		c.AsOf = now
		out = &c
		return putContainer(tx, acct, &c)
	})
	return out, err
}

// purgeContainers removes the soft-deleted containers whose retention
// ended, with everything they held.
func (s *Service) purgeContainers(ctx context.Context) error {
	return s.eng.Update(ctx, func(tx storage.Tx) error {
		now := s.now()
		type gone struct{ key, moved []byte }
		var gs []gone
		it := tx.Scan([]byte{kindDeletedContainer}, []byte{kindDeletedContainer + 1}, false)
		for it.Next() {
			d, err := decode[DeletedContainer](it.Value())
			if err != nil {
				it.Close()
				return err
			}
			if now.Before(d.Deletion().Expires()) {
				continue
			}
			acct, rest, err := keyenc.ReadString(it.Key()[1:])
			if err != nil {
				it.Close()
				return err
			}
			name, _, err := keyenc.ReadString(rest)
			if err != nil {
				it.Close()
				return err
			}
			gs = append(gs, gone{append([]byte(nil), it.Key()...), movedPrefix(acct, name, d.Version)})
		}
		err := it.Err()
		it.Close()
		if err != nil {
			return err
		}
		for _, g := range gs {
			if err := deleteRange(tx, g.moved); err != nil {
				return err
			}
			if err := tx.Delete(g.key); err != nil {
				return err
			}
		}
		return nil
	})
}

// markMoved reports the chunks of the keys a soft-deleted container holds.
func markMoved(tx storage.Tx, mark func(storage.ChunkRef)) error {
	it := tx.Scan([]byte{kindMoved}, []byte{kindMoved + 1}, false)
	defer it.Close()
	for it.Next() {
		rest := it.Key()[1:]
		for range 3 {
			var err error
			if _, rest, err = keyenc.ReadString(rest); err != nil {
				return err
			}
		}
		if len(rest) == 0 {
			continue
		}
		var segs []Segment
		switch rest[0] {
		case kindBlob, kindBlockList:
			b, err := decodeBlob(it.Value())
			if err != nil {
				return err
			}
			segs = allSegs(b)
		case kindDeleted:
			b, _, err := decodeDeleted(it.Value())
			if err != nil {
				return err
			}
			segs = allSegs(b)
		case kindDeletedPath, kindDeletedTree:
			b, _, _, err := decodeDeletedPath(it.Value())
			if err != nil {
				return err
			}
			segs = allSegs(b)
		case kindBlock, kindAppend, kindPage:
			bl, err := decodeBlock(it.Value())
			if err != nil {
				return err
			}
			segs = bl.Segs
		}
		for _, sg := range segs {
			if sg.Ref != "" {
				mark(sg.Ref)
			}
		}
	}
	return it.Err()
}

// recordKey is the key name in the key of a path's record (kind, account,
// container, key name, ...); "" when the key is malformed.
func recordKey(k []byte) pathKey {
	rest := k[1:]
	for i := 0; i < 2; i++ {
		var err error
		if _, rest, err = keyenc.ReadString(rest); err != nil {
			return ""
		}
	}
	name, _, err := keyenc.ReadString(rest)
	if err != nil {
		return ""
	}
	return pathKey(name)
}

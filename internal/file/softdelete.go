package file

import (
	"context"
	"encoding/xml"
	"errors"
	"sort"
	"strconv"
	"time"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/keyenc"
	"github.com/lazuli-storage/lazuli/internal/lease"
	"github.com/lazuli-storage/lazuli/internal/svcprops"
	"github.com/lazuli-storage/lazuli/storage"
)

// Share soft delete: with the service's ShareDeleteRetentionPolicy on, a
// deleted share (with its snapshots) is kept, keys and all, under a
// deleted-share record for the retention days: List Shares shows it with
// include=deleted and Restore Share brings it back. Once the days pass it
// is purged like a share deleted without retention.

// DeletedShare is the record of a soft-deleted share.
type DeletedShare struct {
	Share     Share     `json:"s"`
	Snapshots []Share   `json:"sn,omitempty"`
	Version   string    `json:"v"`
	Deleted   time.Time `json:"d"`
	Days      int       `json:"days"`
}

// Expires is when the retention of d ends.
func (d *DeletedShare) Expires() time.Time {
	return d.Deleted.Add(time.Duration(d.Days) * 24 * time.Hour)
}

// RemainingDays is RemainingRetentionDays as of now.
func (d *DeletedShare) RemainingDays(now time.Time) int {
	left := d.Expires().Sub(now)
	if left <= 0 {
		return 0
	}
	return int((left + 24*time.Hour - 1) / (24 * time.Hour))
}

func deletedKey(acct, name, version string) []byte {
	k := root(tagDeleted, len(acct)+len(name)+len(version)+6)
	return keyenc.AppendString(keyenc.AppendString(keyenc.AppendString(k, acct), name), version)
}

func deletedPrefix(acct string) []byte {
	return keyenc.AppendString(root(tagDeleted, len(acct)+2), acct)
}

// retentionDays reads the share delete retention of an account's stored
// service properties (0 when off).
func retentionDays(tx storage.Tx, acct string) (int, error) {
	v, err := tx.Get(propsKey(acct))
	if errors.Is(err, storage.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	sp, err := decode[ServiceProps](v)
	if err != nil || sp.XML == nil {
		return 0, err
	}
	p, err := svcprops.ParseStored(sp.XML)
	if err != nil {
		return 0, nil
	}
	for _, e := range p.Extra {
		if e.XMLName.Local != "ShareDeleteRetentionPolicy" {
			continue
		}
		var pol struct {
			Enabled bool `xml:"Enabled"`
			Days    int  `xml:"Days"`
		}
		if xml.Unmarshal([]byte("<p>"+e.Inner+"</p>"), &pol) != nil || !pol.Enabled {
			return 0, nil
		}
		return max(pol.Days, 1), nil
	}
	return 0, nil
}

// softDelete keeps sh and its snapshots under a deleted-share record.
func softDelete(tx storage.Tx, acct string, sh *Share, snaps []*Share, days int, now time.Time) error {
	d := &DeletedShare{Share: *sh, Version: strconv.FormatInt(now.UnixNano(), 16), Deleted: now, Days: days}
	d.Share.Lease = lease.State{}
	for _, sn := range snaps {
		d.Snapshots = append(d.Snapshots, *sn)
	}
	for _, x := range append(snaps, sh) {
		if err := tx.Delete(shareKey(acct, x.Name, x.Snapshot)); err != nil {
			return err
		}
		if err := tx.Delete(shareIDKey(acct, x.Name, x.Snapshot)); err != nil {
			return err
		}
	}
	return tx.Set(deletedKey(acct, sh.Name, d.Version), encode(d))
}

// listDeleted returns the deleted shares of an account whose names start
// with prefix and whose retention has not ended.
func listDeleted(tx storage.Tx, acct, prefix string, now time.Time) ([]*DeletedShare, error) {
	p := keyenc.AppendPrefix(deletedPrefix(acct), prefix)
	it := tx.Scan(p, keyenc.PrefixEnd(p), false)
	defer it.Close()
	var out []*DeletedShare
	for it.Next() {
		d, err := decode[DeletedShare](it.Value())
		if err != nil {
			return nil, err
		}
		if now.Before(d.Expires()) {
			out = append(out, d)
		}
	}
	return out, it.Err()
}

// ListedShare is one entry of List Shares: a share, a snapshot, or (with
// Deleted set) a soft-deleted share.
type ListedShare struct {
	*Share
	Deleted *DeletedShare
}

// ListSharesWithDeleted is List Shares with include=deleted: live shares
// (and snapshots when asked) and soft-deleted ones, in name order.
func (s *Service) ListSharesWithDeleted(ctx context.Context, req ListSharesRequest) ([]ListedShare, string, error) {
	var out []ListedShare
	next := ""
	err := s.eng.View(ctx, func(tx storage.Tx) error {
		now := s.now()
		var all []ListedShare
		p := keyenc.AppendPrefix(sharesPrefix(req.Account), req.Prefix)
		it := tx.Scan(p, keyenc.PrefixEnd(p), false)
		for it.Next() {
			sh, err := decode[Share](it.Value())
			if err != nil {
				it.Close()
				return err
			}
			if sh.Snapshot != "" && !req.Snapshots {
				continue
			}
			sh.AsOf = now
			all = append(all, ListedShare{Share: sh})
		}
		err := it.Err()
		it.Close()
		if err != nil {
			return err
		}
		ds, err := listDeleted(tx, req.Account, req.Prefix, now)
		if err != nil {
			return err
		}
		for _, d := range ds {
			sh := d.Share
			sh.AsOf = now
			all = append(all, ListedShare{Share: &sh, Deleted: d})
		}
		sort.SliceStable(all, func(i, j int) bool { return all[i].Name < all[j].Name })
		count := 0
		for _, e := range all {
			if e.Name < req.Marker {
				continue
			}
			if e.Snapshot == "" || e.Deleted != nil {
				if count >= req.Max {
					next = e.Name
					break
				}
				count++
			}
			out = append(out, e)
		}
		return nil
	})
	return out, next, err
}

// RestoreShare is Restore Share: the soft-deleted share name of version
// comes back (with its snapshots) under its name. A live share of that
// name is 409 ShareAlreadyExists; an unknown or expired version 404
// ShareNotFound.
func (s *Service) RestoreShare(ctx context.Context, acct, name, version string) (*Share, error) {
	var out *Share
	err := s.eng.Update(ctx, func(tx storage.Tx) error {
		v, err := tx.Get(deletedKey(acct, name, version))
		if errors.Is(err, storage.ErrNotFound) {
			return azerr.New(azerr.ShareNotFound)
		}
		if err != nil {
			return err
		}
		d, err := decode[DeletedShare](v)
		if err != nil {
			return err
		}
		now := s.now()
		if !now.Before(d.Expires()) {
			return azerr.New(azerr.ShareNotFound)
		}
		if _, err := tx.Get(shareKey(acct, name, "")); err == nil {
			return azerr.New(azerr.ShareAlreadyExists)
		} else if !errors.Is(err, storage.ErrNotFound) {
			return err
		}
		sh := d.Share
		sh.Modified, sh.ETag = s.written(now), s.etag(sh.ETag, now)
		for _, x := range append(d.Snapshots, sh) {
			if err := putShare(tx, acct, &x); err != nil {
				return err
			}
		}
		if err := tx.Delete(deletedKey(acct, name, version)); err != nil {
			return err
		}
		sh.AsOf = now
		out = &sh
		return nil
	})
	return out, err
}

// expireDeleted turns soft-deleted shares whose retention has ended into
// tombstones for the purge.
func (s *Service) expireDeleted(ctx context.Context) error {
	p := root(tagDeleted, 0)
	return s.eng.Update(ctx, func(tx storage.Tx) error {
		now := s.now()
		it := tx.Scan(p, keyenc.PrefixEnd(p), false)
		type gone struct {
			key []byte
			d   *DeletedShare
		}
		var gs []gone
		for it.Next() {
			d, err := decode[DeletedShare](it.Value())
			if err != nil {
				it.Close()
				return err
			}
			if !now.Before(d.Expires()) {
				gs = append(gs, gone{append([]byte(nil), it.Key()...), d})
			}
		}
		err := it.Err()
		it.Close()
		if err != nil {
			return err
		}
		for _, g := range gs {
			if err := tx.Delete(g.key); err != nil {
				return err
			}
			for _, x := range append(g.d.Snapshots, g.d.Share) {
				if err := tx.Set(tombKey(x.ID), nil); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

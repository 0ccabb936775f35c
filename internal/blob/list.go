package blob

import (
	"context"
	"encoding/base64"
	"strings"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/keyenc"
	"github.com/lazuli-storage/lazuli/storage"
)

// ListBlobsRequest is List Blobs.
type ListBlobsRequest struct {
	// StartFrom (startFrom, 2026 versions) starts the listing at the first
	// name not below it, the name itself included.
	Prefix, Delimiter, Marker, StartFrom string
	Max                                  int
	Snapshots                            bool
	Uncommitted                          bool
	// Deleted (include=deleted) lists soft-deleted blobs too, and their
	// soft-deleted snapshots when Snapshots is set.
	Deleted bool
	// Versions (include=versions) lists previous versions too.
	Versions bool
	// DeletedWithVersions (include=deletedwithversions) lists a blob
	// whose current version was deleted but which has previous versions,
	// as its newest version marked HasVersionsOnly.
	DeletedWithVersions bool
	// Only (showonly=files|directories, accounts with a hierarchical
	// namespace) keeps the items of one kind of path: OnlyFiles or
	// OnlyDirectories; prefixes are listed whatever it is.
	Only string
}

// The kinds of path ListBlobsRequest.Only keeps.
const (
	OnlyFiles       = "files"
	OnlyDirectories = "directories"
)

// lists reports whether a listing shows the record in snapshot slot snap.
func (req *ListBlobsRequest) lists(snap string) bool {
	if snap == "" {
		return true
	}
	if _, ok := VersionOf(snap); ok {
		return req.Versions
	}
	return req.Snapshots
}

// ListItem is one entry of a List Blobs page: a blob or snapshot, an
// uncommitted blob (Blob holds only the name), or a BlobPrefix.
type ListItem struct {
	Blob        *Blob
	Uncommitted bool
	Prefix      string
	// Deleted is set for a soft-deleted blob or snapshot.
	Deleted *Deletion
	// DeletionID names a deleted path entry (List Deleted Paths).
	DeletionID string
	// HasVersionsOnly marks a blob that has previous versions and no
	// current one (Blob is its newest version, without version id).
	HasVersionsOnly bool
}

// baseSortKey places the base blob after its snapshots in a listing.
const baseSortKey = "~"

// deletedBaseSortKey places a soft-deleted base blob after a live blob of
// the same name (soft delete turned off since, so no write demoted it).
const deletedBaseSortKey = "~~"

func encodeMarker(name, sortKey string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(name + "\x00" + sortKey))
}

func decodeMarker(m string) (name, sortKey string, err error) {
	raw, err := base64.RawURLEncoding.DecodeString(m)
	if err != nil {
		return "", "", azerr.InvalidQuery("marker", m, "")
	}
	name, sortKey, ok := strings.Cut(string(raw), "\x00")
	if !ok {
		return "", "", azerr.InvalidQuery("marker", m, "")
	}
	return name, sortKey, nil
}

type peekIt struct {
	it    storage.Iterator
	w     *treeWalk // instead of it, on an account with a namespace
	base  []byte
	ok    bool
	name  string
	snap  string
	value []byte
	err   error
}

func (p *peekIt) advance(withSnap bool) {
	if p.w != nil {
		if p.ok = p.w.Next(); !p.ok {
			p.err = p.w.Err()
			return
		}
		p.name, p.snap, p.value = p.w.Name, p.w.Snap, p.w.Value
		return
	}
	p.ok = p.it.Next()
	if !p.ok {
		p.err = p.it.Err()
		return
	}
	rest := p.it.Key()[len(p.base):]
	name, rest, err := keyenc.ReadString(rest)
	if err != nil {
		p.ok, p.err = false, err
		return
	}
	p.name, p.snap = name, ""
	if withSnap {
		if p.snap, _, err = keyenc.ReadString(rest); err != nil {
			p.ok, p.err = false, err
			return
		}
	}
	p.value = p.it.Value()
}

// ListBlobs is List Blobs: names in binary order, snapshots (oldest first)
// before their base blob, BlobPrefix entries for names with the delimiter
// after the prefix. Each entry counts toward Max.
func (s *Service) ListBlobs(ctx context.Context, acct, container string, req ListBlobsRequest) ([]ListItem, string, error) {
	var mName, mKey string
	if req.Marker != "" {
		var err error
		if mName, mKey, err = decodeMarker(req.Marker); err != nil {
			return nil, "", err
		}
	}
	var out []ListItem
	next := ""
	err := s.eng.View(ctx, func(tx storage.Tx) error {
		if _, err := getContainer(tx, acct, container); err != nil {
			return err
		}
		if err := checkListing(ctx, tx, acct, container, req.Prefix); err != nil {
			return err
		}
		now := s.now()
		bBase, sBase, dBase := blobsPrefix(acct, container), stagingPrefix(acct, container), deletedContainerPrefix(acct, container)
		from := req.Prefix
		for _, f := range [...]string{mName, req.StartFrom} {
			if f > from {
				from = f
			}
		}
		start := func(base []byte) []byte {
			return keyenc.AppendPrefix(append([]byte(nil), base...), from)
		}
		prefixHi := func(base []byte) []byte {
			return keyenc.PrefixEnd(keyenc.AppendPrefix(append([]byte(nil), base...), req.Prefix))
		}
		// On an account with a hierarchical namespace the records are
		// keyed by the name index: walks of the directory the prefix
		// names, in full-name order.
		hns := s.HierarchicalNamespace(acct)
		dir, leaf := "", req.Prefix
		if i := strings.LastIndexByte(req.Prefix, '/'); i >= 0 {
			dir, leaf = req.Prefix[:i], req.Prefix[i+1:]
		}
		dirID, dirOK := "", true
		if hns && dir != "" {
			k, err := nameKey(tx, true, acct, container, dir)
			if err != nil {
				return err
			}
			if dirID, dirOK, err = dirIDOf(tx, acct, container, k); err != nil {
				return err
			}
		}
		bi := &peekIt{}
		si := &peekIt{}
		di := &peekIt{}
		// pi streams the deleted path entries of an account with a
		// namespace (name, then deletion id in snap).
		pi := &peekIt{}
		pBase := tupleKey(kindDeletedPath, acct, container)
		// reopen starts the streams at from, or (past) after every name
		// that starts with it.
		reopen := func(from string, past bool) {
			for _, p := range []*peekIt{bi, si, di, pi} {
				if p.it != nil {
					p.it.Close()
				}
				if p.w != nil {
					p.w.Close()
				}
			}
			if hns {
				bi, si, di, pi = &peekIt{}, &peekIt{}, &peekIt{}, &peekIt{}
				wfrom := from
				if past {
					wfrom = from[:len(from)-1] + string([]byte{from[len(from)-1] + 1})
				}
				if dirOK {
					bi = &peekIt{w: walkRecords(tx, kindBlob, true, acct, container, dir, dirID, leaf, wfrom)}
					bi.advance(true)
				}
				if dirOK && req.Uncommitted {
					si = &peekIt{w: walkRecords(tx, kindStaging, false, acct, container, dir, dirID, leaf, wfrom)}
					si.advance(false)
				}
				if req.Deleted {
					// Soft-deleted records keep their full names.
					dLo := start(dBase)
					if past {
						dLo = keyenc.PrefixEnd(dLo)
					}
					di = &peekIt{it: tx.Scan(dLo, prefixHi(dBase), false), base: dBase}
					di.advance(true)
					pLo := start(pBase)
					if past {
						pLo = keyenc.PrefixEnd(pLo)
					}
					pi = &peekIt{it: tx.Scan(pLo, prefixHi(pBase), false), base: pBase}
					pi.advance(true)
				}
				return
			}
			bLo, sLo, dLo := start(bBase), start(sBase), start(dBase)
			if past {
				bLo, sLo, dLo = keyenc.PrefixEnd(bLo), keyenc.PrefixEnd(sLo), keyenc.PrefixEnd(dLo)
			}
			bi = &peekIt{it: tx.Scan(bLo, prefixHi(bBase), false), base: bBase}
			bi.advance(true)
			if req.Uncommitted {
				si = &peekIt{it: tx.Scan(sLo, prefixHi(sBase), false), base: sBase}
				si.advance(false)
			}
			if req.Deleted {
				di = &peekIt{it: tx.Scan(dLo, prefixHi(dBase), false), base: dBase}
				di.advance(true)
			}
		}
		reopen(from, false)
		defer func() {
			for _, p := range []*peekIt{bi, si, di, pi} {
				if p.it != nil {
					p.it.Close()
				}
				if p.w != nil {
					p.w.Close()
				}
			}
		}()
		full := false
		emit := func(it ListItem, name, key string) bool {
			if name == mName && key < mKey {
				return true
			}
			if req.Only != "" && it.Blob != nil && it.Blob.IsDir() != (req.Only == OnlyDirectories) {
				return true
			}
			if len(out) == req.Max {
				next, full = encodeMarker(name, key), true
				return false
			}
			out = append(out, it)
			return true
		}
		for !full {
			if bi.err != nil {
				return bi.err
			}
			if si.err != nil {
				return si.err
			}
			if di.err != nil {
				return di.err
			}
			if pi.err != nil {
				return pi.err
			}
			name, found := "", false
			for _, p := range []*peekIt{bi, si, di, pi} {
				if p.ok && (!found || p.name < name) {
					name, found = p.name, true
				}
			}
			if !found {
				return nil
			}
			if req.Delimiter != "" {
				if i := strings.Index(name[len(req.Prefix):], req.Delimiter); i >= 0 {
					p := name[:len(req.Prefix)+i+len(req.Delimiter)]
					if !emit(ListItem{Prefix: p}, p, "") {
						break
					}
					from = p
					reopen(from, true)
					continue
				}
			}
			var base *Blob
			var snaps []*Blob
			var newest []byte // the newest previous version's record
			for bi.ok && bi.name == name {
				if _, ok := VersionOf(bi.snap); ok && req.DeletedWithVersions {
					newest = append(newest[:0], bi.value...)
				}
				if req.lists(bi.snap) {
					b, err := decodeBlob(bi.value)
					if err != nil {
						return err
					}
					// A record keeps the name it was written under; a
					// rename above it since leaves that behind.
					b.Name = name
					b.AsOf = now
					b.settleRehydration(now)
					if bi.snap == "" {
						if !b.expired(now) {
							base = b
						}
					} else {
						snaps = append(snaps, b)
					}
				}
				bi.advance(true)
			}
			staged := false
			for si.ok && si.name == name {
				st, err := decode[Staging](si.value)
				if err != nil {
					return err
				}
				staged = staged || now.Sub(st.Touched) <= StagingLifetime
				si.advance(false)
			}
			var delSnaps []ListItem
			var delBase *ListItem
			for di.ok && di.name == name {
				if req.lists(di.snap) {
					b, d, err := decodeListedDeleted(di.value, now)
					if err != nil {
						return err
					}
					if b != nil {
						b.Name = name
					}
					switch {
					case b == nil:
					case di.snap == "":
						delBase = &ListItem{Blob: b, Deleted: d}
					default:
						delSnaps = append(delSnaps, ListItem{Blob: b, Deleted: d})
					}
				}
				di.advance(true)
			}
			var delPaths []ListItem
			for pi.ok && pi.name == name {
				b, _, d, err := decodeDeletedPath(pi.value)
				if err != nil {
					return err
				}
				if now.Before(d.Expires()) {
					b.Name, b.AsOf = name, now
					delPaths = append(delPaths, ListItem{Blob: b, Deleted: &d, DeletionID: pi.snap})
				}
				pi.advance(true)
			}
			// Live and soft-deleted snapshots, in snapshot order.
			for len(snaps) > 0 || len(delSnaps) > 0 {
				var it ListItem
				if len(delSnaps) == 0 || len(snaps) > 0 && snaps[0].Snapshot < delSnaps[0].Blob.Snapshot {
					it, snaps = ListItem{Blob: snaps[0]}, snaps[1:]
				} else {
					it, delSnaps = delSnaps[0], delSnaps[1:]
				}
				if !emit(it, name, it.Blob.Snapshot) {
					break
				}
			}
			if full {
				break
			}
			key := baseSortKey
			switch {
			case base != nil:
				emit(ListItem{Blob: base}, name, key)
				key = deletedBaseSortKey
			case staged:
				emit(ListItem{Blob: &Blob{Name: name, Type: BlockBlob}, Uncommitted: true}, name, key)
				key = deletedBaseSortKey
			case newest != nil:
				b, err := decodeBlob(newest)
				if err != nil {
					return err
				}
				b.Name = name
				b.Snapshot, b.VersionID, b.AsOf = "", "", now
				emit(ListItem{Blob: b, HasVersionsOnly: true}, name, key)
				key = deletedBaseSortKey
			}
			if delBase != nil && !full {
				emit(*delBase, name, key)
			}
			// Deleted path entries last, in deletion id order (ids of one
			// length sort as numbers).
			for _, it := range delPaths {
				if full || !emit(it, name, deletedBaseSortKey+"~"+it.DeletionID) {
					break
				}
			}
		}
		return nil
	})
	return out, next, err
}

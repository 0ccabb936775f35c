package blob

// Hierarchical namespace (Data Lake Storage Gen2) on the Blob records.
//
// A directory is a zero-length block blob whose metadata carries
// hdi_isfolder=true, which is what Blob clients see on an Azure account
// with a hierarchical namespace; a file is a block blob. A path without a
// record whose name prefixes other records ("a" under "a/b/c.txt" written
// through the Blob API) is an implied directory. Owner, group, permissions
// and ACL live under their own key (kindPathACL) so that the Blob record
// and its codec stay as they are; a Blob delete that leaves one behind is
// harmless because the record names the creation time of the path it
// belongs to.

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/content"
	"github.com/lazuli-storage/lazuli/internal/keyenc"
	"github.com/lazuli-storage/lazuli/storage"
)

// FolderMeta is the metadata name that marks a directory record.
const FolderMeta = "hdi_isfolder"

// kindPathACL keys the access control record of a path:
//
//	h account container name    PathACL
const kindPathACL = 'h'

// Default owner and group of a path created by a Shared Key or SAS caller.
const Superuser = "$superuser"

// PathACL is the POSIX access control of a path, stored and returned as
// the caller set it.
type PathACL struct {
	Owner       string `json:"o"`
	Group       string `json:"g"`
	Permissions string `json:"p"` // symbolic, e.g. rwxr-x---, with + when an ACL has named entries
	ACL         string `json:"a,omitempty"`
	// Created is the creation time of the path record it belongs to; a
	// record that does not match is stale (the path was deleted through
	// the Blob API and made again).
	Created time.Time `json:"c"`
}

func pathACLKey(acct, c string, k pathKey) []byte {
	return tupleKey(kindPathACL, acct, segOf(c, k), string(k))
}

// IsDir reports whether a blob record is a directory of a hierarchical
// namespace.
func (b *Blob) IsDir() bool {
	for _, kv := range b.Meta {
		if strings.EqualFold(kv[0], FolderMeta) && strings.EqualFold(kv[1], "true") {
			return true
		}
	}
	return false
}

// Path is a file or directory as the dfs API reports it.
type Path struct {
	Name string
	Dir  bool
	// Blob is the record (nil for an implied directory).
	Blob *Blob
	ACL  PathACL
}

// ETag is the path's ETag (0 for an implied directory).
func (p *Path) ETag() uint64 {
	if p.Blob == nil {
		return 0
	}
	return p.Blob.ETag
}

// defaultACL is the access control of a path with no stored record: the
// permissions Azure gives a new path (0777 directories, 0666 files) under
// the default umask 0027.
func defaultACL(dir bool) PathACL {
	perm := "rw-r-----"
	if dir {
		perm = "rwxr-x---"
	}
	return PathACL{Owner: Superuser, Group: Superuser, Permissions: perm}
}

// loadACL returns the access control of b (the default for a missing or
// stale record).
func loadACL(tx storage.Tx, acct, c string, b *Blob) (PathACL, error) {
	v, err := tx.Get(pathACLKey(acct, c, b.key))
	if errors.Is(err, storage.ErrNotFound) {
		return defaultACL(b.IsDir()), nil
	}
	if err != nil {
		return PathACL{}, err
	}
	a, err := decodeACL(v)
	if err != nil {
		return PathACL{}, err
	}
	if !a.Created.Equal(b.Created) {
		return defaultACL(b.IsDir()), nil
	}
	return *a, nil
}

func putACL(tx storage.Tx, acct, c string, k pathKey, a PathACL) error {
	return tx.Set(pathACLKey(acct, c, k), encodeACL(a))
}

// aclBinaryTag starts an access control record in the binary layout of
// encodeACL: the fields of PathACL in declaration order, strings as
// uvarint length and bytes. Binary, not JSON, because decoding JSON took
// half of a recursive List Paths (BenchmarkHNSListPathsRecursive).
const aclBinaryTag = 0x02

func encodeACL(a PathACL) []byte {
	dst := []byte{aclBinaryTag}
	for _, s := range []string{a.Owner, a.Group, a.Permissions, a.ACL} {
		dst = content.AppendStr(dst, s)
	}
	return content.AppendTime(dst, a.Created)
}

// decodeACL reads a record of encodeACL, or the JSON of earlier builds.
func decodeACL(v []byte) (*PathACL, error) {
	if len(v) == 0 || v[0] != aclBinaryTag {
		return decode[PathACL](v)
	}
	r := content.NewReader(v[1:])
	a := &PathACL{}
	a.Owner = r.Str()
	a.Group = r.Str()
	a.Permissions = r.Str()
	a.ACL = r.Str()
	a.Created = r.Time()
	if err := r.End(); err != nil {
		return nil, fmt.Errorf("blob: corrupt access control record: %w", err)
	}
	return a, nil
}

// hasChildren reports whether any record lies under dir/: on an account
// with a hierarchical namespace (hns), a record keyed under the
// directory's id.
func hasChildren(tx storage.Tx, hns bool, acct, c, dir string) (bool, error) {
	lo := childrenPrefix(acct, c, dir)
	if hns {
		k, err := nameKey(tx, true, acct, c, dir)
		if err != nil {
			return false, err
		}
		id, ok, err := dirIDOf(tx, acct, c, k)
		if err != nil || !ok {
			return false, err
		}
		lo = keyenc.AppendPrefix(blobsPrefix(acct, idSeg(c, id)), keySep+id+keySep)
	}
	it := tx.Scan(lo, keyenc.PrefixEnd(lo), false)
	defer it.Close()
	found := it.Next()
	return found, it.Err()
}

// childrenPrefix covers the records of every path under dir ("" is the
// root: every record of the container).
func childrenPrefix(acct, c, dir string) []byte {
	if dir == "" {
		return blobsPrefix(acct, c)
	}
	return keyenc.AppendPrefix(blobsPrefix(acct, c), dir+"/")
}

// getPath loads the path name: its record, or an implied directory, or
// nil when neither exists. The container must exist (404
// FilesystemNotFound).
func getPath(tx storage.Tx, hns bool, acct, c, name string) (*Path, error) {
	b, err := getBlobNamed(tx, hns, acct, c, name)
	if err != nil {
		return nil, err
	}
	if b != nil {
		a, err := loadACL(tx, acct, c, b)
		if err != nil {
			return nil, err
		}
		return &Path{Name: name, Dir: b.IsDir(), Blob: b, ACL: a}, nil
	}
	if err := containerExists(tx, acct, c); err != nil {
		return nil, azerr.New(azerr.FilesystemNotFound)
	}
	kids, err := hasChildren(tx, hns, acct, c, name)
	if err != nil || !kids {
		return nil, err
	}
	return &Path{Name: name, Dir: true, ACL: defaultACL(true)}, nil
}

// parentOf returns the parent directory of name ("" for the root).
func parentOf(name string) string {
	i := strings.LastIndexByte(name, '/')
	if i < 0 {
		return ""
	}
	return name[:i]
}

// newDirRecord is the record of a directory made at now.
func (s *Service) newDirRecord(k pathKey, name string, meta []KV, now time.Time) *Blob {
	m := append([]KV{{FolderMeta, "true"}}, withoutFolder(meta)...)
	b := &Blob{Name: name, Type: BlockBlob, Created: now, Modified: s.written(now), ETag: s.etag(0, now), Meta: m, key: k}
	b.replacing(nil)
	return b
}

func withoutFolder(meta []KV) []KV {
	out := make([]KV, 0, len(meta))
	for _, kv := range meta {
		if !strings.EqualFold(kv[0], FolderMeta) {
			out = append(out, kv)
		}
	}
	return out
}

// ensureParents makes every missing ancestor directory of name, as Azure
// does for a path created through the dfs API; an ancestor that is a file
// is 409 PathConflict.
func (s *Service) ensureParents(tx storage.Tx, acct, c, name string, now time.Time) error {
	var missing []string
	var top *Blob
	for p := parentOf(name); p != ""; p = parentOf(p) {
		b, err := getBlobNamed(tx, s.HierarchicalNamespace(acct), acct, c, p)
		if err != nil {
			return err
		}
		if b != nil {
			if !b.IsDir() {
				return azerr.New(azerr.PathConflict)
			}
			top = b
			break
		}
		missing = append(missing, p)
	}
	if len(missing) == 0 {
		return nil
	}
	if _, _, _, err := s.indexDir(tx, acct, c, missing[0]); err != nil {
		return err
	}
	// Each directory made here inherits the default ACL of the one above
	// it, from the nearest existing ancestor down.
	// The root keeps access control of its own.
	above, err := rootACL(tx, acct, c)
	if err != nil {
		return err
	}
	inherits := true
	if top != nil {
		if above, err = loadACL(tx, acct, c, top); err != nil {
			return err
		}
	}
	for i := len(missing) - 1; i >= 0; i-- {
		k, err := s.keyOf(tx, acct, c, missing[i])
		if err != nil {
			return err
		}
		b := s.newDirRecord(k, missing[i], nil, now)
		if err := putBlob(tx, acct, c, b); err != nil {
			return err
		}
		if !inherits {
			continue
		}
		a, ok := inherit(above, true, "")
		if !ok {
			inherits = false
			continue
		}
		a.Created = b.Created
		if err := putACL(tx, acct, c, b.key, a); err != nil {
			return err
		}
		above = a
	}
	return nil
}

// materialize gives an implied directory a record, so that an operation
// that writes it (ACL, properties, lease) has one to write.
func (s *Service) materialize(tx storage.Tx, acct, c string, p *Path, now time.Time) error {
	if p.Blob != nil {
		return nil
	}
	if s.HierarchicalNamespace(acct) {
		// The directory and its ancestors get records and ids, unless an
		// ancestor is a file (a blob written under a file through the
		// Blob API): then it stays out of the index, as they do.
		err := s.ensureParents(tx, acct, c, p.Name, now)
		if e, ok := azerr.As(err); !ok || e.Code != azerr.PathConflict {
			if err != nil {
				return err
			}
			if _, _, _, err := s.indexDir(tx, acct, c, p.Name); err != nil {
				return err
			}
		}
	}
	k, err := s.keyOf(tx, acct, c, p.Name)
	if err != nil {
		return err
	}
	b := s.newDirRecord(k, p.Name, nil, now)
	if err := putBlob(tx, acct, c, b); err != nil {
		return err
	}
	b.loaded, b.tagsKnown = true, false
	p.Blob = b
	p.ACL.Created = b.Created
	return nil
}

// containerACLsPrefix covers the access control records of a container's
// paths, which go with the container.
func containerACLsPrefix(acct, c string) []byte {
	return keyenc.AppendString(keyenc.AppendString([]byte{kindPathACL}, acct), c)
}

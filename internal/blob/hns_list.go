package blob

import (
	"context"
	"errors"
	"strings"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/keyenc"
	"github.com/lazuli-storage/lazuli/storage"
)

// ListPathsRequest is Filesystem - List Paths.
type ListPathsRequest struct {
	Dir       string // "" lists from the root
	Recursive bool
	// Continuation is the name of the path to resume at (as returned).
	Continuation string
	Max          int
}

// ListPaths is Filesystem - List Paths: the files and directories under
// Dir (all of them, or only its children), implied directories included,
// with the name of the path the next page starts at ("" at the end).
func (s *Service) ListPaths(ctx context.Context, acct, c string, req ListPathsRequest) ([]*Path, string, error) {
	if req.Max <= 0 || req.Max > MaxListResults {
		req.Max = MaxListResults
	}
	var out []*Path
	next := ""
	err := s.eng.View(ctx, func(tx storage.Tx) error {
		out, next = nil, ""
		if err := containerExists(tx, acct, c); err != nil {
			return azerr.New(azerr.FilesystemNotFound)
		}
		if req.Dir != "" {
			p, err := getPath(tx, s.HierarchicalNamespace(acct), acct, c, req.Dir)
			if err != nil {
				return err
			}
			if p == nil {
				return azerr.New(azerr.PathNotFound)
			}
			if !p.Dir {
				return azerr.New(azerr.PathConflict)
			}
		}
		if z := authzFor(ctx, tx, acct, c); z != nil {
			if err := z.access(req.Dir, permR|permX); err != nil {
				return err
			}
		}
		if s.HierarchicalNamespace(acct) {
			var err error
			out, next, err = listTree(tx, acct, c, req)
			return err
		}
		base := blobsPrefix(acct, c)
		lo := childrenPrefix(acct, c, req.Dir)
		hi := keyenc.PrefixEnd(lo)
		// emitted holds the directories already listed, so that an
		// implied directory is listed once; on a later page it starts
		// with what the record before the resume point listed.
		emitted := map[string]bool{}
		var last string
		if req.Continuation != "" {
			from := keyenc.AppendString(append([]byte(nil), base...), req.Continuation)
			if string(from) > string(lo) {
				it := tx.Scan(lo, from, true)
				if it.Next() {
					prev, _, err := keyenc.ReadString(it.Key()[len(base):])
					if err == nil {
						for _, d := range s.listedFor(req, prev) {
							emitted[d] = true
						}
						last = prev
					}
				}
				it.Close()
				lo = from
			}
		}
		rel := func(name string) string {
			if req.Dir == "" {
				return name
			}
			return name[len(req.Dir)+1:]
		}
		for {
			it := tx.Scan(lo, hi, false)
			skipTo := []byte(nil)
			for it.Next() {
				name, rest, err := keyenc.ReadString(it.Key()[len(base):])
				if err != nil {
					it.Close()
					return err
				}
				if snap, _, _ := keyenc.ReadString(rest); snap != "" || name == last {
					continue
				}
				if len(out) >= req.Max {
					next = name
					it.Close()
					return nil
				}
				last = name
				r := rel(name)
				if !req.Recursive {
					child, _, _ := strings.Cut(r, "/")
					cname := child
					if req.Dir != "" {
						cname = req.Dir + "/" + child
					}
					if strings.Contains(r, "/") {
						if !emitted[cname] {
							emitted[cname] = true
							if implied, err := impliedDir(tx, acct, c, cname); err != nil {
								it.Close()
								return err
							} else if implied {
								out = append(out, &Path{Name: cname, Dir: true, ACL: defaultACL(true)})
							}
						}
						// Skip the rest of the child's subtree.
						skipTo = keyenc.PrefixEnd(keyenc.AppendPrefix(append([]byte(nil), base...), cname+"/"))
						break
					}
				} else {
					// Implied ancestors first.
					var anc []string
					for p := parentOf(name); p != req.Dir && p != ""; p = parentOf(p) {
						if emitted[p] {
							break
						}
						anc = append(anc, p)
					}
					for i := len(anc) - 1; i >= 0; i-- {
						emitted[anc[i]] = true
						if implied, err := impliedDir(tx, acct, c, anc[i]); err != nil {
							it.Close()
							return err
						} else if implied {
							out = append(out, &Path{Name: anc[i], Dir: true, ACL: defaultACL(true)})
						}
					}
				}
				b, err := decodeBlobAt(it.Value(), name, "")
				if err != nil {
					it.Close()
					return err
				}
				b.key = plainKey(name)
				if emitted[name] {
					continue
				}
				a, err := loadACL(tx, acct, c, b)
				if err != nil {
					it.Close()
					return err
				}
				if b.IsDir() {
					emitted[name] = true
				}
				out = append(out, &Path{Name: name, Dir: b.IsDir(), Blob: b, ACL: a})
			}
			err := it.Err()
			it.Close()
			if err != nil || skipTo == nil {
				return err
			}
			lo = skipTo
		}
	})
	if err == nil {
		err = s.checkListed(ctx, acct, c, req, out)
	}
	// A file whose expiry time has come is gone (the purge removes its
	// record): the page leaves it out, and may be shorter than Max.
	now, live := s.now(), out[:0]
	for _, p := range out {
		if p.Blob == nil || !p.Blob.expired(now) {
			live = append(live, p)
		}
	}
	return live, next, err
}

// listedFor is the directories a listing has listed by the time it has
// passed the record of name: the child of Dir it lies in, or (recursive)
// every ancestor and the path itself.
func (s *Service) listedFor(req ListPathsRequest, name string) []string {
	var out []string
	for p := name; p != req.Dir && p != ""; p = parentOf(p) {
		out = append(out, p)
	}
	if !req.Recursive && len(out) > 0 {
		return out[len(out)-1:]
	}
	return out
}

// impliedDir reports whether the directory dir, which a record under it
// implies, has no record of its own. One that has was listed from its
// record, which sorts before every path under it: on an earlier page
// when a continuation resumes between the two (after "a" and "a-b" comes
// "a/x", whose directory "a" the page must not list again).
func impliedDir(tx storage.Tx, acct, c, dir string) (bool, error) {
	_, err := tx.Get(blobKey(acct, c, plainKey(dir), ""))
	if errors.Is(err, storage.ErrNotFound) {
		return true, nil
	}
	return false, err
}

// listTree is List Paths on an account with a hierarchical namespace: a
// walk of the name index from the directory down (recursive), or the one
// range of its children's keys.
func listTree(tx storage.Tx, acct, c string, req ListPathsRequest) (out []*Path, next string, err error) {
	id := ""
	if req.Dir != "" {
		k, err := nameKey(tx, true, acct, c, req.Dir)
		if err != nil {
			return nil, "", err
		}
		var ok bool
		if id, ok, err = dirIDOf(tx, acct, c, k); err != nil || !ok {
			return nil, "", err
		}
	}
	emit := func(name string, k pathKey, v []byte) (bool, error) {
		if len(out) >= req.Max {
			next = name
			return false, nil
		}
		b, err := decodeBlobAt(v, name, "")
		if err != nil {
			return false, err
		}
		b.key = k
		a, err := loadACL(tx, acct, c, b)
		if err != nil {
			return false, err
		}
		out = append(out, &Path{Name: name, Dir: b.IsDir(), Blob: b, ACL: a})
		return true, nil
	}
	if req.Recursive {
		w := walkTree(tx, acct, c, req.Dir, id, "", req.Continuation)
		defer w.Close()
		for w.Next() {
			if w.Snap != "" {
				continue
			}
			if more, err := emit(w.Name, w.Key(), w.Value); err != nil || !more {
				return out, next, err
			}
		}
		return out, next, w.Err()
	}
	base := keyenc.AppendPrefix(blobsPrefix(acct, idSeg(c, id)), keySep+id+keySep)
	lo := base
	if r, ok := strings.CutPrefix(req.Continuation, req.Dir+"/"); ok || req.Dir == "" && req.Continuation != "" {
		if req.Dir == "" {
			r = req.Continuation
		}
		lo = keyenc.AppendPrefix(append([]byte(nil), base...), r)
	}
	it := tx.Scan(lo, keyenc.PrefixEnd(base), false)
	defer it.Close()
	prefix := blobsPrefix(acct, idSeg(c, id))
	for it.Next() {
		k, rest, err := keyenc.ReadString(it.Key()[len(prefix):])
		if err != nil {
			return nil, "", err
		}
		if snap, _, _ := keyenc.ReadString(rest); snap != "" {
			continue
		}
		_, leaf, _ := splitKey(pathKey(k))
		if more, err := emit(join(req.Dir, leaf), pathKey(k), it.Value()); err != nil || !more {
			return out, next, err
		}
	}
	return out, next, it.Err()
}

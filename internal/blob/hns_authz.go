package blob

// POSIX ACL enforcement of a hierarchical namespace, as ADLS evaluates it.
//
// A Caller travels in the request context (WithCaller); without one every
// operation runs as the superuser, which is what Shared Key and SAS
// callers are. The checks run inside the transaction of the operation
// they guard, so an ACL change acknowledged before a create is seen by
// that create: no write passes an ACL that no longer allows it.
//
// The rules (ADLS's, after HDFS): execute on every ancestor directory to
// reach a path; read on a file to read it, read and execute on a
// directory to list it; write on a file to write it; write and execute on
// the parent to create, delete or rename a child; with the sticky bit on
// the parent only the owner of the child or of the parent may delete or
// rename it; a recursive delete needs read, write and execute on every
// directory it removes; only the owner changes permissions and ACL, only
// the superuser the owner. Entries are matched in the order owner, named
// users, owning and named groups (any granting one), other; the mask caps
// named users, the groups and other.

import (
	"context"
	"errors"
	"slices"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/storage"
)

// DataRole is the Azure data role a caller holds on the account.
type DataRole uint8

const (
	// NoRole leaves every decision to the ACLs.
	NoRole DataRole = iota
	// Reader (Storage Blob Data Reader) reads and lists whatever the ACLs
	// say.
	Reader
	// Contributor (Storage Blob Data Contributor) reads, writes, creates
	// and deletes whatever the ACLs say; changing access control still
	// needs ownership.
	Contributor
)

// Caller is the security principal a namespace operation runs for.
type Caller struct {
	// OID is the principal's object id, matched against owners and named
	// user entries.
	OID string
	// Groups are the object ids of its groups.
	Groups []string
	// Superuser skips every ACL check (Storage Blob Data Owner).
	Superuser bool
	Role      DataRole
	// Delegator, when set, is the owner of the user delegation key a SAS
	// was signed with: Azure lets the SAS do only what that principal may
	// do too (by its role, else by the ACLs).
	Delegator *Caller
}

type callerKey struct{}

// WithCaller returns ctx carrying c: namespace operations run under ctx
// are checked against c's ACL permissions. A nil c is the superuser.
func WithCaller(ctx context.Context, c *Caller) context.Context {
	return WithCallerOf(ctx, func() *Caller { return c })
}

// WithCallerOf is WithCaller with the caller found when an operation
// checks it, which is after the request's signature was verified: that
// is what tells the role of a user delegation key's owner.
func WithCallerOf(ctx context.Context, caller func() *Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, caller)
}

// callerOf returns the caller of ctx (nil: the superuser).
func callerOf(ctx context.Context) *Caller {
	f, _ := ctx.Value(callerKey{}).(func() *Caller)
	if f == nil {
		return nil
	}
	return f()
}

// checked returns the caller of ctx when its operations need ACL checks.
func checked(ctx context.Context) *Caller {
	c := callerOf(ctx)
	if c.unchecked() {
		return nil
	}
	return c
}

// unchecked reports whether c skips every ACL check: the superuser,
// unless it acts for a key owner who is not.
func (c *Caller) unchecked() bool {
	return c == nil || (c.Superuser && c.Delegator.unchecked())
}

// roleAllows reports whether c's data role alone allows an operation
// that writes (or only reads).
func (c *Caller) roleAllows(write bool) bool {
	return c.Superuser || c.Role == Contributor || (!write && c.Role == Reader)
}

// perm is a set of r (4), w (2), x (1).
type perm uint8

const (
	permX perm = 1
	permW perm = 2
	permR perm = 4
)

func parsePerm(s string) perm {
	var p perm
	if len(s) == 3 {
		if s[0] == 'r' {
			p |= permR
		}
		if s[1] == 'w' {
			p |= permW
		}
		if s[2] == 'x' || s[2] == 't' {
			p |= permX
		}
	}
	return p
}

// may reports whether c holds every permission of want on a path with
// access control a.
func (c *Caller) may(a PathACL, want perm) bool {
	if c == nil {
		return true
	}
	if d := c.Delegator; d != nil && !d.roleAllows(want&permW != 0) && !d.may(a, want) {
		return false
	}
	if c.Superuser || want == 0 {
		return true
	}
	entries, err := parseACL(a.AccessControl())
	if err != nil {
		return false
	}
	mask := permR | permW | permX
	var owner, group, other perm
	for _, e := range entries {
		if e.def || e.id != "" {
			continue
		}
		switch e.scope {
		case "user":
			owner = parsePerm(e.p)
		case "group":
			group = parsePerm(e.p)
		case "other":
			other = parsePerm(e.p)
		case "mask":
			mask = parsePerm(e.p)
		}
	}
	if c.OID != "" && c.OID == a.Owner {
		// The owner's entry is not masked.
		return owner&want == want
	}
	for _, e := range entries {
		if !e.def && e.scope == "user" && e.id != "" && e.id == c.OID {
			return parsePerm(e.p)&mask&want == want
		}
	}
	if c.member(a.Group) && group&mask&want == want {
		return true
	}
	for _, e := range entries {
		if !e.def && e.scope == "group" && e.id != "" && c.member(e.id) && parsePerm(e.p)&mask&want == want {
			return true
		}
	}
	return other&mask&want == want
}

func (c *Caller) member(group string) bool {
	return group != "" && slices.Contains(c.Groups, group)
}

// denied is what a refused ACL check answers.
func denied() error { return azerr.New(azerr.AuthorizationPermissionMismatch) }

// rootACL is the access control of a filesystem's root directory: its
// record, or $superuser's rwxr-x---.
func rootACL(tx storage.Tx, acct, c string) (PathACL, error) {
	v, err := tx.Get(pathACLKey(acct, c, ""))
	if errors.Is(err, storage.ErrNotFound) {
		return defaultACL(true), nil
	}
	if err != nil {
		return PathACL{}, err
	}
	a, err := decodeACL(v)
	if err != nil {
		return PathACL{}, err
	}
	return *a, nil
}

// authz checks one caller's operations in one transaction.
type authz struct {
	c        *Caller
	tx       storage.Tx
	acct, fs string
}

// authzFor returns the checker of ctx's caller in tx, nil when the
// caller is the superuser.
func authzFor(ctx context.Context, tx storage.Tx, acct, fs string) *authz {
	c := checked(ctx)
	if c == nil {
		return nil
	}
	return &authz{c: c, tx: tx, acct: acct, fs: fs}
}

// load returns the path name ("" the root) with its access control; nil
// when it does not exist.
func (z *authz) load(name string) (*Path, error) {
	if name == "" {
		a, err := rootACL(z.tx, z.acct, z.fs)
		if err != nil {
			return nil, err
		}
		return &Path{Dir: true, ACL: a}, nil
	}
	return getPath(z.tx, true, z.acct, z.fs, name)
}

// reach checks execute on every existing ancestor of name, root first,
// and returns the nearest one (the parent when it exists).
func (z *authz) reach(name string) (*Path, error) {
	if name == "" {
		return nil, nil
	}
	var chain []string
	for p := parentOf(name); p != ""; p = parentOf(p) {
		chain = append(chain, p)
	}
	chain = append(chain, "")
	var last *Path
	for i := len(chain) - 1; i >= 0; i-- {
		p, err := z.load(chain[i])
		if err != nil {
			return nil, err
		}
		if p == nil || !p.Dir {
			break
		}
		if !z.c.may(p.ACL, permX) {
			return nil, denied()
		}
		last = p
	}
	return last, nil
}

// role reports whether the caller's data role alone allows an operation
// that writes (or only reads): its own and its key owner's.
func (z *authz) role(write bool) bool {
	d := z.c.Delegator
	return z.c.roleAllows(write) && (d == nil || d.roleAllows(write))
}

// access checks want on name after the walk to it; a missing path passes
// (the operation answers its own 404).
func (z *authz) access(name string, want perm) error {
	if z.role(want&permW != 0) {
		return nil
	}
	if _, err := z.reach(name); err != nil {
		return err
	}
	p, err := z.load(name)
	if err != nil || p == nil {
		return err
	}
	if !z.c.may(p.ACL, want) {
		return denied()
	}
	return nil
}

// create checks the making of name: write and execute on its parent (the
// nearest existing ancestor when parents are made on the way) and, over
// an existing file, write on the file.
func (z *authz) create(name string, old *Blob) error {
	if z.role(true) {
		return nil
	}
	parent, err := z.reach(name)
	if err != nil {
		return err
	}
	if parent != nil && !z.c.may(parent.ACL, permW|permX) {
		return denied()
	}
	if old != nil && !old.IsDir() {
		a, err := loadACL(z.tx, z.acct, z.fs, old)
		if err != nil {
			return err
		}
		if !z.c.may(a, permW) {
			return denied()
		}
	}
	return nil
}

// remove checks the removal of the path p (delete, or the source of a
// rename): write and execute on its parent, and the sticky bit rule.
func (z *authz) remove(p *Path) error {
	if z.role(true) {
		return nil
	}
	parent, err := z.reach(p.Name)
	if err != nil {
		return err
	}
	if parent == nil || parentOf(p.Name) != parent.Name {
		return nil
	}
	if !z.c.may(parent.ACL, permW|permX) {
		return denied()
	}
	if sticky(parent.ACL) && !z.c.Superuser && z.c.OID != p.ACL.Owner && z.c.OID != parent.ACL.Owner {
		return denied()
	}
	return nil
}

// removeDir checks read, write and execute on a directory a recursive
// delete empties.
func (z *authz) removeDir(name string) error {
	if z.role(true) {
		return nil
	}
	p, err := z.load(name)
	if err != nil || p == nil || !p.Dir {
		return err
	}
	if !z.c.may(p.ACL, permR|permW|permX) {
		return denied()
	}
	return nil
}

// setAccess checks a change of access control on p: owner and group
// changes and new permissions or ACL. Only the superuser gives a path
// away; the owner sets its permissions, ACL and (to a group of its own)
// its owning group.
func (z *authz) setAccess(p *Path, owner, group string) error {
	if _, err := z.reach(p.Name); err != nil {
		return err
	}
	if !z.owns(p) {
		return denied()
	}
	if z.c.Superuser {
		return nil
	}
	if owner != "" && owner != p.ACL.Owner {
		return denied()
	}
	if group != "" && group != p.ACL.Group && !z.c.member(group) {
		return denied()
	}
	return nil
}

func sticky(a PathACL) bool {
	return len(a.Permissions) == 9 && (a.Permissions[8] == 't' || a.Permissions[8] == 'T')
}

// ownMade makes the caller the owner of the directories a create made on
// the way to name (those under the nearest ancestor that existed).
func (z *authz) ownMade(name string, existed map[string]bool) error {
	if z.c.OID == "" {
		return nil
	}
	for p := parentOf(name); p != "" && !existed[p]; p = parentOf(p) {
		b, err := getBlobNamed(z.tx, true, z.acct, z.fs, p)
		if err != nil || b == nil {
			return err
		}
		a, err := loadACL(z.tx, z.acct, z.fs, b)
		if err != nil {
			return err
		}
		a.Owner, a.Created = z.c.OID, b.Created
		if err := putACL(z.tx, z.acct, z.fs, b.key, a); err != nil {
			return err
		}
	}
	return nil
}

// existingAncestors lists which ancestors of name have a record now.
func existingAncestors(tx storage.Tx, acct, fs, name string) (map[string]bool, error) {
	out := map[string]bool{}
	for p := parentOf(name); p != ""; p = parentOf(p) {
		b, err := getBlobNamed(tx, true, acct, fs, p)
		if err != nil {
			return nil, err
		}
		if b != nil {
			out[p] = true
			break
		}
	}
	return out, nil
}

// setRootOwner gives the root directory of a filesystem made by ctx's
// caller to that caller.
func setRootOwner(ctx context.Context, tx storage.Tx, acct string, c *Container) error {
	caller := callerOf(ctx)
	if caller == nil || caller.OID == "" {
		return nil
	}
	a := defaultACL(true)
	a.Owner, a.Created = caller.OID, c.Created
	return putACL(tx, acct, c.Name, "", a)
}

// checkCreate checks a Path - Create in its transaction and returns what
// to run once the missing parents are made: they belong to the caller
// (an OAuth caller's oid), as the path itself does. A caller that is not
// the superuser names no other owner, and only a group of its own.
func checkCreate(ctx context.Context, tx storage.Tx, req CreatePathRequest, old *Blob) (func() error, error) {
	none := func() error { return nil }
	caller := callerOf(ctx)
	if caller == nil {
		return none, nil
	}
	z := &authz{c: caller, tx: tx, acct: req.Account, fs: req.Container}
	if !caller.unchecked() {
		if err := z.create(req.Name, old); err != nil {
			return nil, err
		}
	}
	if !caller.Superuser && ((req.Owner != "" && req.Owner != caller.OID) || (req.Group != "" && !caller.member(req.Group))) {
		return nil, denied()
	}
	if caller.OID == "" {
		return none, nil
	}
	existed, err := existingAncestors(tx, req.Account, req.Container, req.Name)
	if err != nil {
		return nil, err
	}
	return func() error { return z.ownMade(req.Name, existed) }, nil
}

// removeTree checks a recursive delete of top that removes names.
func (z *authz) removeTree(top string, names []string) error {
	if err := z.removeDir(top); err != nil {
		return err
	}
	for _, n := range names {
		if err := z.removeDir(n); err != nil {
			return err
		}
	}
	return nil
}

// renameTo checks the destination of a rename: a child made in its
// parent, and the removal of the path it replaces (dp, when there).
func (z *authz) renameTo(dst Ref, dp *Path) error {
	d := &authz{c: z.c, tx: z.tx, acct: dst.Account, fs: dst.Container}
	if err := d.create(dst.Name, nil); err != nil {
		return err
	}
	if dp != nil && dp.Blob != nil {
		return d.remove(dp)
	}
	return nil
}

// owns reports whether the caller may change the access control of p.
// The key owner of a user delegation SAS must own it too.
func (z *authz) owns(p *Path) bool {
	if d := z.c.Delegator; d != nil && !d.Superuser && d.OID != p.ACL.Owner {
		return false
	}
	return z.c.Superuser || (z.c.OID != "" && z.c.OID == p.ACL.Owner)
}

// GetRootAccess is Path - Get Properties (getAccessControl) of a
// filesystem's root directory.
func (s *Service) GetRootAccess(ctx context.Context, acct, fs string) (PathACL, error) {
	var out PathACL
	err := s.eng.View(ctx, func(tx storage.Tx) error {
		if err := containerExists(tx, acct, fs); err != nil {
			return azerr.New(azerr.FilesystemNotFound)
		}
		a, err := rootACL(tx, acct, fs)
		out = a
		return err
	})
	return out, err
}

// SetRootAccessControl is Path - Update (setAccessControl) of a
// filesystem's root directory, under the rules of any directory.
func (s *Service) SetRootAccessControl(ctx context.Context, acct, fs, owner, group, perms, acl string) (PathACL, error) {
	var out PathACL
	err := s.eng.Update(ctx, func(tx storage.Tx) error {
		if err := containerExists(tx, acct, fs); err != nil {
			return azerr.New(azerr.FilesystemNotFound)
		}
		a, err := rootACL(tx, acct, fs)
		if err != nil {
			return err
		}
		if z := authzFor(ctx, tx, acct, fs); z != nil {
			if err := z.setAccess(&Path{Dir: true, ACL: a}, owner, group); err != nil {
				return err
			}
		}
		if perms != "" {
			a.SetPermissions(perms)
		}
		if err := applyAccess(&a, "", "", owner, group, acl, false, true); err != nil {
			return err
		}
		out = a
		return putACL(tx, acct, fs, "", a)
	})
	return out, err
}

// FailedEntry is a path Set Access Control Recursive could not change.
type FailedEntry struct {
	Name    string
	Dir     bool
	Message string
}

func failedEntry(p *Path, err error) FailedEntry {
	msg := err.Error()
	if e, ok := azerr.As(err); ok {
		msg = e.Message
	}
	return FailedEntry{Name: p.Name, Dir: p.Dir, Message: msg}
}

// checkListed checks a recursive listing of ctx's caller: listing the
// contents of each directory under the one asked for needs read and
// execute on it too. The page holds the access control of the directories
// it lists; one listed on an earlier page is read again.
func (s *Service) checkListed(ctx context.Context, acct, fs string, req ListPathsRequest, out []*Path) error {
	c := checked(ctx)
	if c == nil || !req.Recursive || c.Role != NoRole {
		return nil
	}
	acls := map[string]PathACL{}
	for _, p := range out {
		if p.Dir {
			acls[p.Name] = p.ACL
		}
	}
	var earlier []string
	for _, p := range out {
		parent := parentOf(p.Name)
		if parent == req.Dir || parent == "" {
			continue
		}
		a, ok := acls[parent]
		if !ok {
			earlier = append(earlier, parent)
			continue
		}
		if !c.may(a, permR|permX) {
			return denied()
		}
	}
	if len(earlier) == 0 {
		return nil
	}
	return s.eng.View(ctx, func(tx storage.Tx) error {
		z := &authz{c: c, tx: tx, acct: acct, fs: fs}
		for _, d := range earlier {
			p, err := z.load(d)
			if err != nil {
				return err
			}
			if p != nil && !c.may(p.ACL, permR|permX) {
				return denied()
			}
		}
		return nil
	})
}

// recursiveTarget loads a path Set Access Control Recursive changes: the
// root directory ("") with its own access control, any other path as
// getPath does.
func recursiveTarget(tx storage.Tx, acct, fs, name string) (*Path, error) {
	if name != "" {
		return getPath(tx, true, acct, fs, name)
	}
	if err := containerExists(tx, acct, fs); err != nil {
		return nil, azerr.New(azerr.FilesystemNotFound)
	}
	a, err := rootACL(tx, acct, fs)
	if err != nil {
		return nil, err
	}
	return &Path{Dir: true, ACL: a}, nil
}

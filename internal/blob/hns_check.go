package blob

// ACL checks of Blob API operations on an HNS account.
//
// Every Blob operation on a path of an account with a hierarchical
// namespace is held to the POSIX ACLs, as on Azure's both endpoints. The
// check runs in the transaction of the operation it guards (checkPath,
// called first in the operation's closure), so an ACL change acknowledged
// before that transaction began is seen by it: a revoked permission lets
// no read, write, lease or listing through. Put Blob, Put Block List and
// Copy Blob check the create in namespaceWrite instead.

import (
	"context"
	"strings"

	"github.com/lazuli-storage/lazuli/storage"
)

// PathOp is the class of a Blob operation on a path, which decides the
// permission it needs.
type PathOp int

const (
	// OpStat reaches a path (properties): execute on every ancestor.
	OpStat PathOp = iota
	// OpRead reads a file's content, metadata, tags or block list: read
	// on it (read and execute on a directory).
	OpRead
	// OpWrite changes an existing path (content, properties, metadata,
	// tags, lease, tier, snapshot): write on it.
	OpWrite
	// OpCreate stages what will make or replace a path (Put Block): write
	// and execute on its parent, and write on a file it replaces.
	OpCreate
	// OpDelete removes a path: write and execute on its parent, and the
	// sticky bit rule.
	OpDelete
)

// checkPath checks op of ctx's caller on the path of ref in tx, the
// transaction of the operation. It passes for the superuser (and every
// caller of an account without a namespace, which carries none), when the
// container is missing and when the path is (the operation answers its
// own 404).
func checkPath(ctx context.Context, tx storage.Tx, ref Ref, op PathOp) error {
	z := authzFor(ctx, tx, ref.Account, ref.Container)
	if z == nil {
		return nil
	}
	if err := containerExists(tx, ref.Account, ref.Container); err != nil {
		return nil
	}
	name := strings.Trim(ref.Name, "/")
	switch op {
	case OpRead:
		p, err := z.load(name)
		if err != nil || p == nil {
			return err
		}
		want := permR
		if p.Dir {
			want |= permX
		}
		return z.access(name, want)
	case OpWrite:
		return z.access(name, permW)
	case OpCreate:
		b, err := getBlobNamed(tx, true, ref.Account, ref.Container, name)
		if err != nil {
			return err
		}
		return z.create(name, b)
	case OpDelete:
		p, err := z.load(name)
		if err != nil || p == nil {
			return err
		}
		return z.remove(p)
	}
	return z.access(name, 0)
}

// checkListing checks List Blobs with prefix in tx, its transaction: it
// lists the directory the prefix names (up to its last slash), which
// needs read and execute on it.
func checkListing(ctx context.Context, tx storage.Tx, acct, container, prefix string) error {
	dir := ""
	if i := strings.LastIndexByte(prefix, '/'); i >= 0 {
		dir = prefix[:i]
	}
	return checkPath(ctx, tx, Ref{Account: acct, Container: container, Name: dir}, OpRead)
}

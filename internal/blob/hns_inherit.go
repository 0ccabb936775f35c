package blob

// Default ACLs: what a new path takes from the directory it is made in.
//
// As ADLS (and HDFS, whose model it follows) does: when the parent has
// default entries, a new file gets them as its access ACL and a new
// directory gets them as both its access and its default ACL; the umask
// is then ignored, and the create mode (x-ms-permissions, else 0777 for a
// directory and 0666 for a file) caps the owner, mask (or owning group
// when there is no mask) and other entries. Named entries are kept; the
// mask limits them when access is evaluated. The owning group of a new
// path is the owning group of its parent.

import (
	"strings"

	"github.com/lazuli-storage/lazuli/storage"
)

// inherit returns the access control a new child of parent gets. ok is
// false when parent has no default entries (the umask rules apply then).
// mode is the create mode in symbolic form ("" for the default).
func inherit(parent PathACL, dir bool, mode string) (a PathACL, ok bool) {
	entries, err := parseACL(parent.AccessControl())
	if err != nil {
		return PathACL{}, false
	}
	var defs []aclEntry
	base := map[string]string{}
	for _, e := range entries {
		if e.def {
			defs = append(defs, e)
		} else if e.id == "" {
			base[e.scope] = e.p
		}
	}
	if len(defs) == 0 {
		return PathACL{}, false
	}
	if mode == "" {
		mode = "rw-rw-rw-"
		if dir {
			mode = "rwxrwxrwx"
		}
	}
	mode = strings.NewReplacer("t", "x", "T", "-").Replace(mode)
	// A default ACL without a base entry takes it from the parent's
	// access entries, as HDFS completes a partial default ACL.
	var access []aclEntry
	have := map[string]bool{}
	hasMask := false
	for _, e := range defs {
		e.def = false
		if e.id == "" {
			have[e.scope] = true
		}
		hasMask = hasMask || e.scope == "mask"
		access = append(access, e)
	}
	for _, scope := range []string{"user", "group", "other"} {
		if !have[scope] {
			access = append(access, aclEntry{scope: scope, p: base[scope]})
			defs = append(defs, aclEntry{def: true, scope: scope, p: base[scope]})
		}
	}
	for i, e := range access {
		if e.id != "" {
			continue
		}
		switch {
		case e.scope == "user":
			access[i].p = andPerms(e.p, mode[0:3])
		case e.scope == "mask" || (e.scope == "group" && !hasMask):
			access[i].p = andPerms(e.p, mode[3:6])
		case e.scope == "other":
			access[i].p = andPerms(e.p, mode[6:9])
		}
	}
	if dir {
		access = append(access, defs...)
	}
	a = PathACL{Owner: Superuser, Group: parent.Group}
	if err := a.SetACL(joinEntries(access)); err != nil {
		return PathACL{}, false
	}
	return a, true
}

// andPerms keeps the permissions of p that q also grants.
func andPerms(p, q string) string {
	b := []byte(p)
	for i := range b {
		if q[i] == '-' {
			b[i] = '-'
		}
	}
	return string(b)
}

// parentACL is the access control of the directory a new path is made
// in (the root's own for a path at the top); ok is false when the parent
// has no record.
func parentACL(tx storage.Tx, acct, c, name string) (PathACL, bool, error) {
	parent := parentOf(name)
	if parent == "" {
		a, err := rootACL(tx, acct, c)
		return a, err == nil, err
	}
	b, err := getBlobNamed(tx, true, acct, c, parent)
	if err != nil || b == nil {
		return PathACL{}, false, err
	}
	a, err := loadACL(tx, acct, c, b)
	return a, err == nil, err
}

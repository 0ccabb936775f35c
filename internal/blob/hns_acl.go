package blob

import (
	"strconv"
	"strings"

	"github.com/lazuli-storage/lazuli/internal/azerr"
)

// ParsePermissions reads x-ms-permissions: nine symbolic characters
// (rwxr-x---, the last t or T with the sticky bit) or four octal digits
// (0750, 1777 with the sticky bit). It returns the symbolic form.
func ParsePermissions(s string) (string, error) {
	if len(s) == 4 {
		n, err := strconv.ParseUint(s, 8, 16)
		if err != nil {
			return "", azerr.New(azerr.InvalidPermission)
		}
		return symbolic(uint16(n)), nil
	}
	if len(s) == 10 && s[9] == '+' {
		s = s[:9]
	}
	if len(s) != 9 {
		return "", azerr.New(azerr.InvalidPermission)
	}
	for i := 0; i < 9; i++ {
		c := s[i]
		ok := c == '-' || c == "rwx"[i%3]
		if i == 8 && (c == 't' || c == 'T') {
			ok = true
		}
		if !ok {
			return "", azerr.New(azerr.InvalidPermission)
		}
	}
	return s, nil
}

// octal is the mode bits of a symbolic permission string.
func octal(sym string) uint16 {
	var n uint16
	for i := 0; i < 9; i++ {
		c := sym[i]
		if c != '-' && c != 'T' {
			n |= 1 << (8 - i)
		}
		if c == 't' || c == 'T' {
			n |= 0o1000
		}
	}
	return n
}

// symbolic renders mode bits (with the sticky bit 01000) as rwxr-x---.
func symbolic(n uint16) string {
	b := []byte("---------")
	for i := 0; i < 9; i++ {
		if n&(1<<(8-i)) != 0 {
			b[i] = "rwx"[i%3]
		}
	}
	if n&0o1000 != 0 {
		if b[8] == 'x' {
			b[8] = 't'
		} else {
			b[8] = 'T'
		}
	}
	return string(b)
}

// ApplyUmask is p & ^umask for a four-digit octal umask.
func ApplyUmask(sym, umask string) (string, error) {
	if umask == "" {
		return sym, nil
	}
	u, err := strconv.ParseUint(umask, 8, 16)
	if err != nil || len(umask) != 4 {
		return "", azerr.InvalidValue(InputUmask, umask)
	}
	return symbolic(octal(sym) &^ uint16(u&0o777)), nil
}

// aclEntry is one entry of an ACL: [default:]scope:[id]:perms.
type aclEntry struct {
	def          bool
	scope, id, p string
}

// parseACL checks an ACL string and splits it into entries.
func parseACL(s string) ([]aclEntry, error) {
	var out []aclEntry
	for _, raw := range strings.Split(s, ",") {
		parts := strings.Split(strings.TrimSpace(raw), ":")
		var e aclEntry
		if len(parts) == 4 && parts[0] == "default" {
			e.def, parts = true, parts[1:]
		}
		if len(parts) != 3 {
			return nil, azerr.New(azerr.InvalidAccessControlList)
		}
		e.scope, e.id, e.p = parts[0], parts[1], parts[2]
		switch e.scope {
		case "user", "group":
		case "mask", "other":
			if e.id != "" {
				return nil, azerr.New(azerr.InvalidAccessControlList)
			}
		default:
			return nil, azerr.New(azerr.InvalidAccessControlList)
		}
		if len(e.p) != 3 || (e.p[0] != 'r' && e.p[0] != '-') || (e.p[1] != 'w' && e.p[1] != '-') || (e.p[2] != 'x' && e.p[2] != '-') {
			return nil, azerr.New(azerr.InvalidAccessControlList)
		}
		out = append(out, e)
	}
	return out, nil
}

// SetACL replaces the ACL of a: the owner, owning group (or mask) and
// other entries become its permission bits, the sticky bit stays.
func (a *PathACL) SetACL(s string) error {
	entries, err := parseACL(s)
	if err != nil {
		return err
	}
	bits := map[string]string{}
	for _, e := range entries {
		if !e.def && e.id == "" {
			bits[e.scope] = e.p
		}
	}
	group := bits["group"]
	if m, ok := bits["mask"]; ok {
		group = m
	}
	if bits["user"] == "" || group == "" || bits["other"] == "" {
		return azerr.New(azerr.InvalidAccessControlList)
	}
	sticky := a.Permissions != "" && octal(a.Permissions)&0o1000 != 0
	n := octal(bits["user"] + group + bits["other"])
	if sticky {
		n |= 0o1000
	}
	a.Permissions, a.ACL = symbolic(n), s
	return nil
}

// SetPermissions replaces the permission bits of a and the matching base
// entries of its ACL.
func (a *PathACL) SetPermissions(sym string) {
	a.Permissions = sym
	if a.ACL == "" {
		return
	}
	entries, err := parseACL(a.ACL)
	if err != nil {
		a.ACL = ""
		return
	}
	hasMask := false
	for _, e := range entries {
		if !e.def && e.scope == "mask" {
			hasMask = true
		}
	}
	parts := make([]string, len(entries))
	for i, e := range entries {
		if !e.def && e.id == "" {
			switch {
			case e.scope == "user":
				e.p = sym[0:3]
			case e.scope == "mask" || (e.scope == "group" && !hasMask):
				e.p = sym[3:6]
			case e.scope == "other":
				e.p = strings.NewReplacer("t", "x", "T", "-").Replace(sym[6:9])
			}
		}
		parts[i] = e.String()
	}
	a.ACL = strings.Join(parts, ",")
}

func (e aclEntry) String() string {
	s := e.scope + ":" + e.id + ":" + e.p
	if e.def {
		return "default:" + s
	}
	return s
}

// Extended reports whether the access ACL has entries beyond owner,
// owning group and other (Azure then ends x-ms-permissions with +).
func (a *PathACL) Extended() bool {
	entries, _ := parseACL(a.ACL)
	for _, e := range entries {
		if !e.def && (e.id != "" || e.scope == "mask") {
			return true
		}
	}
	return false
}

// AccessControl is the x-ms-acl of a: its stored ACL, or the one its
// permission bits make.
func (a *PathACL) AccessControl() string {
	if a.ACL != "" {
		return a.ACL
	}
	p := a.Permissions
	other := strings.NewReplacer("t", "x", "T", "-").Replace(p[6:9])
	return "user::" + p[0:3] + ",group::" + p[3:6] + ",other::" + other
}

// entryKey identifies an ACL entry for modify and remove: default flag,
// scope and id.
func (e aclEntry) key() string {
	k := e.scope + ":" + e.id
	if e.def {
		return "default:" + k
	}
	return k
}

// EditACL applies a Set Access Control Recursive mode to a: "set"
// replaces the ACL, "modify" replaces or adds the given entries, "remove"
// drops the entries named (without permissions). A file takes no default
// entries.
func (a *PathACL) EditACL(mode, acl string, dir bool) error {
	switch mode {
	case "set":
		entries, err := parseACL(acl)
		if err != nil {
			return err
		}
		return a.SetACL(joinEntries(accessOnly(entries, dir)))
	case "modify":
		add, err := parseACL(acl)
		if err != nil {
			return err
		}
		cur, err := parseACL(a.AccessControl())
		if err != nil {
			return err
		}
		for _, e := range accessOnly(add, dir) {
			replaced := false
			for i := range cur {
				if cur[i].key() == e.key() {
					cur[i], replaced = e, true
				}
			}
			if !replaced {
				cur = append(cur, e)
			}
		}
		return a.SetACL(joinEntries(cur))
	case "remove":
		drop := map[string]bool{}
		for _, raw := range strings.Split(acl, ",") {
			parts := strings.Split(strings.TrimSpace(raw), ":")
			def := len(parts) > 0 && parts[0] == "default"
			if def {
				parts = parts[1:]
			}
			if len(parts) < 1 || len(parts) > 2 || parts[0] == "" {
				return azerr.New(azerr.InvalidAccessControlList)
			}
			e := aclEntry{def: def, scope: parts[0]}
			if len(parts) == 2 {
				e.id = parts[1]
			}
			if e.id == "" && e.scope != "mask" && !e.def {
				// The base entries cannot be removed.
				return azerr.New(azerr.InvalidAccessControlList)
			}
			drop[e.key()] = true
		}
		cur, err := parseACL(a.AccessControl())
		if err != nil {
			return err
		}
		var keep []aclEntry
		for _, e := range cur {
			if !drop[e.key()] {
				keep = append(keep, e)
			}
		}
		return a.SetACL(joinEntries(keep))
	}
	return azerr.InvalidQuery("mode", mode, "")
}

func accessOnly(entries []aclEntry, dir bool) []aclEntry {
	if dir {
		return entries
	}
	out := entries[:0:0]
	for _, e := range entries {
		if !e.def {
			out = append(out, e)
		}
	}
	return out
}

func joinEntries(entries []aclEntry) string {
	parts := make([]string, len(entries))
	for i, e := range entries {
		parts[i] = e.String()
	}
	return strings.Join(parts, ",")
}

package blob

import (
	"context"
	"encoding/binary"
	"errors"
	"sync"

	"github.com/lazuli-storage/lazuli/storage"
)

// User principal names. With upn=true Azure's Data Lake API answers the
// object ids of users as their user principal names, which it finds in
// the tenant's directory. lazuli has no directory: it learns each user's
// name from the OAuth tokens it accepts (the token's oid and its upn
// claim) and keeps the pairs per account in the engine, so that every
// instance on a shared engine translates what any of them learned.
//
// Tokens are not signature-checked under --oauth basic, so a client can
// mint any number of object ids: an account keeps at most MaxUPNs pairs
// (later users are not recorded; a recorded user's new name still is),
// and names or ids longer than MaxUPNLength, special names and names that
// would not fit a header or an ACL entry are not recorded.

// kindUPN: U account "n" -> count of pairs (uint64, big endian);
// U account "u" oid -> user principal name.
const kindUPN = 'U'

const (
	// MaxUPNs is how many user principal names an account keeps.
	MaxUPNs = 10000
	// MaxUPNLength caps the length of a recorded object id and name
	// (Entra ID's own limit on a user principal name is 113 characters).
	MaxUPNLength = 256
)

func upnKey(acct, oid string) []byte { return tupleKey(kindUPN, acct, "u", oid) }
func upnCountKey(acct string) []byte { return tupleKey(kindUPN, acct, "n") }

// upnCache is what each account's engine records are known to hold: the
// pairs this instance has read or written, and whether the account is
// full. It never holds more than MaxUPNs pairs per account.
type upnCache struct {
	mu    sync.Mutex
	accts map[string]*acctUPNs
	// limit replaces MaxUPNs in tests (0: MaxUPNs).
	limit int
}

func (c *upnCache) max() int {
	if c.limit > 0 {
		return c.limit
	}
	return MaxUPNs
}

type acctUPNs struct {
	known map[string]string
	full  bool
}

func (c *upnCache) acct(acct string) *acctUPNs {
	if c.accts == nil {
		c.accts = map[string]*acctUPNs{}
	}
	a := c.accts[acct]
	if a == nil {
		a = &acctUPNs{known: map[string]string{}}
		c.accts[acct] = a
	}
	return a
}

// LearnUPN records that the user with object id oid has the user
// principal name upn in acct. It writes only when the pair is new or the
// name changed (what is stored is cached), and not at all for an account
// that holds MaxUPNs pairs already (for a user it holds no name of), for
// empty values and for values longer than MaxUPNLength.
func (s *Service) LearnUPN(ctx context.Context, acct, oid, upn string) error {
	if !upnID(oid) || !upnName(upn) || oid == upn {
		return nil
	}
	s.upns.mu.Lock()
	a := s.upns.acct(acct)
	stored, ok := a.known[oid]
	skip := (ok && stored == upn) || (!ok && a.full)
	s.upns.mu.Unlock()
	if skip {
		return nil
	}
	recorded, full := false, false
	err := s.eng.Update(ctx, func(tx storage.Tx) error {
		recorded, full = false, false
		v, err := tx.Get(upnKey(acct, oid))
		switch {
		case err == nil:
			recorded = true
			if string(v) == upn {
				return nil
			}
			return tx.Set(upnKey(acct, oid), []byte(upn))
		case !errors.Is(err, storage.ErrNotFound):
			return err
		}
		n := uint64(0)
		if c, err := tx.Get(upnCountKey(acct)); err == nil && len(c) == 8 {
			n = binary.BigEndian.Uint64(c)
		} else if err != nil && !errors.Is(err, storage.ErrNotFound) {
			return err
		}
		if n >= uint64(s.upns.max()) {
			full = true
			return nil
		}
		if err := tx.Set(upnKey(acct, oid), []byte(upn)); err != nil {
			return err
		}
		recorded = true
		return tx.Set(upnCountKey(acct), binary.BigEndian.AppendUint64(nil, n+1))
	})
	if err != nil {
		return err
	}
	s.upns.mu.Lock()
	defer s.upns.mu.Unlock()
	a = s.upns.acct(acct)
	if recorded {
		a.known[oid] = upn
	}
	if full {
		a.full = true
	}
	return nil
}

// upnID reports whether id may name a user: not empty, not too long, and
// not one of the special names ($superuser and the like).
func upnID(id string) bool {
	return id != "" && len(id) <= MaxUPNLength && id[0] != '$'
}

// upnName reports whether name may be recorded as a user principal name:
// printable ASCII without spaces, commas or colons (a name goes into
// headers and into ACL entries, whose fields those separate), not too
// long. Entra ID's user principal names are of that form.
func upnName(name string) bool {
	if name == "" || len(name) > MaxUPNLength || name[0] == '$' {
		return false
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; c <= ' ' || c >= 0x7f || c == ',' || c == ':' {
			return false
		}
	}
	return true
}

// UPNs returns the user principal names recorded in acct for those of
// ids that have one, read from the engine (what another instance learned
// counts at once) in one read of every key.
func (s *Service) UPNs(ctx context.Context, acct string, ids []string) (map[string]string, error) {
	var want []string
	var keys [][]byte
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		if upnID(id) && !seen[id] {
			seen[id] = true
			want = append(want, id)
			keys = append(keys, upnKey(acct, id))
		}
	}
	out := map[string]string{}
	if len(keys) == 0 {
		return out, nil
	}
	err := s.eng.View(ctx, func(tx storage.Tx) error {
		clear(out)
		vs, err := storage.GetMany(tx, keys)
		if err != nil {
			return err
		}
		for i, v := range vs {
			if v != nil {
				out[want[i]] = string(v)
			}
		}
		return nil
	})
	return out, err
}

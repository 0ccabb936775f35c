package smb

import "testing"

// A lease keeps the version of the open that created it: a v1 request
// of a v2 lease is answered in the v2 form with its epoch, a v2 request
// of a v1 lease in the v1 form (smbtorture smb2.lease.v2_epoch2 and
// v2_epoch3).
func TestLeaseAnsweredInItsVersion(t *testing.T) {
	key := [16]byte{1}
	for _, c := range []struct {
		reqV2   bool
		version uint8
		size    int
	}{
		{false, 2, 52}, {true, 1, 32}, {true, 2, 52}, {false, 1, 32},
		// No lease granted: the request's form.
		{true, 0, 52}, {false, 0, 32},
	} {
		cr := &CacheRequest{Key: key, V2: c.reqV2, State: LeaseRead | LeaseHandle}
		g := Cache{Key: key, Version: c.version, State: LeaseRead | LeaseHandle, Epoch: 7}
		if c.version == 0 {
			g = Cache{}
		}
		level, cc := grantContext(cr, g)
		if level != OplockLease || cc == nil || len(cc.Data) != c.size {
			t.Fatalf("v2 request %v, lease version %d: level %#x, context of %d bytes, want %d", c.reqV2, c.version, level, len(cc.Data), c.size)
		}
		if c.size == 52 && c.version != 0 && le.Uint16(cc.Data[48:]) != 7 {
			t.Fatalf("v2 request %v, lease version %d: epoch %d, want 7", c.reqV2, c.version, le.Uint16(cc.Data[48:]))
		}
	}
}

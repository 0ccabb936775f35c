package smb_test

import (
	"testing"

	"github.com/lazuli-storage/lazuli/internal/smb/smbtest"
	"github.com/lazuli-storage/lazuli/internal/smb/wire"
)

const (
	statusInternalError      = 0xC00000E5
	statusObjectNameNotFound = 0xC0000034
)

// queryBasicBody is a QUERY_INFO request of FileBasicInformation.
func queryBasicBody(fid wire.FileID) []byte {
	b := make([]byte, 41)
	le.PutUint16(b, 41)
	b[2], b[3] = wire.InfoFile, 4
	le.PutUint32(b[4:], 4096)
	le.PutUint64(b[24:], fid.Persistent)
	le.PutUint64(b[32:], fid.Volatile)
	return b
}

// TestCompoundChains pins how Windows answers two chains smbtorture
// checks (smb2.compound.related9, interim2): requests related to a
// chain's first request, itself related to nothing, fail as it does
// (INVALID_PARAMETER), even those naming an open of their own, which stays
// open; and a request that would go async (CHANGE_NOTIFY, a blocking
// LOCK) while others follow it fails with INTERNAL_ERROR rather than hold
// the chain, the requests after it still answered.
func TestCompoundChains(t *testing.T) {
	engines(t, func(t *testing.T, e *env) {
		c, other := e.smb(t), e.smb(t)
		dir, st := c.Create("d", readData|writeData, shareR|shareW|shareD, openIf, dirFile)
		if st != 0 {
			t.Fatalf("create: %#x", st)
		}
		hs, _, err := c.CompoundFlags([]bool{true, true}, []uint16{wire.ChangeNotify, wire.Close},
			[][]byte{notifyBody(dir, 0, 4096, 1), closeBody(dir)})
		must(t, err)
		if hs[0].Status != statusInvalidParameter || hs[1].Status != statusInvalidParameter {
			t.Errorf("a chain related from its start: %#x, %#x; want INVALID_PARAMETER twice", hs[0].Status, hs[1].Status)
		}
		if _, st := c.QueryInfo(dir, wire.InfoFile, 4, 0, 40); st != 0 {
			t.Errorf("the open the refused CLOSE named: %#x", st)
		}

		bogus := wire.FileID{Persistent: ^uint64(0), Volatile: ^uint64(0)}
		create := smbtest.CreateBody("d2", readData|writeData, shareR|shareW|shareD, openIf, dirFile)
		hs, _, err = c.Compound(true, []uint16{wire.Create, wire.ChangeNotify, wire.QueryInfo},
			[][]byte{create, notifyBody(bogus, 0, 4096, 1), queryBasicBody(bogus)})
		must(t, err)
		if hs[0].Status != 0 || hs[1].Status != statusInternalError || hs[2].Status != 0 {
			t.Errorf("CREATE, CHANGE_NOTIFY, QUERY_INFO: %#x, %#x, %#x; want SUCCESS, INTERNAL_ERROR, SUCCESS",
				hs[0].Status, hs[1].Status, hs[2].Status)
		}

		f, _ := c.Create("locked.txt", readData|writeData, shareR|shareW|shareD, openIf, nonDir)
		g, _ := other.Create("locked.txt", readData|writeData, shareR|shareW|shareD, openOnly, nonDir)
		if st := other.Lock(g, 0, 10, wire.LockExclusive|wire.LockFailImmediately); st != 0 {
			t.Fatalf("lock: %#x", st)
		}
		hs, _, err = c.Compound(false, []uint16{wire.Lock, wire.QueryInfo},
			[][]byte{lockBody(f, [3]uint64{0, 10, uint64(wire.LockExclusive)}), queryBasicBody(f)})
		must(t, err)
		if hs[0].Status != statusInternalError || hs[1].Status != 0 {
			t.Errorf("a blocking LOCK with a request after it: %#x, %#x; want INTERNAL_ERROR, SUCCESS", hs[0].Status, hs[1].Status)
		}
	})
}

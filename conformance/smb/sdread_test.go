package smb_test

import (
	"testing"

	"github.com/lazuli-storage/lazuli/internal/smb/smbtest"
	"github.com/lazuli-storage/lazuli/internal/smb/wire"
)

// TestSecurityQueryNeedsReadControl: QUERY_INFO of a security descriptor's
// owner, group or DACL needs an open with READ_CONTROL (ACCESS_DENIED
// without it, as Windows answers; smbtorture smb2.sdread); one asking for
// none of them gets a descriptor without them.
func TestSecurityQueryNeedsReadControl(t *testing.T) {
	engines(t, func(t *testing.T, e *env) {
		e.createFile(t, "sd.txt", nil)
		c := e.smb(t)
		attrsOnly, st := c.Create("sd.txt", readAttrs, shareR|shareW|shareD, openOnly, nonDir)
		if st != 0 {
			t.Fatalf("open: %#x", st)
		}
		for _, info := range []uint32{1, 2, 4} {
			if _, st := c.QueryInfo(attrsOnly, wire.InfoSecurity, 0, info, 4096); st != smbtest.StatusAccessDenied {
				t.Errorf("security information %#x without READ_CONTROL: %#x, want ACCESS_DENIED", info, st)
			}
		}
		sd, st := c.QueryInfo(attrsOnly, wire.InfoSecurity, 0, 0, 4096)
		if st != 0 || len(sd) < 20 || le.Uint32(sd[4:]) != 0 || le.Uint32(sd[8:]) != 0 || le.Uint32(sd[16:]) != 0 {
			t.Errorf("no security information asked: %#x %x, want a descriptor without owner, group or DACL", st, sd)
		}
		rc, _ := c.Create("sd.txt", 0x00020000, shareR|shareW|shareD, openOnly, nonDir) // READ_CONTROL
		if _, st := c.QueryInfo(rc, wire.InfoSecurity, 0, 7, 4096); st != 0 {
			t.Errorf("owner, group and DACL with READ_CONTROL: %#x", st)
		}
	})
}

package smb_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/smb/smbtest"
	"github.com/lazuli-storage/lazuli/internal/smb/wire"
)

// TestPreviousVersions: a CREATE with a timewarp context ("TWrp", what
// Explorer's Previous Versions sends) opens the file as it was in the
// share snapshot taken at that time, read-only; a time no snapshot was
// taken at is OBJECT_NAME_NOT_FOUND (smbtorture smb2.create.blob).
func TestPreviousVersions(t *testing.T) {
	engines(t, func(t *testing.T, e *env) {
		f := e.createFile(t, "doc.txt", []byte("first draft"))
		snap, err := e.share.CreateSnapshot(ctx(t), nil)
		must(t, err)
		_, err = f.UploadRange(ctx(t), 0, body([]byte("FINAL")), nil)
		must(t, err)
		at, err := time.Parse(time.RFC3339Nano, *snap.Snapshot)
		must(t, err)
		twrp := func(t time.Time) []byte {
			return le.AppendUint64(nil, uint64(t.UnixNano()/100+116444736000000000))
		}
		c := e.smb(t)
		open := func(access uint32, when time.Time) (wire.FileID, uint32) {
			b := withContext(smbtest.CreateBody("doc.txt", access, shareR|shareW|shareD, openOnly, nonDir), "TWrp", twrp(when))
			h, resp, err := c.Do(wire.Create, b)
			must(t, err)
			if h.Status != 0 {
				return wire.FileID{}, h.Status
			}
			r := resp[wire.HeaderSize:]
			return wire.FileID{Persistent: le.Uint64(r[64:]), Volatile: le.Uint64(r[72:])}, 0
		}
		fid, st := open(readData, at)
		if st != 0 {
			t.Fatalf("open of the previous version: %#x", st)
		}
		if got, st := c.Read(fid, 0, 100); st != 0 || !bytes.Equal(got, []byte("first draft")) {
			t.Fatalf("the previous version reads %q (%#x), want the snapshot's bytes", got, st)
		}
		for _, access := range []uint32{readData, readData | writeData} {
			if _, st := open(access, at.Add(-time.Hour)); st != statusObjectNameNotFound {
				t.Errorf("a time without a snapshot (access %#x): %#x, want OBJECT_NAME_NOT_FOUND", access, st)
			}
		}
		for _, access := range []uint32{readData | writeData, readData | writeAttrs, readData | 0x00040000 /* WRITE_DAC */} {
			if _, st := open(access, at); st != smbtest.StatusAccessDenied {
				t.Errorf("the previous version opened with access %#x: %#x, want ACCESS_DENIED", access, st)
			}
		}
		// MAXIMUM_ALLOWED opens it for reading only: its attributes stay.
		mx, st := open(0x02000000, at)
		if st != 0 {
			t.Fatalf("the previous version opened with MAXIMUM_ALLOWED: %#x", st)
		}
		basic := make([]byte, 40)
		le.PutUint32(basic[32:], attrHidden)
		if st := c.SetInfo(mx, wire.InfoFile, 4, 0, basic); st != smbtest.StatusAccessDenied {
			t.Errorf("attributes set through a MAXIMUM_ALLOWED open of a previous version: %#x, want ACCESS_DENIED", st)
		}
		if st, _ := ioctl(t, c, mx, fsctlSetSparse, nil, 0); st != smbtest.StatusAccessDenied {
			t.Errorf("FSCTL_SET_SPARSE on a previous version: %#x, want ACCESS_DENIED", st)
		}
		live, _ := c.Create("doc.txt", readData, shareR|shareW|shareD, openOnly, nonDir)
		if got, _ := c.Read(live, 0, 5); !bytes.Equal(got, []byte("FINAL")) {
			t.Fatalf("the live file reads %q", got)
		}
	})
}

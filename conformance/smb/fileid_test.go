package smb_test

import (
	"strconv"
	"testing"

	"github.com/lazuli-storage/lazuli/internal/smb/smbtest"
	"github.com/lazuli-storage/lazuli/internal/smb/wire"
)

// listedFileID lists the directory dir has open with
// FileIdBothDirectoryInformation for exactly name and returns the entry's
// FileId.
func listedFileID(t *testing.T, c *smbtest.Client, dir wire.FileID, name string) uint64 {
	t.Helper()
	pattern := wire.AppendUTF16(nil, name)
	b := make([]byte, 32)
	le.PutUint16(b, 33)
	b[2] = 37       // FileIdBothDirectoryInformation
	b[3] = 1 | 0x10 // SMB2_RESTART_SCANS | SMB2_REOPEN
	le.PutUint64(b[8:], dir.Persistent)
	le.PutUint64(b[16:], dir.Volatile)
	le.PutUint16(b[24:], wire.HeaderSize+32)
	le.PutUint16(b[26:], uint16(len(pattern)))
	le.PutUint32(b[28:], 4096)
	h, resp, err := c.Do(wire.QueryDirectory, append(b, pattern...))
	must(t, err)
	if h.Status != 0 {
		t.Fatalf("list %s: %#x", name, h.Status)
	}
	out := resp[le.Uint16(resp[wire.HeaderSize+2:]):]
	return le.Uint64(out[96:])
}

// TestFileIDsAgree: a file's id is one number wherever it shows, as on
// Azure Files: REST's x-ms-file-id, SMB's QFid create context,
// FileInternalInformation, FileIdInformation (with the volume serial
// number FileFsVolumeInformation reports) and a
// FileIdBothDirectoryInformation listing; it stays the same across opens,
// names of another case and renames by either protocol.
func TestFileIDsAgree(t *testing.T) {
	engines(t, func(t *testing.T, e *env) {
		f := e.createFile(t, "id.txt", []byte("x"))
		p, err := f.GetProperties(ctx(t), nil)
		must(t, err)
		want, err := strconv.ParseUint(*p.ID, 10, 64)
		must(t, err)
		c := e.smb(t)
		root, st := c.Create("", readData, shareR|shareW|shareD, openOnly, 1)
		if st != 0 {
			t.Fatalf("open root: %#x", st)
		}
		vol, st := c.QueryInfo(root, wire.InfoFilesystem, 1, 0, 4096) // FileFsVolumeInformation
		if st != 0 || len(vol) < 12 {
			t.Fatalf("volume information: %#x", st)
		}
		serial := le.Uint32(vol[8:])
		check := func(name string) {
			t.Helper()
			g := create(t, c, withContexts(createBody(name, readAttrs, shareR|shareW|shareD, 0), createContext{"QFid", nil}))
			if g.status != 0 || len(g.contexts["QFid"]) != 32 {
				t.Fatalf("open %s with QFid: %#x %x", name, g.status, g.contexts["QFid"])
			}
			defer c.CloseFile(g.fid)
			q := g.contexts["QFid"]
			if got := le.Uint64(q); got != want || le.Uint64(q[8:]) != uint64(serial) {
				t.Fatalf("%s: QFid file id %d volume %#x, want %d and %#x", name, got, le.Uint64(q[8:]), want, serial)
			}
			in, st := c.QueryInfo(g.fid, wire.InfoFile, 6, 0, 8) // FileInternalInformation
			if st != 0 || le.Uint64(in) != want {
				t.Fatalf("%s: FileInternalInformation %x %#x, want %d", name, in, st, want)
			}
			id, st := c.QueryInfo(g.fid, wire.InfoFile, 59, 0, 24) // FileIdInformation
			if st != 0 || le.Uint64(id) != uint64(serial) || le.Uint64(id[8:]) != want || le.Uint64(id[16:]) != 0 {
				t.Fatalf("%s: FileIdInformation %x %#x, want volume %#x and id %d", name, id, st, serial, want)
			}
			if got := listedFileID(t, c, root, name); got != want {
				t.Fatalf("%s: listed with id %d, want %d", name, got, want)
			}
		}
		check("id.txt")
		check("ID.TXT")
		if _, err := f.Rename(ctx(t), "renamed.txt", nil); err != nil {
			t.Fatal(err)
		}
		check("renamed.txt")
		g := create(t, c, createBody("renamed.txt", deleteAcc, shareR|shareW|shareD, 0))
		if g.status != 0 {
			t.Fatalf("open for rename: %#x", g.status)
		}
		if st := rename(c, g.fid, "again.txt"); st != 0 {
			t.Fatalf("SMB rename: %#x", st)
		}
		c.CloseFile(g.fid)
		check("again.txt")
		p, err = e.file("again.txt").GetProperties(ctx(t), nil)
		if err != nil || *p.ID != strconv.FormatUint(want, 10) {
			t.Fatalf("x-ms-file-id after the renames: %v %v, want %d", p.ID, err, want)
		}
	})
}

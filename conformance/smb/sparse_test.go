package smb_test

import (
	"bytes"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"

	"github.com/lazuli-storage/lazuli/internal/smb/smbtest"
	"github.com/lazuli-storage/lazuli/internal/smb/wire"
)

// FSCTLs of sparse files and their statuses.
const (
	fsctlSetSparse            = 0x000900C4
	fsctlSetZeroData          = 0x000980C8
	fsctlQueryAllocatedRanges = 0x000940CF
	fsctlFileLevelTrim        = 0x00098208
	attrSparse                = 0x200
	writeAttrs                = 0x100
	writeEA                   = 0x10
	statusBufferTooSmall      = 0xC0000023
)

// allocated asks FSCTL_QUERY_ALLOCATED_RANGES for [off, off+n) and
// returns the ranges as (offset, length) pairs.
func allocated(t *testing.T, c *smbtest.Client, fid wire.FileID, off, n uint64) [][2]uint64 {
	t.Helper()
	in := le.AppendUint64(le.AppendUint64(nil, off), n)
	st, out := ioctl(t, c, fid, fsctlQueryAllocatedRanges, in, 1024)
	if st != 0 {
		t.Fatalf("FSCTL_QUERY_ALLOCATED_RANGES %d+%d: %#x", off, n, st)
	}
	var rs [][2]uint64
	for ; len(out) >= 16; out = out[16:] {
		rs = append(rs, [2]uint64{le.Uint64(out), le.Uint64(out[8:])})
	}
	return rs
}

// attributes returns FileAttributes of FileBasicInformation.
func attributes(t *testing.T, c *smbtest.Client, fid wire.FileID) uint32 {
	t.Helper()
	b, st := c.QueryInfo(fid, wire.InfoFile, 4, 0, 40)
	if st != 0 || len(b) < 36 {
		t.Fatalf("FileBasicInformation: %#x", st)
	}
	return le.Uint32(b[32:])
}

// TestSparseFiles: FSCTL_SET_SPARSE marks a file sparse (the volume says
// it supports sparse files); FSCTL_QUERY_ALLOCATED_RANGES then reports the
// ranges written and not cleared, which are those REST's List Ranges
// reports, and the whole range for a file that is not sparse;
// FSCTL_SET_ZERO_DATA is Clear Range (REST reads zeros and lists the hole),
// leaves bytes past the end alone, and meets other opens' byte-range
// locks; the rights each needs are checked; REST's Set File Properties
// neither shows nor clears the attribute.
func TestSparseFiles(t *testing.T) {
	engines(t, func(t *testing.T, e *env) {
		c, other := e.smb(t), e.smb(t)
		all := uint32(0x001F01FF)
		fid, st := c.Create("sparse.bin", all, shareR|shareW|shareD, openIf, nonDir)
		if st != 0 {
			t.Fatalf("create: %#x", st)
		}
		fs, st := c.QueryInfo(fid, wire.InfoFilesystem, 5, 0, 1024) // FileFsAttributeInformation
		if st != 0 || le.Uint32(fs)&0x40 == 0 {
			t.Fatalf("FileFsAttributeInformation: %#x %x, want FILE_SUPPORTS_SPARSE_FILES", st, fs)
		}
		data := bytes.Repeat([]byte("0123456789abcdef"), 8192) // 128 KiB
		if st := c.Write(fid, 0, data); st != 0 {
			t.Fatalf("write: %#x", st)
		}
		// Not sparse: everything up to the end of the file is allocated.
		if got := allocated(t, c, fid, 1, 1<<20); len(got) != 1 || got[0] != [2]uint64{1, 128<<10 - 1} {
			t.Fatalf("ranges of a file that is not sparse: %v", got)
		}
		if st, _ := ioctl(t, c, fid, fsctlSetSparse, []byte{1}, 0); st != 0 {
			t.Fatalf("FSCTL_SET_SPARSE: %#x", st)
		}
		if a := attributes(t, c, fid); a&attrSparse == 0 {
			t.Fatalf("attributes after FSCTL_SET_SPARSE: %#x", a)
		}
		zero := func(off, beyond uint64) uint32 {
			st, _ := ioctl(t, c, fid, fsctlSetZeroData, le.AppendUint64(le.AppendUint64(nil, off), beyond), 0)
			return st
		}
		if st := zero(64<<10, 200<<10); st != 0 {
			t.Fatalf("FSCTL_SET_ZERO_DATA: %#x", st)
		}
		if got := allocated(t, c, fid, 0, 1<<20); len(got) != 1 || got[0] != [2]uint64{0, 64 << 10} {
			t.Fatalf("ranges after zeroing the second half: %v", got)
		}
		f := e.file("sparse.bin")
		props, err := f.GetProperties(ctx(t), nil)
		must(t, err)
		if *props.ContentLength != 128<<10 {
			t.Fatalf("zeroing past the end resized the file to %d", *props.ContentLength)
		}
		want := append(append([]byte(nil), data[:64<<10]...), make([]byte, 64<<10)...)
		if got := restBytes(t, f); !bytes.Equal(got, want) {
			t.Fatalf("REST reads other bytes than the zeroed file's")
		}
		rl, err := f.GetRangeList(ctx(t), nil)
		must(t, err)
		if len(rl.Ranges) != 1 || *rl.Ranges[0].Start != 0 || *rl.Ranges[0].End != 64<<10-1 {
			t.Fatalf("List Ranges after FSCTL_SET_ZERO_DATA: %+v", rl.Ranges)
		}
		// A write makes a range allocated again; one REST clears is not.
		if st := c.Write(fid, 100<<10, []byte("hello")); st != 0 {
			t.Fatalf("write: %#x", st)
		}
		_, err = f.ClearRange(ctx(t), file.HTTPRange{Offset: 0, Count: 4096}, nil)
		must(t, err)
		if got := allocated(t, c, fid, 0, 1<<20); len(got) != 2 || got[0] != [2]uint64{4096, 60 << 10} || got[1] != [2]uint64{100 << 10, 5} {
			t.Fatalf("ranges after a write and a REST Clear Range: %v", got)
		}
		// REST setting attributes keeps the file sparse.
		_, err = f.SetHTTPHeaders(ctx(t), &file.SetHTTPHeadersOptions{SMBProperties: &file.SMBProperties{Attributes: &file.NTFSFileAttributes{Hidden: true}}})
		must(t, err)
		if a := attributes(t, c, fid); a&(attrSparse|attrHidden) != attrSparse|attrHidden {
			t.Fatalf("attributes after REST Set File Properties: %#x", a)
		}
		// Bad input and access.
		if st := zero(10, 9); st != statusInvalidParameter {
			t.Errorf("FSCTL_SET_ZERO_DATA ending before it starts: %#x", st)
		}
		in := le.AppendUint64(le.AppendUint64(nil, 512), ^uint64(0))
		if st, _ := ioctl(t, c, fid, fsctlQueryAllocatedRanges, in, 1024); st != statusInvalidParameter {
			t.Errorf("FSCTL_QUERY_ALLOCATED_RANGES wrapping around: %#x", st)
		}
		in = le.AppendUint64(le.AppendUint64(nil, 0), 1<<20)
		if st, _ := ioctl(t, c, fid, fsctlQueryAllocatedRanges, in, 0); st != statusBufferTooSmall {
			t.Errorf("FSCTL_QUERY_ALLOCATED_RANGES without room: %#x", st)
		}
		lk, _ := other.Create("sparse.bin", readData|writeData, shareR|shareW|shareD, openOnly, nonDir)
		if st := other.Lock(lk, 0, 100, wire.LockExclusive|wire.LockFailImmediately); st != 0 {
			t.Fatalf("lock: %#x", st)
		}
		if st := zero(0, 4096); st != smbtest.StatusFileLockConflict {
			t.Errorf("FSCTL_SET_ZERO_DATA over another open's lock: %#x", st)
		}
		ea, _ := other.Create("sparse.bin", writeEA, shareR|shareW|shareD, openOnly, nonDir)
		if st, _ := ioctl(t, other, ea, fsctlSetSparse, []byte{0}, 0); st != smbtest.StatusAccessDenied {
			t.Errorf("FSCTL_SET_SPARSE with write EA access only: %#x", st)
		}
		wa, _ := other.Create("sparse.bin", writeAttrs, shareR|shareW|shareD, openOnly, nonDir)
		if st, _ := ioctl(t, other, wa, fsctlSetSparse, []byte{0}, 0); st != 0 {
			t.Errorf("FSCTL_SET_SPARSE (clear) with write attributes access: %#x", st)
		}
		if st, _ := ioctl(t, other, wa, fsctlSetZeroData, make([]byte, 16), 0); st != smbtest.StatusAccessDenied {
			t.Errorf("FSCTL_SET_ZERO_DATA without write data access: %#x", st)
		}
		if got := allocated(t, c, fid, 0, 1<<20); len(got) != 1 || got[0] != [2]uint64{0, 128 << 10} {
			t.Fatalf("ranges once no longer sparse: %v", got)
		}
		dir, _ := c.Create("d", all, shareR|shareW|shareD, openIf, dirFile)
		if st, _ := ioctl(t, c, dir, fsctlSetSparse, nil, 0); st != statusInvalidParameter {
			t.Errorf("FSCTL_SET_SPARSE on a directory: %#x", st)
		}
	})
}

// TestFileLevelTrim: FSCTL_FILE_LEVEL_TRIM deallocates the whole pages of
// its ranges (REST lists them no longer) and counts the ranges.
func TestFileLevelTrim(t *testing.T) {
	engines(t, func(t *testing.T, e *env) {
		c := e.smb(t)
		fid, _ := c.Create("disk.vhdx", readData|writeData, shareR|shareW|shareD, openIf, nonDir)
		data := bytes.Repeat([]byte("x"), 8192)
		if st := c.Write(fid, 0, data); st != 0 {
			t.Fatalf("write: %#x", st)
		}
		in := le.AppendUint32(le.AppendUint32(nil, 0), 1)
		in = le.AppendUint64(le.AppendUint64(in, 100), 4096)
		st, out := ioctl(t, c, fid, fsctlFileLevelTrim, in, 4)
		if st != 0 || len(out) != 4 || le.Uint32(out) != 1 {
			t.Fatalf("FSCTL_FILE_LEVEL_TRIM: %#x %x", st, out)
		}
		rl, err := e.file("disk.vhdx").GetRangeList(ctx(t), nil)
		must(t, err)
		if len(rl.Ranges) != 2 || *rl.Ranges[0].End != 511 || *rl.Ranges[1].Start != 4096 {
			t.Fatalf("List Ranges after a trim of 100+4096: %+v", rl.Ranges)
		}
	})
}

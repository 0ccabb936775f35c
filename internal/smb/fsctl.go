package smb

import (
	"context"
	"math"

	"github.com/lazuli-storage/lazuli/internal/smb/wire"
)

// FSCTLs addressed to the server rather than to an open.
const (
	fsctlDfsGetReferralsEx         uint32 = 0x000601B0
	fsctlQueryNetworkInterfaceInfo uint32 = 0x001401FC
)

// FSCTLs of sparse files (MS-FSCC 2.3).
const (
	fsctlSetSparse              uint32 = 0x000900C4
	fsctlSetZeroData            uint32 = 0x000980C8
	fsctlQueryAllocatedRanges   uint32 = 0x000940CF
	fsctlFileLevelTrim          uint32 = 0x00098208
	fsSupportsSparseFiles       uint32 = 0x00000040
	fileAllocatedRangeBufferLen        = 16
)

// Sparse is a Handle whose file can be sparse: the File service keeps a
// file's written ranges, and Clear Range deallocates pages, so holes are
// what was never written or was cleared.
type Sparse interface {
	// SetSparse sets or clears FILE_ATTRIBUTE_SPARSE_FILE; a directory
	// answers ErrInvalidParameter.
	SetSparse(ctx context.Context, sparse bool) error
	// ZeroRange zeroes [start, end) cut at the end of the file,
	// deallocating what it can; ErrLockConflict when another open's
	// byte-range lock covers part of it.
	ZeroRange(ctx context.Context, start, end int64) error
	// AllocatedRanges returns the allocated ranges, [start, end) each, of
	// [off, off+n) cut at the end of the file: all of it for a file that
	// is not sparse.
	AllocatedRanges(ctx context.Context, off, n int64) ([][2]int64, error)
}

// sparseOpen finds the open an FSCTL of sparse files names and checks
// that its access has one of the rights in need.
func (c *conn) sparseOpen(r *request, req *wire.IoctlRequest, need uint32) (*open, Sparse, *response) {
	o := c.lookupOpen(r, req.FileID)
	if o == nil {
		return nil, nil, c.errorResponse(r, statusFileClosed)
	}
	sp, ok := o.h.(Sparse)
	if o.h == nil || !ok {
		return nil, nil, c.errorResponse(r, statusInvalidDeviceRequest)
	}
	if o.access&need == 0 {
		return nil, nil, c.errorResponse(r, statusAccessDenied)
	}
	return o, sp, nil
}

// setSparse handles FSCTL_SET_SPARSE (MS-FSA 2.1.5.10.36): the optional
// FILE_SET_SPARSE_BUFFER's first byte says set (non-zero) or clear; no
// buffer means set. Any of write data, append data or write attributes
// access will do; a directory is INVALID_PARAMETER.
func (c *conn) setSparse(r *request, req *wire.IoctlRequest) *response {
	o, sp, resp := c.sparseOpen(r, req, FileWriteData|FileAppendData|FileWriteAttributes)
	if resp != nil {
		return resp
	}
	if o.isDir {
		return c.errorResponse(r, statusInvalidParameter)
	}
	set := len(req.Input) == 0 || req.Input[0] != 0
	ctx, cancel := c.reqCtx()
	defer cancel()
	if err := sp.SetSparse(ctx, set); err != nil {
		return c.errorResponse(r, statusOf(err))
	}
	return c.ok(r, wire.AppendIoctlResponse(nil, req.CtlCode, req.FileID, nil))
}

// setZeroData handles FSCTL_SET_ZERO_DATA (MS-FSA 2.1.5.10.39) as Clear
// Range: FILE_ZERO_DATA_INFORMATION holds FileOffset and
// BeyondFinalZero; the open needs write data access.
func (c *conn) setZeroData(r *request, req *wire.IoctlRequest) *response {
	o, sp, resp := c.sparseOpen(r, req, FileWriteData)
	if resp != nil {
		return resp
	}
	if len(req.Input) < 16 {
		return c.errorResponse(r, statusInvalidParameter)
	}
	off, beyond := le.Uint64(req.Input), le.Uint64(req.Input[8:])
	if off > math.MaxInt64 || beyond > math.MaxInt64 || off > beyond {
		return c.errorResponse(r, statusInvalidParameter)
	}
	if o.isDir {
		return c.errorResponse(r, statusInvalidParameter)
	}
	ctx, cancel := c.reqCtx()
	defer cancel()
	if err := sp.ZeroRange(ctx, int64(min(off, maxFileSize)), int64(min(beyond, maxFileSize))); err != nil {
		return c.errorResponse(r, statusOf(err))
	}
	return c.ok(r, wire.AppendIoctlResponse(nil, req.CtlCode, req.FileID, nil))
}

// fileLevelTrim handles FSCTL_FILE_LEVEL_TRIM (MS-FSCC 2.3.13), a hint
// that ranges of a file hold nothing of value (virtual disks on a share):
// their whole 512-byte pages are deallocated as Clear Range does, and the
// answer counts the ranges processed. The open needs write data access.
func (c *conn) fileLevelTrim(r *request, req *wire.IoctlRequest) *response {
	o, sp, resp := c.sparseOpen(r, req, FileWriteData)
	if resp != nil {
		return resp
	}
	in := req.Input
	if len(in) < 8 || o.isDir {
		return c.errorResponse(r, statusInvalidParameter)
	}
	n := int(le.Uint32(in[4:]))
	if n > (len(in)-8)/16 {
		return c.errorResponse(r, statusInvalidParameter)
	}
	ctx, cancel := c.reqCtx()
	defer cancel()
	for i := 0; i < n; i++ {
		off, ln := le.Uint64(in[8+16*i:]), le.Uint64(in[16+16*i:])
		if off > maxFileSize || ln > maxFileSize {
			continue // nothing is stored there
		}
		start, end := (off+511)&^511, (off+ln)&^511
		if start >= end {
			continue
		}
		if err := sp.ZeroRange(ctx, int64(start), int64(end)); err != nil {
			return c.errorResponse(r, statusOf(err))
		}
	}
	var out []byte
	if req.MaxOutputResponse >= 4 {
		out = le.AppendUint32(nil, uint32(n))
	}
	return c.ok(r, wire.AppendIoctlResponse(nil, req.CtlCode, req.FileID, out))
}

// queryAllocatedRanges handles FSCTL_QUERY_ALLOCATED_RANGES (MS-FSA
// 2.1.5.10.22): a FILE_ALLOCATED_RANGE_BUFFER in (FileOffset, Length),
// those of the allocated ranges out. The open needs read data access; an
// output buffer too small for one range is BUFFER_TOO_SMALL, for all of
// them BUFFER_OVERFLOW with those that fit.
func (c *conn) queryAllocatedRanges(r *request, req *wire.IoctlRequest) *response {
	o, sp, resp := c.sparseOpen(r, req, FileReadData)
	if resp != nil {
		return resp
	}
	if len(req.Input) < fileAllocatedRangeBufferLen {
		return c.errorResponse(r, statusInvalidParameter)
	}
	off, n := le.Uint64(req.Input), le.Uint64(req.Input[8:])
	if off > math.MaxInt64 || n > math.MaxInt64 || off+n > math.MaxInt64 {
		return c.errorResponse(r, statusInvalidParameter)
	}
	if o.isDir {
		return c.errorResponse(r, statusInvalidParameter)
	}
	ctx, cancel := c.reqCtx()
	defer cancel()
	ranges, err := sp.AllocatedRanges(ctx, int64(min(off, maxFileSize)), int64(min(n, maxFileSize)))
	if err != nil {
		return c.errorResponse(r, statusOf(err))
	}
	fit := int(req.MaxOutputResponse) / fileAllocatedRangeBufferLen
	if len(ranges) > 0 && fit == 0 {
		return c.errorResponse(r, statusBufferTooSmall)
	}
	status := statusSuccess
	if len(ranges) > fit {
		ranges, status = ranges[:fit], statusBufferOverflow
	}
	out := make([]byte, 0, fileAllocatedRangeBufferLen*len(ranges))
	for _, rg := range ranges {
		out = le.AppendUint64(le.AppendUint64(out, uint64(rg[0])), uint64(rg[1]-rg[0]))
	}
	return c.newResponse(r, status, wire.AppendIoctlResponse(nil, req.CtlCode, req.FileID, out))
}

// unsupportedFsctl answers an FSCTL the server does not implement (object
// ids, reparse points, compression, ...). One addressed to an open checks
// the open first: STATUS_FILE_CLOSED when FileId names none (smbtorture
// smb2.compound.related5), else STATUS_NOT_SUPPORTED.
func (c *conn) unsupportedFsctl(r *request, req *wire.IoctlRequest) *response {
	switch req.CtlCode {
	case wire.FsctlDfsGetReferrals, fsctlDfsGetReferralsEx, fsctlQueryNetworkInterfaceInfo:
	default:
		if c.lookupOpen(r, req.FileID) == nil {
			return c.errorResponse(r, statusFileClosed)
		}
	}
	return c.errorResponse(r, statusNotSupported)
}

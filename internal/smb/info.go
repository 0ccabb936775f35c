package smb

import (
	"context"
	"math"
	"strings"

	"github.com/lazuli-storage/lazuli/internal/smb/wire"
)

// File information classes (MS-FSCC §2.4).
const (
	fileDirectoryInformation       = 1
	fileFullDirectoryInformation   = 2
	fileBothDirectoryInformation   = 3
	fileBasicInformation           = 4
	fileStandardInformation        = 5
	fileInternalInformation        = 6
	fileEaInformation              = 7
	fileAccessInformation          = 8
	fileNameInformation            = 9
	fileRenameInformation          = 10
	fileNamesInformation           = 12
	fileDispositionInformation     = 13
	filePositionInformation        = 14
	fileFullEaInformation          = 15
	fileModeInformation            = 16
	fileAlignmentInformation       = 17
	fileAllInformation             = 18
	fileAllocationInformation      = 19
	fileEndOfFileInformation       = 20
	fileAlternateNameInformation   = 21
	fileStreamInformation          = 22
	fileCompressionInformation     = 28
	fileNetworkOpenInformation     = 34
	fileAttributeTagInformation    = 35
	fileIDBothDirectoryInformation = 37
	fileIDFullDirectoryInformation = 38
	fileIDExtdDirectoryInformation = 60
	fileNormalizedNameInformation  = 48
	fileIDInformation              = 59
	fileDispositionInformationEx   = 64
	fileRenameInformationEx        = 65
)

// FileModeInformation bits an open may change.
const (
	fileWriteThrough   = 0x2
	fileSequentialOnly = 0x4
)

// File system information classes (MS-FSCC §2.5).
const (
	fileFsVolumeInformation     = 1
	fileFsSizeInformation       = 3
	fileFsDeviceInformation     = 4
	fileFsAttributeInformation  = 5
	fileFsFullSizeInformation   = 7
	fileFsControlInformation    = 6
	fileFsObjectIDInformation   = 8
	fileFsSectorSizeInformation = 11
)

// matchPattern reports whether name matches a directory search pattern,
// case-insensitively, with the DOS wildcards of MS-FSCC §2.1.4.4
// (* ? < > ").
func matchPattern(pattern, name string) bool {
	if pattern == "" || pattern == "*" {
		return true
	}
	p, n := []rune(strings.ToUpper(pattern)), []rune(strings.ToUpper(name))
	var match func(i, j int) bool
	steps := 0
	match = func(i, j int) bool {
		if steps++; steps > 100000 {
			return false
		}
		for i < len(p) {
			switch p[i] {
			case '*', '<':
				for k := j; k <= len(n); k++ {
					if match(i+1, k) {
						return true
					}
				}
				return false
			case '?', '>':
				if j < len(n) {
					j++
				} else if p[i] == '?' {
					return false
				}
			case '"':
				if j < len(n) && n[j] == '.' {
					j++
				} else if j < len(n) {
					return false
				}
			default:
				if j >= len(n) || n[j] != p[i] {
					return false
				}
				j++
			}
			i++
		}
		return j == len(n)
	}
	return match(0, 0)
}

func hasWildcard(p string) bool { return strings.ContainsAny(p, "*?<>\"") }

// queryDirectory handles QUERY_DIRECTORY.
func (c *conn) queryDirectory(r *request) *response {
	req, err := wire.DecodeQueryDirectoryRequest(r.msg)
	if err != nil {
		return c.errorResponse(r, statusInvalidParameter)
	}
	if !c.chargeOK(r, req.OutputLength) {
		return c.errorResponse(r, statusInvalidParameter)
	}
	o := c.lookupOpen(r, req.FileID)
	if o == nil {
		return c.errorResponse(r, statusFileClosed)
	}
	if !o.isDir || o.h == nil {
		return c.errorResponse(r, statusInvalidParameter)
	}
	switch req.InfoClass {
	case fileDirectoryInformation, fileFullDirectoryInformation, fileBothDirectoryInformation,
		fileNamesInformation, fileIDBothDirectoryInformation, fileIDFullDirectoryInformation,
		fileIDExtdDirectoryInformation:
	default:
		return c.errorResponse(r, statusInvalidInfoClass)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.dirStarted || req.Flags&(wire.QDRestartScans|wire.QDReopen) != 0 {
		ctx, cancel := c.reqCtx()
		self, err := o.h.Stat(ctx)
		cancel()
		if err != nil {
			return c.errorResponse(r, statusOf(err))
		}
		pattern := req.Pattern
		if pattern == "" {
			pattern = "*"
		}
		dot, dotdot := self, self
		dot.Name, dotdot.Name = ".", ".."
		o.dirList = o.dirList[:0]
		for _, e := range []Stat{dot, dotdot} {
			if nameMatches(pattern, e.Name) {
				o.dirList = append(o.dirList, e)
			}
		}
		o.dirStarted, o.dirAfter, o.dirIndex, o.dirDone, o.dirPattern = true, "", 0, false, pattern
	}
	fresh := o.dirIndex == 0
	var out []byte
	prev, end := -1, 0
	max := int(req.OutputLength)
	single := req.Flags&wire.QDReturnSingleEntry != 0
	// add appends e if it fits, reporting whether it did.
	add := func(e *Stat) bool {
		out = wire.Pad8(out[:end], 0)
		start := len(out)
		out = appendDirEntry(out, req.InfoClass, e, o.dirIndex)
		if len(out) > max {
			return false
		}
		if prev >= 0 {
			le.PutUint32(out[prev:], uint32(start-prev))
		}
		prev, end = start, len(out)
		o.dirIndex++
		return true
	}
	full := false
	for len(o.dirList) > 0 && !full {
		if full = !add(&o.dirList[0]); !full {
			o.dirList = o.dirList[1:]
			full = single
		}
	}
	// Read the directory a page at a time from the last name returned;
	// a page holds at most as many entries as the buffer could take.
	page := max/64 + 1
	for !full && !o.dirDone {
		ctx, cancel := c.reqCtx()
		entries, err := o.h.ReadDir(ctx, o.dirAfter, page)
		cancel()
		if err != nil {
			return c.errorResponse(r, statusOf(err))
		}
		if len(entries) < page {
			o.dirDone = true
		}
		for i := range entries {
			e := &entries[i]
			if !nameMatches(o.dirPattern, e.Name) {
				o.dirAfter = e.Name
				continue
			}
			if full = !add(e); full {
				o.dirDone = false // resume at e next time
				break
			}
			o.dirAfter = e.Name
			if full = single; full {
				o.dirDone = false
				break
			}
		}
	}
	out = out[:end]
	if prev < 0 {
		if full {
			return c.errorResponse(r, statusInfoLengthMismatch)
		}
		if fresh {
			return c.errorResponse(r, statusNoSuchFile)
		}
		return c.errorResponse(r, statusNoMoreFiles)
	}
	return c.ok(r, wire.AppendBufferResponse(nil, out))
}

// nameMatches reports whether a directory entry's name matches a
// QUERY_DIRECTORY pattern (with wildcards, or a name compared without case).
func nameMatches(pattern, name string) bool {
	if hasWildcard(pattern) {
		return matchPattern(pattern, name)
	}
	return strings.EqualFold(pattern, name)
}

func appendDirEntry(b []byte, class uint8, e *Stat, index uint32) []byte {
	b = le.AppendUint32(b, 0) // NextEntryOffset
	b = le.AppendUint32(b, index)
	nameLen := uint32(wire.UTF16Len(e.Name))
	if class == fileNamesInformation {
		b = le.AppendUint32(b, nameLen)
		return wire.AppendUTF16(b, e.Name)
	}
	t := statTimes(e)
	b = le.AppendUint64(b, t.CreationTime)
	b = le.AppendUint64(b, t.LastAccessTime)
	b = le.AppendUint64(b, t.LastWriteTime)
	b = le.AppendUint64(b, t.ChangeTime)
	b = le.AppendUint64(b, t.EndOfFile)
	b = le.AppendUint64(b, t.AllocationSize)
	b = le.AppendUint32(b, t.FileAttributes)
	b = le.AppendUint32(b, nameLen)
	switch class {
	case fileFullDirectoryInformation:
		b = le.AppendUint32(b, 0)
	case fileIDFullDirectoryInformation:
		b = le.AppendUint32(b, 0)
		b = le.AppendUint32(b, 0)
		b = le.AppendUint64(b, e.FileID)
	case fileBothDirectoryInformation:
		b = le.AppendUint32(b, 0)
		b = append(b, 0, 0)
		b = append(b, make([]byte, 24)...)
	case fileIDBothDirectoryInformation:
		b = le.AppendUint32(b, 0)
		b = append(b, 0, 0)
		b = append(b, make([]byte, 24)...)
		b = append(b, 0, 0)
		b = le.AppendUint64(b, e.FileID)
	case fileIDExtdDirectoryInformation:
		b = le.AppendUint32(b, 0) // EaSize
		b = le.AppendUint32(b, 0) // ReparsePointTag
		b = le.AppendUint64(b, e.FileID)
		b = le.AppendUint64(b, 0) // 128-bit FileId, high half
	}
	return wire.AppendUTF16(b, e.Name)
}

// queryInfo handles QUERY_INFO.
func (c *conn) queryInfo(r *request) *response {
	req, err := wire.DecodeQueryInfoRequest(r.msg)
	if err != nil {
		return c.errorResponse(r, statusInvalidParameter)
	}
	if !c.chargeOK(r, req.OutputLength) {
		return c.errorResponse(r, statusInvalidParameter)
	}
	o := c.lookupOpen(r, req.FileID)
	if o == nil {
		return c.errorResponse(r, statusFileClosed)
	}
	var st Stat
	if o.h != nil {
		ctx, cancel := c.reqCtx()
		st, err = o.h.Stat(ctx)
		cancel()
		if err != nil {
			return c.errorResponse(r, statusOf(err))
		}
		st.alloc = o.alloc
	} else {
		st = Stat{Name: o.name, Attributes: AttrNormal}
	}
	var out []byte
	variable := false
	switch req.InfoType {
	case wire.InfoFile:
		if req.InfoClass == fileAlternateNameInformation {
			// Names have no 8.3 short form (as on Azure Files): "not
			// found or empty" (MS-FSCC 2.4.5), not an unknown class.
			return c.errorResponse(r, statusObjectNameNotFound)
		}
		out, variable = c.fileInfo(o, &st, req.InfoClass)
		if out == nil {
			return c.errorResponse(r, statusInvalidInfoClass)
		}
	case wire.InfoFilesystem:
		var quota, used int64
		if !o.tree.ipc && (req.InfoClass == fileFsSizeInformation || req.InfoClass == fileFsFullSizeInformation) {
			ctx, cancel := c.reqCtx()
			quota, used, err = c.s.cfg.Backend.ShareSize(ctx, r.sess.account, o.tree.share)
			cancel()
			if err != nil {
				return c.errorResponse(r, statusOf(err))
			}
		}
		_, sparse := o.h.(Sparse)
		out, variable = c.fsInfo(req.InfoClass, quota, used, sparse)
		if out == nil {
			return c.errorResponse(r, statusInvalidInfoClass)
		}
	case wire.InfoSecurity:
		// The owner, group and DACL need READ_CONTROL (MS-SMB2
		// 3.3.5.20.3); asking for none of them needs nothing and gets
		// a descriptor without them (smbtorture smb2.sdread).
		const ownerGroupDACL = 0x1 | 0x2 | 0x4
		if req.AddlInfo&ownerGroupDACL != 0 && o.access&ReadControl == 0 && o.pipe == nil {
			return c.errorResponse(r, statusAccessDenied)
		}
		sddl := ""
		if o.h != nil {
			ctx, cancel := c.reqCtx()
			sddl, err = o.h.SDDL(ctx)
			cancel()
			if err != nil {
				return c.errorResponse(r, statusOf(err))
			}
		}
		sd, err := securityDescriptor(sddl, req.AddlInfo)
		if err != nil {
			sd, _ = securityDescriptor("", req.AddlInfo)
		}
		if uint32(len(sd)) > req.OutputLength {
			resp := c.newResponse(r, statusBufferTooSmall, nil)
			resp.body = append([]byte{9, 0, 0, 0}, le.AppendUint32(le.AppendUint32(nil, 4), uint32(len(sd)))...)
			return resp
		}
		out = sd
	default:
		return c.errorResponse(r, statusNotSupported)
	}
	if uint32(len(out)) > req.OutputLength {
		// A buffer too small for the fixed part of the class is
		// INFO_LENGTH_MISMATCH; one that holds it gets that much of a
		// variable-length answer with BUFFER_OVERFLOW.
		if !variable || req.OutputLength < fixedSize(req.InfoType, req.InfoClass) {
			return c.errorResponse(r, statusInfoLengthMismatch)
		}
		return c.newResponse(r, statusBufferOverflow, wire.AppendBufferResponse(nil, out[:req.OutputLength]))
	}
	return c.ok(r, wire.AppendBufferResponse(nil, out))
}

// fixedSize is the fixed part of a variable-length information class,
// the least a QUERY_INFO buffer must hold (as Windows counts it for the
// file-system classes, per smbtorture's smb2.getinfo.qfs_buffercheck).
func fixedSize(typ, class uint8) uint32 {
	switch {
	case typ == wire.InfoFilesystem && class == fileFsVolumeInformation:
		return 24
	case typ == wire.InfoFilesystem && class == fileFsAttributeInformation:
		return 16
	case typ == wire.InfoFile && (class == fileNameInformation || class == fileNormalizedNameInformation):
		return 4
	case typ == wire.InfoFile && class == fileAllInformation:
		return 100
	case typ == wire.InfoFile && class == fileStreamInformation:
		return 24
	}
	return 0
}

func appendBasic(b []byte, st *Stat) []byte {
	t := statTimes(st)
	b = le.AppendUint64(b, t.CreationTime)
	b = le.AppendUint64(b, t.LastAccessTime)
	b = le.AppendUint64(b, t.LastWriteTime)
	b = le.AppendUint64(b, t.ChangeTime)
	b = le.AppendUint32(b, t.FileAttributes)
	return le.AppendUint32(b, 0)
}

func appendStandard(b []byte, st *Stat) []byte {
	t := statTimes(st)
	b = le.AppendUint64(b, t.AllocationSize)
	b = le.AppendUint64(b, t.EndOfFile)
	// A file pending deletion has no links left (as NTFS counts them).
	b = le.AppendUint32(b, uint32(1-boolByte(st.DeletePending)))
	b = append(b, boolByte(st.DeletePending), boolByte(st.IsDir), 0, 0)
	return b
}

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

func (c *conn) fileInfo(o *open, st *Stat, class uint8) ([]byte, bool) {
	switch class {
	case fileBasicInformation:
		return appendBasic(nil, st), false
	case fileStandardInformation:
		return appendStandard(nil, st), false
	case fileInternalInformation:
		return le.AppendUint64(nil, st.FileID), false
	case fileEaInformation:
		return le.AppendUint32(nil, 0), false
	case fileAccessInformation:
		return le.AppendUint32(nil, o.access), false
	case filePositionInformation:
		return le.AppendUint64(nil, o.currentPosition()), false
	case fileModeInformation:
		return le.AppendUint32(nil, o.currentMode()), false
	case fileAlignmentInformation:
		return le.AppendUint32(nil, 0), false
	case fileNameInformation, fileNormalizedNameInformation:
		name := `\` + strings.ReplaceAll(o.path, "/", `\`)
		return wire.AppendUTF16(le.AppendUint32(nil, uint32(wire.UTF16Len(name))), name), true
	case fileAllInformation:
		b := appendBasic(nil, st)
		b = appendStandard(b, st)
		b = le.AppendUint64(b, st.FileID)
		b = le.AppendUint32(b, 0)        // EA size
		b = le.AppendUint32(b, o.access) // access flags
		b = le.AppendUint64(b, o.currentPosition())
		b = le.AppendUint32(b, o.currentMode())
		b = le.AppendUint32(b, 0) // alignment
		name := `\` + strings.ReplaceAll(o.path, "/", `\`)
		b = le.AppendUint32(b, uint32(wire.UTF16Len(name)))
		return wire.AppendUTF16(b, name), true
	case fileNetworkOpenInformation:
		t := statTimes(st)
		b := le.AppendUint64(nil, t.CreationTime)
		b = le.AppendUint64(b, t.LastAccessTime)
		b = le.AppendUint64(b, t.LastWriteTime)
		b = le.AppendUint64(b, t.ChangeTime)
		b = le.AppendUint64(b, t.AllocationSize)
		b = le.AppendUint64(b, t.EndOfFile)
		b = le.AppendUint32(b, t.FileAttributes)
		return le.AppendUint32(b, 0), false
	case fileAttributeTagInformation:
		return le.AppendUint32(le.AppendUint32(nil, attrs(st)), 0), false
	case fileStreamInformation:
		if st.IsDir {
			return []byte{}, true
		}
		b := le.AppendUint32(nil, 0)
		b = le.AppendUint32(b, uint32(wire.UTF16Len("::$DATA")))
		b = le.AppendUint64(b, uint64(st.Size))
		b = le.AppendUint64(b, allocSize(st.Size))
		return wire.AppendUTF16(b, "::$DATA"), true
	case fileCompressionInformation:
		b := le.AppendUint64(nil, uint64(st.Size))
		return append(b, make([]byte, 8)...), false
	case fileIDInformation:
		b := le.AppendUint64(nil, 0x4c415a55)
		b = le.AppendUint64(b, st.FileID)
		return le.AppendUint64(b, 0), false
	}
	return nil, false
}

// fsInfo answers a file-system information class; the size classes
// report the share's quota as the volume and what its files do not use
// of it as free, in 4 KiB units (8 sectors of 512 bytes), as Azure Files
// does.
// Sparse files are supported where the Backend's handles are Sparse.
func (c *conn) fsInfo(class uint8, quota, used int64, sparse bool) ([]byte, bool) {
	const unit = 4096
	totalUnits, freeUnits := uint64(quota/unit), uint64(max(quota-used, 0)/unit)
	switch class {
	case fileFsVolumeInformation:
		b := le.AppendUint64(nil, fileTime(c.s.started))
		b = le.AppendUint32(b, 0x4c415a55)
		label := "lazuli"
		b = le.AppendUint32(b, uint32(wire.UTF16Len(label)))
		b = append(b, 0, 0)
		return wire.AppendUTF16(b, label), true
	case fileFsSizeInformation:
		b := le.AppendUint64(nil, totalUnits)
		b = le.AppendUint64(b, freeUnits)
		b = le.AppendUint32(b, 8)
		return le.AppendUint32(b, 512), false
	case fileFsFullSizeInformation:
		b := le.AppendUint64(nil, totalUnits)
		b = le.AppendUint64(b, freeUnits)
		b = le.AppendUint64(b, freeUnits)
		b = le.AppendUint32(b, 8)
		return le.AppendUint32(b, 512), false
	case fileFsDeviceInformation:
		return le.AppendUint32(le.AppendUint32(nil, 7), 0), false // FILE_DEVICE_DISK
	case fileFsAttributeInformation:
		// Case-preserving, Unicode names, persistent ACLs.
		fsAttrs := uint32(0x00000002 | 0x00000004 | 0x00000008)
		if sparse {
			fsAttrs |= fsSupportsSparseFiles
		}
		b := le.AppendUint32(nil, fsAttrs)
		b = le.AppendUint32(b, 255)
		b = le.AppendUint32(b, uint32(wire.UTF16Len("NTFS")))
		return wire.AppendUTF16(b, "NTFS"), true
	case fileFsControlInformation:
		// No quotas on the volume: the thresholds and default limit
		// are "none" (-1), as Windows reports for a volume without
		// quota tracking.
		b := make([]byte, 24)
		b = le.AppendUint64(b, ^uint64(0))
		b = le.AppendUint64(b, ^uint64(0))
		return le.AppendUint64(b, 0), false
	case fileFsObjectIDInformation:
		return make([]byte, 64), false
	case fileFsSectorSizeInformation:
		b := le.AppendUint32(nil, 512)
		b = le.AppendUint32(b, 4096)
		b = le.AppendUint32(b, 4096)
		b = le.AppendUint32(b, 4096)
		b = le.AppendUint32(b, 0x0000000B)
		b = le.AppendUint32(b, 0)
		return le.AppendUint32(b, 0), false
	}
	return nil, false
}

// setInfo handles SET_INFO.
// setSecurity replaces the owner, group or DACL of an open's file with
// those of the security descriptor of a SET_INFO (the SACL is ignored):
// the owner and group need WRITE_OWNER access, the DACL WRITE_DAC.
func (c *conn) setSecurity(o *open, req *wire.SetInfoRequest) uint32 {
	all := o.access&(GenericAll|MaximumAllowed) != 0
	if req.AddlInfo&3 != 0 && !all && o.access&WriteOwner == 0 || req.AddlInfo&4 != 0 && !all && o.access&WriteDAC == 0 {
		return statusAccessDenied
	}
	ctx, cancel := c.reqCtx()
	defer cancel()
	cur, err := o.h.SDDL(ctx)
	if err != nil {
		return statusOf(err)
	}
	sddl, err := sddlFromDescriptor(req.Buffer, req.AddlInfo, cur)
	if err != nil {
		return statusInvalidSecurityDescr
	}
	return statusOf(o.h.SetSDDL(ctx, sddl))
}

// setInfoAsync runs SET_INFO, asynchronously once a rename or delete
// disposition waits for other clients' cache breaks.
func (c *conn) setInfoAsync(r *request) *response {
	return c.runAsync(r, func(ctx context.Context, waiting func()) *response { return c.setInfo(ctx, r, waiting) })
}

// setInfo handles SET_INFO; waiting, when set, is called as a rename or
// delete disposition starts waiting for cache breaks, which base, when
// cancelled, ends.
func (c *conn) setInfo(base context.Context, r *request, waiting func()) *response {
	req, err := wire.DecodeSetInfoRequest(r.msg)
	if err != nil {
		return c.errorResponse(r, statusInvalidParameter)
	}
	o := c.lookupOpen(r, req.FileID)
	if o == nil {
		return c.errorResponse(r, statusFileClosed)
	}
	if o.h == nil {
		return c.errorResponse(r, statusInvalidParameter)
	}
	if req.InfoType == wire.InfoSecurity {
		if status := c.setSecurity(o, req); status != statusSuccess {
			return c.errorResponse(r, status)
		}
		return c.ok(r, wire.AppendSetInfoResponse(nil))
	}
	if req.InfoType != wire.InfoFile {
		return c.errorResponse(r, statusNotSupported)
	}
	b := req.Buffer
	// A rename or delete disposition may wait out a break timeout.
	ctx, cancel := context.WithTimeout(base, 4*time_30s)
	defer cancel()
	ctx = withWaiting(ctx, waiting)
	need := func(n int, access uint32) uint32 {
		if len(b) < n {
			return statusInfoLengthMismatch
		}
		if o.access&access == 0 {
			return statusAccessDenied
		}
		return statusSuccess
	}
	var status uint32
	switch req.InfoClass {
	case fileBasicInformation:
		if status = need(36, FileWriteAttributes); status == statusSuccess {
			// A file cannot become a directory, nor a directory
			// temporary (MS-FSA 2.1.5.14.2).
			if a := le.Uint32(b[32:]); a&AttrDirectory != 0 && !o.isDir || a&AttrTemporary != 0 && o.isDir {
				status = statusInvalidParameter
				break
			}
			status = statusOf(o.h.SetBasic(ctx, SetBasic{Creation: fromFileTime(le.Uint64(b)),
				LastAccess: fromFileTime(le.Uint64(b[8:])), LastWrite: fromFileTime(le.Uint64(b[16:])),
				Change: fromFileTime(le.Uint64(b[24:])), Attributes: le.Uint32(b[32:])}))
		}
	case fileEndOfFileInformation:
		if status = need(8, FileWriteData); status == statusSuccess {
			size := le.Uint64(b)
			if size > math.MaxInt64 {
				// A negative size (-1 and the like).
				status = statusInvalidParameter
			} else if size > maxFileSize {
				status = statusDiskFull
			} else {
				status = statusOf(o.h.Truncate(ctx, int64(size)))
			}
		}
	case fileAllocationInformation:
		if status = need(8, FileWriteData); status == statusSuccess {
			v := le.Uint64(b)
			if v > math.MaxInt64 {
				status = statusInvalidParameter
				break
			}
			st, err := o.h.Stat(ctx)
			if err == nil {
				// Allocating less than the file holds truncates it; any
				// allocation breaks other opens' read caching
				// (MS-FSA 2.1.5.15.1), as a same-size truncation does.
				err = o.h.Truncate(ctx, min(int64(v), st.Size))
			}
			if status = statusOf(err); status == statusSuccess {
				// More is what the open reports from now on.
				o.alloc = min(v+4095, maxFileSize) &^ 4095
			}
		}
	case fileDispositionInformation:
		if status = need(1, Delete); status == statusSuccess {
			status = statusOf(o.h.SetDeletePending(ctx, b[0] != 0))
		}
	case fileDispositionInformationEx:
		if status = need(4, Delete); status == statusSuccess {
			status = statusOf(o.h.SetDeletePending(ctx, le.Uint32(b)&1 != 0))
		}
	case fileRenameInformation, fileRenameInformationEx:
		if status = need(20, Delete); status == statusSuccess && !r.sess.mayAccessShare() {
			// The new name is opened for the session's account, which
			// an anonymous session does not act for (reauth.go).
			status = statusAccessDenied
		} else if status == statusSuccess {
			n := le.Uint32(b[16:])
			if uint64(n) > uint64(len(b)-20) {
				status = statusInvalidParameter
				break
			}
			name, err := wire.DecodeUTF16(b[20 : 20+n])
			if err != nil {
				status = statusInvalidParameter
				break
			}
			path, ok := sharePath(strings.TrimPrefix(name, `\`))
			if !ok || path == "" {
				status = statusObjectNameInvalid
				break
			}
			replace := b[0] != 0
			if req.InfoClass == fileRenameInformationEx {
				replace = le.Uint32(b)&1 != 0
			}
			if status = statusOf(o.h.Rename(ctx, path, replace)); status == statusSuccess {
				o.path = path
			}
		}
	case filePositionInformation:
		// The current byte offset is the client's to keep; it is
		// stored for the open and read back as set.
		if len(b) < 8 {
			status = statusInfoLengthMismatch
		} else {
			o.mu.Lock()
			o.position = le.Uint64(b)
			o.mu.Unlock()
		}
	case fileModeInformation:
		// Of the mode, write-through and sequential-only may be set on
		// an open (MS-FSA 2.1.5.14.8); the others are fixed at create.
		switch {
		case len(b) < 4:
			status = statusInfoLengthMismatch
		case le.Uint32(b)&^(fileWriteThrough|fileSequentialOnly) != 0:
			status = statusInvalidParameter
		default:
			o.mu.Lock()
			o.mode = le.Uint32(b)
			o.mu.Unlock()
		}
	default:
		status = statusInvalidInfoClass
	}
	if status != statusSuccess {
		return c.errorResponse(r, status)
	}
	return c.ok(r, wire.AppendSetInfoResponse(nil))
}

package smb

import (
	"cmp"
	"context"
	"errors"
	"io"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/lazuli-storage/lazuli/internal/smb/wire"
)

const time_30s = 30 * time.Second

var volatileIDs atomic.Uint64

// Buffers of READ responses and of large request frames (WRITEs) are
// recycled in two size classes: a streaming copy would otherwise allocate,
// zero and fault in megabytes per request.
var smallBufs, largeBufs sync.Pool

const smallBufSize = 1<<20 + 64<<10

// getBuf returns a buffer of length n (at most maxFrame).
func getBuf(n int) *[]byte {
	pool, size := &smallBufs, smallBufSize
	if n > smallBufSize {
		pool, size = &largeBufs, maxFrame
	}
	if bp, ok := pool.Get().(*[]byte); ok {
		*bp = (*bp)[:n]
		return bp
	}
	b := make([]byte, n, size)
	return &b
}

// putBuf recycles a buffer of getBuf once nothing refers to it.
func putBuf(bp *[]byte) {
	switch cap(*bp) {
	case smallBufSize:
		smallBufs.Put(bp)
	case maxFrame:
		largeBufs.Put(bp)
	}
}

// mapAccess turns generic rights into specific ones (MS-SMB2 §3.3.5.9).
func mapAccess(a uint32) uint32 {
	if a&GenericRead != 0 {
		a |= FileReadData | FileReadAttributes | FileReadEA | ReadControl | Synchronize
	}
	if a&GenericWrite != 0 {
		a |= FileWriteData | FileAppendData | FileWriteAttributes | FileWriteEA | ReadControl | Synchronize
	}
	if a&GenericExecute != 0 {
		a |= FileExecute | FileReadAttributes | ReadControl | Synchronize
	}
	if a&(GenericAll|MaximumAllowed) != 0 {
		a |= FileAllAccess
	}
	return a &^ (GenericRead | GenericWrite | GenericExecute | GenericAll | MaximumAllowed)
}

// sharePath converts an SMB path (backslashes, relative to the share) to
// the Backend's form, refusing names Azure Files refuses.
func sharePath(name string) (string, bool) {
	name = strings.TrimSuffix(name, "::$DATA")
	if name == "" {
		return "", true
	}
	if strings.HasPrefix(name, `\`) || !utf8.ValidString(name) || len(name) > 2048 {
		return "", false
	}
	name = strings.TrimSuffix(name, `\`)
	var parts []string
	for _, p := range strings.Split(name, `\`) {
		if p == ".." && len(parts) > 0 {
			// A ".." after a component names that component's parent,
			// as Windows resolves it (smbtorture smb2.notify.tree); one
			// that would leave the share is refused.
			parts = parts[:len(parts)-1]
			continue
		}
		if p == "" || p == "." || p == ".." || len(p) > 255 || strings.ContainsAny(p, "\"/:|<>*?") {
			return "", false
		}
		for _, r := range p {
			if r < 0x20 {
				return "", false
			}
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, "/"), true
}

func (c *conn) lookupOpen(r *request, id wire.FileID) *open {
	if id == wire.RelatedFileID {
		id = r.fileID
	}
	r.sess.mu.Lock()
	o := r.sess.opens[id.Persistent]
	r.sess.mu.Unlock()
	if o == nil || o.id != id || o.tree != r.tree {
		return nil
	}
	r.fileID = id
	return o
}

func statTimes(st *Stat) wire.FileTimes {
	t := wire.FileTimes{CreationTime: fileTime(st.Creation), LastAccessTime: fileTime(st.LastAccess),
		LastWriteTime: fileTime(st.LastWrite), ChangeTime: fileTime(st.Change), FileAttributes: attrs(st)}
	if !st.IsDir {
		t.EndOfFile = uint64(st.Size)
		t.AllocationSize = max(allocSize(st.Size), st.alloc)
	}
	return t
}

func allocSize(n int64) uint64 { return (uint64(n) + 4095) &^ 4095 }

func attrs(st *Stat) uint32 {
	a := st.Attributes
	if st.IsDir {
		a |= AttrDirectory
	}
	if a == 0 {
		a = AttrNormal
	}
	return a
}

// File sizes: NTFS's largest, and the File service's (4 TiB), beyond
// which a write or a new size is DISK_FULL.
const (
	ntfsMaxFileSize = 0xFFFFFFF0000
	maxFileSize     = 1 << 42
)

// Bits of a CREATE's fields that Windows refuses (MS-SMB2 3.3.5.9, and
// what smbtorture's smb2.create.gentest records of Windows).
const (
	// Create options reserved for the system, and those not supported
	// over SMB2 (FILE_CREATE_TREE_CONNECTION, FILE_OPEN_BY_FILE_ID,
	// FILE_RESERVE_OPFILTER).
	createOptionsReserved    = 0xFF000000
	createOptionsUnsupported = 0x00000080 | 0x00002000 | 0x00100000
	// Access bits no open may ask for; ACCESS_SYSTEM_SECURITY needs a
	// privilege no logon here holds.
	accessReserved       = 0x0CE0FE00
	accessSystemSecurity = 0x01000000
	// Attributes a create may not carry: VOLUME, DEVICE, INTEGRITY_STREAM
	// and everything above NOT_CONTENT_INDEXED|ENCRYPTED.
	attrsInvalid = 0xFFFF8048
)

const (
	statusBadImpersonationLevel uint32 = 0xC00000A5
	statusPrivilegeNotHeld      uint32 = 0xC0000061
)

// checkCreate validates the fields of a CREATE before anything is opened.
func checkCreate(req *wire.CreateRequest) uint32 {
	switch {
	case req.ImpersonationLevel > 3:
		return statusBadImpersonationLevel
	case req.CreateOptions&createOptionsReserved != 0:
		return statusInvalidParameter
	case req.CreateOptions&createOptionsUnsupported != 0:
		return statusNotSupported
	case req.DesiredAccess&accessReserved != 0:
		return statusAccessDenied
	case req.DesiredAccess&accessSystemSecurity != 0:
		return statusPrivilegeNotHeld
	case req.FileAttributes&attrsInvalid != 0:
		return statusInvalidParameter
	}
	for _, cc := range req.Contexts {
		if len(cc.Name) < 4 {
			// Create context names are at least four bytes long.
			return statusInvalidParameter
		}
	}
	return statusSuccess
}

// create handles CREATE (MS-SMB2 §3.3.5.9); waiting is called when the
// open starts waiting for other clients' cache breaks (createAsync),
// which base, when cancelled, ends.
func (c *conn) create(base context.Context, r *request, waiting func()) *response {
	req, err := wire.DecodeCreateRequest(r.msg)
	if err != nil {
		return c.errorResponse(r, statusInvalidParameter)
	}
	dq, rec, guid, recV2, bad := durableRequest(req)
	if bad {
		return c.errorResponse(r, statusInvalidParameter)
	}
	if !r.tree.ipc && !r.sess.mayAccessShare() {
		// An anonymous session opens nothing new, nor takes back a
		// durable open (reauth.go).
		return c.errorResponse(r, statusAccessDenied)
	}
	if rec != nil && !r.tree.ipc {
		return c.reconnect(r, req, *rec, recV2, guid)
	}
	if req.CreateDisposition > FileOverwriteIf ||
		req.CreateOptions&(FileDirectoryFile|FileNonDirectoryFile) == FileDirectoryFile|FileNonDirectoryFile {
		return c.errorResponse(r, statusInvalidParameter)
	}
	if status := checkCreate(req); status != statusSuccess {
		return c.errorResponse(r, status)
	}
	access := mapAccess(req.DesiredAccess)
	if req.CreateOptions&FileDeleteOnClose != 0 && access&Delete == 0 {
		return c.errorResponse(r, statusInvalidParameter)
	}
	s := r.sess
	s.mu.Lock()
	n := len(s.opens)
	s.mu.Unlock()
	if n >= c.s.cfg.MaxOpensPerSession {
		return c.errorResponse(r, statusInsufficientResources)
	}
	var snapshot time.Time
	for _, cc := range req.Contexts {
		switch cc.Name {
		case "TWrp":
			// A previous version: the share snapshot taken at that
			// time (MS-SMB2 2.2.13.2.7), whose ids are those times.
			if len(cc.Data) < 8 {
				return c.errorResponse(r, statusInvalidParameter)
			}
			if snapshot = fromFileTime(le.Uint64(cc.Data)); snapshot.IsZero() {
				return c.errorResponse(r, statusObjectNameNotFound)
			}
		case "ExtA":
			return c.errorResponse(r, statusEAsNotSupported)
		}
	}
	if id, ok := appInstanceID(req); ok && dq != nil && dq.v2 && !r.tree.ipc {
		if path, ok := sharePath(req.Name); ok {
			dq.appInstance = id
			c.closeAppInstance(id, s.account, r.tree.share, path)
		}
	}
	if !snapshot.IsZero() && req.DesiredAccess&MaximumAllowed != 0 {
		// A previous version is read-only: MAXIMUM_ALLOWED gets no
		// right to change it (the Backend refuses an open asking for
		// one).
		access = mapAccess(req.DesiredAccess&^MaximumAllowed) | FileAllAccess&^SnapshotChangeRights
	}
	o := &open{tree: r.tree, access: access, conn: c, server: c.s}
	var st Stat
	var cr *CacheRequest
	var grant Cache
	action := FileOpened
	if r.tree.ipc {
		name := strings.ToLower(strings.TrimPrefix(req.Name, `\`))
		if name != "srvsvc" {
			return c.errorResponse(r, statusObjectNameNotFound)
		}
		o.pipe = newPipe(c, s)
		o.name = name
		st = Stat{Name: name, Attributes: AttrNormal}
		o.id = wire.FileID{Persistent: volatileIDs.Add(1), Volatile: volatileIDs.Add(1)}
	} else {
		if strings.HasPrefix(req.Name, `\`) {
			// Names are relative to the share root (MS-SMB2 3.3.5.9).
			return c.errorResponse(r, statusInvalidParameter)
		}
		path, ok := sharePath(req.Name)
		if !ok {
			return c.errorResponse(r, badNameStatus(req.Name))
		}
		// An open may wait for other clients' breaks (up to their
		// acknowledgement timeout) besides its own work.
		ctx, cancel := context.WithTimeout(base, 4*time_30s)
		defer cancel()
		cr = c.cacheRequest(req)
		h, hst, err := c.s.cfg.Backend.Open(ctx, &OpenRequest{Account: s.account, Share: r.tree.share, Path: path,
			DesiredAccess: access, ShareAccess: req.ShareAccess & 7, Disposition: req.CreateDisposition,
			CreateOptions: req.CreateOptions, Attributes: req.FileAttributes, Snapshot: snapshot, SessionID: s.id, ClientIP: c.ip,
			Cache: cr, OnBreak: o.sendCacheBreak, Waiting: waiting})
		if err != nil {
			return c.errorResponse(r, statusOf(err))
		}
		st = hst
		o.h, o.path, o.isDir, o.name = h, path, st.IsDir, st.Name
		action = h.Action()
		o.mu.Lock()
		o.id = wire.FileID{Persistent: h.ID(), Volatile: volatileIDs.Add(1)}
		o.mu.Unlock()
		if ch, ok := h.(Cacher); ok && cr != nil {
			grant = ch.Cache()
			if !cr.Oplock {
				o.lease = &cr.Key
			}
		}
	}
	s.mu.Lock()
	if old := s.opens[o.id.Persistent]; old != nil {
		o.mu.Lock()
		o.id.Persistent = volatileIDs.Add(1) | 1<<62
		o.mu.Unlock()
	}
	s.opens[o.id.Persistent] = o
	s.mu.Unlock()
	r.fileID = o.id
	for _, cc := range req.Contexts {
		if cc.Name == "AlSi" && len(cc.Data) >= 8 && !o.isDir && o.pipe == nil {
			// The allocation asked for, in whole clusters (MS-SMB2
			// 2.2.13.2.6); the File service allocates as it writes, so
			// it is what this open reports, not a reservation.
			o.alloc = min(le.Uint64(cc.Data)+4095, maxFileSize) &^ 4095
		}
	}
	st.alloc = o.alloc
	resp := &wire.CreateResponse{CreateAction: action, FileTimes: statTimes(&st), FileID: o.id}
	if o.isDir && (cr == nil || cr.Oplock || !cr.Directory) {
		// No oplock on a directory, and a lease only where directory
		// leasing was offered (SMB 3).
		cr = nil
	}
	level, lc := grantContext(cr, grant)
	resp.OplockLevel = level
	if lc != nil {
		resp.Contexts = append(resp.Contexts, *lc)
	}
	if o.isDir {
		// A directory's open is not made durable by its lease.
		cr = nil
	}
	if dc := c.grantDurable(o, dq, cr, grant); dc != nil {
		resp.Contexts = append(resp.Contexts, *dc)
	}
	for _, cc := range req.Contexts {
		switch cc.Name {
		case "MxAc":
			resp.Contexts = append(resp.Contexts, wire.CreateContext{Name: "MxAc",
				Data: le.AppendUint32(le.AppendUint32(nil, 0), FileAllAccess)})
		case "QFid":
			d := le.AppendUint64(nil, st.FileID)
			d = le.AppendUint64(d, 0x4c415a55)
			resp.Contexts = append(resp.Contexts, wire.CreateContext{Name: "QFid", Data: append(d, make([]byte, 16)...)})
		}
	}
	return c.ok(r, resp.Append(nil))
}

// closeFile handles CLOSE.
func (c *conn) closeFile(r *request) *response {
	req, err := wire.DecodeCloseRequest(r.msg)
	if err != nil {
		return c.errorResponse(r, statusInvalidParameter)
	}
	o := c.lookupOpen(r, req.FileID)
	if o == nil {
		return c.errorResponse(r, statusFileClosed)
	}
	var t *wire.FileTimes
	if req.Flags&wire.ClosePostQueryAttrib != 0 && o.h != nil {
		ctx, cancel := c.reqCtx()
		st, err := o.h.Stat(ctx)
		cancel()
		if err == nil {
			st.alloc = o.alloc
			ft := statTimes(&st)
			t = &ft
		}
	}
	r.sess.mu.Lock()
	delete(r.sess.opens, o.id.Persistent)
	r.sess.mu.Unlock()
	o.stopNotify()
	if o.h != nil {
		ctx, cancel := c.reqCtx()
		err := o.h.Close(ctx)
		cancel()
		if err != nil {
			// STATUS_FILE_CLOSED when REST's Force Close Handles ended
			// the open first.
			return c.errorResponse(r, statusOf(err))
		}
	}
	return c.ok(r, wire.AppendCloseResponse(nil, t))
}

func (c *conn) flush(r *request) *response {
	id, err := wire.DecodeFlushRequest(r.msg)
	if err != nil {
		return c.errorResponse(r, statusInvalidParameter)
	}
	if c.lookupOpen(r, id) == nil {
		return c.errorResponse(r, statusFileClosed)
	}
	// Every WRITE is committed to storage before it is answered.
	return c.ok(r, wire.SmallResponse(nil))
}

// chargeOK checks the credit charge of a request moving n bytes.
func (c *conn) chargeOK(r *request, n uint32) bool {
	if c.dialect == wire.Dialect202 {
		return n <= smb202MaxIO
	}
	if n > c.maxIO {
		return false
	}
	need := uint16(1)
	if n > 0 {
		need = uint16((n-1)/creditUnitIO + 1)
	}
	return r.hdr.CreditCharge >= need
}

func (c *conn) read(r *request) *response {
	req, err := wire.DecodeReadRequest(r.msg)
	if err != nil {
		return c.errorResponse(r, statusInvalidParameter)
	}
	if !c.chargeOK(r, req.Length) {
		return c.errorResponse(r, statusInvalidParameter)
	}
	o := c.lookupOpen(r, req.FileID)
	if o == nil {
		return c.errorResponse(r, statusFileClosed)
	}
	if o.pipe != nil {
		data := o.pipe.read(int(req.Length))
		if len(data) == 0 {
			return c.errorResponse(r, statusPipeEmpty)
		}
		status := statusSuccess
		if o.pipe.pending() > 0 {
			status = statusBufferOverflow
		}
		return c.newResponse(r, status, append(wire.AppendReadResponseHeader(nil, uint32(len(data))), data...))
	}
	if o.isDir {
		return c.errorResponse(r, statusInvalidDeviceRequest)
	}
	if o.access&(FileReadData|FileExecute) == 0 {
		return c.errorResponse(r, statusAccessDenied)
	}
	if req.Offset > math.MaxInt64 || req.Offset+uint64(req.Length) > math.MaxInt64 {
		// Offsets are signed 64-bit numbers; past the end of the file
		// (however far) is END_OF_FILE.
		return c.errorResponse(r, statusInvalidParameter)
	}
	ctx, cancel := c.reqCtx()
	n, data, err := o.h.ReadAt(ctx, int64(req.Offset), int64(req.Length))
	if err != nil {
		cancel()
		return c.errorResponse(r, statusOf(err))
	}
	if n == 0 && req.Length > 0 || uint32(n) < req.MinimumCount {
		cancel()
		return c.errorResponse(r, statusEndOfFile)
	}
	if r.alone && !r.encrypted && r.hdr.Flags&wire.FlagSigned == 0 {
		// A response neither signed, encrypted nor compounded is sent
		// as it is read: the data goes from the chunk files to the
		// socket (sendfile(2) where the store allows it) without
		// waiting for all of it to be read or copying it here.
		resp := c.ok(r, wire.AppendReadResponseHeader(nil, uint32(n)))
		resp.data, resp.dataLen = data, n
		resp.release = cancel
		return resp
	}
	bp := getBuf(wire.ReadResponseHeaderSize + int(n))
	w := &fillWriter{b: (*bp)[wire.ReadResponseHeaderSize:wire.ReadResponseHeaderSize:len(*bp)]}
	_, err = data.WriteTo(w)
	cancel()
	if err != nil || int64(len(w.b)) != n {
		putBuf(bp)
		return c.errorResponse(r, statusOf(cmp.Or(err, io.ErrUnexpectedEOF)))
	}
	body := wire.AppendReadResponseHeader((*bp)[:0], uint32(n))[:wire.ReadResponseHeaderSize+int(n)]
	resp := c.ok(r, body)
	resp.release = func() { putBuf(bp) }
	return resp
}

// fillWriter fills a slice up to its capacity; ReadFrom reads straight
// into it.
type fillWriter struct{ b []byte }

func (w *fillWriter) Write(p []byte) (int, error) {
	if len(p) > cap(w.b)-len(w.b) {
		return 0, io.ErrShortWrite
	}
	w.b = append(w.b, p...)
	return len(p), nil
}

func (w *fillWriter) ReadFrom(r io.Reader) (int64, error) {
	var total int64
	for len(w.b) < cap(w.b) {
		k, err := r.Read(w.b[len(w.b):cap(w.b)])
		w.b = w.b[:len(w.b)+k]
		total += int64(k)
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

func (c *conn) write(r *request) *response {
	req, err := wire.DecodeWriteRequest(r.msg)
	if err != nil {
		return c.errorResponse(r, statusInvalidParameter)
	}
	if !c.chargeOK(r, uint32(len(req.Data))) {
		return c.errorResponse(r, statusInvalidParameter)
	}
	o := c.lookupOpen(r, req.FileID)
	if o == nil {
		return c.errorResponse(r, statusFileClosed)
	}
	if o.pipe != nil {
		o.pipe.write(req.Data)
		return c.ok(r, wire.AppendWriteResponse(nil, uint32(len(req.Data))))
	}
	if o.isDir {
		return c.errorResponse(r, statusInvalidDeviceRequest)
	}
	if o.access&(FileWriteData|FileAppendData) == 0 {
		return c.errorResponse(r, statusAccessDenied)
	}
	switch end := req.Offset + uint64(len(req.Data)); {
	case req.Offset > math.MaxInt64 || end > math.MaxInt64 || len(req.Data) > 0 && end > ntfsMaxFileSize:
		return c.errorResponse(r, statusInvalidParameter)
	case len(req.Data) == 0:
		// Writing nothing changes nothing, not even the size.
		return c.ok(r, wire.AppendWriteResponse(nil, 0))
	case end > maxFileSize:
		return c.errorResponse(r, statusDiskFull)
	}
	ctx, cancel := c.reqCtx()
	err = o.h.WriteAt(ctx, req.Data, int64(req.Offset))
	cancel()
	if err != nil {
		return c.errorResponse(r, statusOf(err))
	}
	return c.ok(r, wire.AppendWriteResponse(nil, uint32(len(req.Data))))
}

const statusInvalidLockRange uint32 = 0xC00001A1

// lock handles LOCK: unlocks, or locks taken all-or-nothing; a lock that
// may wait and conflicts goes asynchronous and retries until granted,
// cancelled or the handle closes.
// lockSequence checks a LOCK's LockSequence against the open's buckets
// (MS-SMB2 3.3.5.14), on SMB 3 for every open (the server offers
// multichannel: a LOCK may come again on another channel) and from SMB 2.1
// for resilient ones: a bucket (1 to 64) whose last successful LOCK
// carried the same number makes the request a replay, answered with
// success and not run again. done records a success in the bucket; a
// failed LOCK leaves it empty.
func (c *conn) lockSequence(o *open, seq uint32) (done func(), replay bool) {
	idx, num := seq>>4, uint8(seq&0xF)
	o.mu.Lock()
	defer o.mu.Unlock()
	d := o.durable
	checked := c.dialect >= wire.Dialect300 || d != nil && d.resilient
	if !checked || idx < 1 || idx > 64 {
		return func() {}, false
	}
	if o.lockSeq[idx-1] == num+1 {
		return nil, true
	}
	o.lockSeq[idx-1] = 0
	return func() {
		o.mu.Lock()
		o.lockSeq[idx-1] = num + 1
		o.mu.Unlock()
	}, false
}

func (c *conn) lock(r *request) *response {
	req, err := wire.DecodeLockRequest(r.msg)
	if err != nil || len(req.Locks) > 64 {
		return c.errorResponse(r, statusInvalidParameter)
	}
	o := c.lookupOpen(r, req.FileID)
	if o == nil {
		return c.errorResponse(r, statusFileClosed)
	}
	if o.h == nil || o.isDir {
		return c.errorResponse(r, statusInvalidParameter)
	}
	// The first element says what the request is (MS-SMB2 3.3.5.14):
	// unlocks, one lock that may wait, or locks that fail immediately.
	const (
		shared, exclusive = wire.LockShared, wire.LockExclusive
		now               = wire.LockFailImmediately
	)
	unlock := false
	switch req.Locks[0].Flags {
	case shared, exclusive:
		if len(req.Locks) > 1 {
			return c.errorResponse(r, statusInvalidParameter)
		}
	case shared | now, exclusive | now:
	case wire.LockUnlock:
		unlock = true
	default:
		return c.errorResponse(r, statusInvalidParameter)
	}
	for _, l := range req.Locks {
		if unlock {
			// Unlocks run up to the first element that is not one.
			continue
		}
		if l.Flags != shared|now && l.Flags != exclusive|now && len(req.Locks) > 1 {
			return c.errorResponse(r, statusInvalidParameter)
		}
		if l.Length > 0 && l.Offset+l.Length-1 < l.Offset {
			// The range ends past 2^64.
			return c.errorResponse(r, statusInvalidLockRange)
		}
	}
	done, replay := c.lockSequence(o, req.LockSequence)
	if replay {
		return c.ok(r, wire.SmallResponse(nil))
	}
	ctx, cancel := c.reqCtx()
	defer cancel()
	if unlock {
		for _, l := range req.Locks {
			if l.Flags != wire.LockUnlock {
				return c.errorResponse(r, statusInvalidParameter)
			}
			if err := o.h.Unlock(ctx, l.Offset, l.Length); err != nil {
				return c.errorResponse(r, statusOf(err))
			}
			o.locks.Add(-1)
		}
		done()
		return c.ok(r, wire.SmallResponse(nil))
	}
	try := func(ctx context.Context) error {
		for i, l := range req.Locks {
			if err := o.h.Lock(ctx, l.Offset, l.Length, l.Flags&wire.LockExclusive != 0); err != nil {
				for _, u := range req.Locks[:i] {
					o.h.Unlock(ctx, u.Offset, u.Length)
				}
				return err
			}
		}
		o.locks.Add(int64(len(req.Locks)))
		return nil
	}
	err = try(ctx)
	if err == nil {
		done()
		return c.ok(r, wire.SmallResponse(nil))
	}
	wait := len(req.Locks) == 1 && req.Locks[0].Flags&wire.LockFailImmediately == 0
	if !errors.Is(err, ErrLockConflict) || !wait {
		if errors.Is(err, ErrLockConflict) {
			return c.errorResponse(r, statusLockNotGranted)
		}
		return c.errorResponse(r, statusOf(err))
	}
	if resp := c.midCompound(r); resp != nil {
		return resp
	}
	op, actx, interim := c.goAsync(r)
	if op == nil {
		return interim
	}
	c.work.Add(1)
	go func() {
		defer c.work.Done()
		delay := 5 * time.Millisecond
		for {
			select {
			case <-actx.Done():
				c.finishAsync(op, statusCancelled, nil)
				return
			case <-time.After(delay):
			}
			delay = min(2*delay, 100*time.Millisecond)
			ctx, cancel := context.WithTimeout(actx, time_30s)
			err := try(ctx)
			cancel()
			switch {
			case err == nil:
				done()
				c.finishAsync(op, statusSuccess, wire.SmallResponse(nil))
				return
			case errors.Is(err, ErrLockConflict):
			case actx.Err() != nil:
				c.finishAsync(op, statusCancelled, nil)
				return
			case errors.Is(err, ErrFileClosed):
				// The open was closed (CLOSE, TREE_DISCONNECT, LOGOFF)
				// while its lock waited (MS-SMB2 3.3.5.14.2).
				c.finishAsync(op, statusRangeNotLocked, nil)
				return
			default:
				c.finishAsync(op, statusOf(err), nil)
				return
			}
		}
	}()
	return interim
}

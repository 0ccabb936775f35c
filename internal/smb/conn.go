package smb

import (
	"bufio"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha512"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lazuli-storage/lazuli/internal/smb/crypt"
	"github.com/lazuli-storage/lazuli/internal/smb/ntlm"
	"github.com/lazuli-storage/lazuli/internal/smb/wire"
)

var le = binary.LittleEndian

const (
	// maxFrame bounds one transport frame: the largest READ/WRITE
	// (maxIO) plus headers and a compound's worth of small requests.
	maxIO      = 8 << 20
	maxFrame   = maxIO + 64<<10
	maxCredits = 8192
	// maxPreAuthFrame bounds frames of connections with no logon yet.
	maxPreAuthFrame = 256 << 10
	smb202MaxIO     = 64 << 10
	creditUnitIO    = 64 << 10
)

type conn struct {
	s   *Server
	nc  net.Conn
	ip  string
	ctx context.Context
	end context.CancelFunc

	wmu sync.Mutex // serializes writes to nc

	// Negotiated state: set by NEGOTIATE before anything else runs.
	negotiated    bool
	dialect       uint16
	clientGUID    [16]byte
	clientCaps    uint32
	serverCaps    uint32 // the capabilities answered (FSCTL_VALIDATE_NEGOTIATE_INFO)
	clientSecMode uint16
	dialects      []uint16
	cipherID      uint16 // 0 none, 1 AES-128-CCM, 2 AES-128-GCM, 3 AES-256-CCM, 4 AES-256-GCM
	signAlg       uint16 // 0 HMAC-SHA256, 1 AES-CMAC, 2 AES-GMAC
	preauth       [64]byte
	maxIO         uint32

	mu        sync.Mutex // guards what async operations share with the read loop
	sessions  map[uint64]*session
	async     map[uint64]*asyncOp
	nextAsync uint64
	credLo    uint64
	credHi    uint64
	used      map[uint64]struct{}
	sem       chan struct{}
	// chans holds the signing keys of the sessions bound to this
	// connection after their first channel, binds the bindings in
	// progress (multichannel.go).
	chans map[uint64]*keys
	binds map[uint64]*binding
	// preAuth is set until the first logon (counted in Server.unauth).
	preAuth bool
	// work counts goroutines of asynchronous and parallel requests;
	// cleanup waits for them.
	work sync.WaitGroup
	// reqDeadline is the context requests starting now share (reqctx.go).
	reqDeadline atomic.Pointer[deadlineCtx]
	// ended is closed once cleanup has parked or closed every open.
	ended chan struct{}
}

type session struct {
	id          uint64
	auth        *ntlm.Auth
	valid       atomic.Bool
	account     string
	preauth     [64]byte
	signRequire bool
	// keys sign the messages of the session's first channel; a channel
	// bound later has keys of its own (multichannel.go).
	keys
	encKey []byte
	decKey []byte
	encCCM *crypt.CCM
	decCCM *crypt.CCM
	encGCM cipher.AEAD
	decGCM cipher.AEAD
	nonce  atomic.Uint64
	// The negotiated state of the connection the session was set up on,
	// which a channel bound to it must match (multichannel.go).
	dialect, signAlg, cipherID uint16
	clientGUID                 [16]byte
	// chmu guards channels: the connections the session is bound to,
	// first the one it was set up on.
	chmu     sync.Mutex
	channels []*conn
	// anonymous is set while the session is re-authenticated as the
	// anonymous user (reauth.go).
	anonymous atomic.Bool

	mu       sync.Mutex // guards trees, opens, nextTree
	trees    map[uint32]*tree
	nextTree uint32
	opens    map[uint64]*open
}

type tree struct {
	id    uint32
	share string
	ipc   bool
}

type open struct {
	id     wire.FileID
	tree   *tree
	h      Handle
	pipe   *pipe
	path   string
	name   string // last component, for FileNameInformation
	isDir  bool
	access uint32
	// resumeKey names the open as the source of a server-side copy
	// (FSCTL_SRV_REQUEST_RESUME_KEY); zero until asked for.
	resumeKey [24]byte
	// alloc is the allocation size asked for at create.
	alloc uint64
	// position is the current byte offset the client set
	// (FilePositionInformation); guarded by mu.
	position uint64
	// mode is the FileModeInformation the client set; guarded by mu.
	mode uint32
	// Directory enumeration state: the enumeration reads the directory
	// afresh from dirAfter (the last name returned) at each query, so
	// names removed meanwhile are not returned. dirList holds "." and
	// ".." until returned; dirIndex numbers the entries returned.
	dirStarted bool
	dirList    []Stat
	dirAfter   string
	dirIndex   uint32
	dirDone    bool
	dirPattern string
	mu         sync.Mutex
	// locks counts the byte-range locks the open holds (for Stats).
	locks atomic.Int64
	// notify is the open's change notification; guarded by mu.
	notify *notifyState
	// lease is the lease key the open holds a lease under, if any.
	lease *[16]byte
	// lockSeq holds, per lock sequence bucket, 1 + the sequence number
	// of the last LOCK that succeeded in it (0: none); guarded by mu.
	lockSeq [64]uint8
	// durable is set for a durable open (durable.go); conn is the
	// connection it is on now (guarded by mu), nil while parked.
	durable *durable
	conn    *conn
	server  *Server
}

type asyncOp struct {
	id     uint64
	hdr    wire.Header
	sess   *session
	enc    bool
	signed bool
	cancel context.CancelFunc
	// interimSent is closed once the interim response is on the wire:
	// the final one must follow it, or the client, which no longer
	// knows the message id, drops the connection.
	interimSent chan struct{}
}

func (o *open) currentMode() uint32 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.mode
}

func (o *open) currentPosition() uint64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.position
}

func newConn(s *Server, nc net.Conn) *conn {
	c := &conn{s: s, nc: nc, sessions: map[uint64]*session{}, async: map[uint64]*asyncOp{},
		used: map[uint64]struct{}{}, credHi: 1, sem: make(chan struct{}, maxParallel), ended: make(chan struct{})}
	if a, ok := nc.RemoteAddr().(*net.TCPAddr); ok {
		c.ip = a.IP.String()
	}
	c.ctx, c.end = context.WithCancel(context.Background())
	s.unauth.Add(1)
	c.preAuth = true
	return c
}

// loggedOn records the connection's first logon.
func (c *conn) loggedOn() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.preAuth {
		c.preAuth = false
		c.s.unauth.Add(-1)
	}
}

var errDisconnect = errors.New("smb: connection ended")

// readBufSize is the read loop's buffer: a small request's frame, and
// often the next one's, comes in with its length in one read instead of
// two (smbclient's put of a 4 KiB file is three such requests). Frames
// larger than the buffer are read straight into their own memory.
const readBufSize = 8 << 10

// testHookConnLost, set by tests, runs when a connection's reader meets
// the end of its connection, before cleanup: a slow reader under load.
var testHookConnLost atomic.Pointer[func()]

func (c *conn) serve() {
	defer c.cleanup()
	var hdr [4]byte
	rd := bufio.NewReaderSize(c.nc, readBufSize)
	for {
		timeout, limit := c.s.cfg.IdleTimeout, maxFrame
		if !c.authenticated() {
			// Before a logon, frames are small (NEGOTIATE and
			// SESSION_SETUP) and must come quickly.
			timeout, limit = c.s.cfg.AuthTimeout, maxPreAuthFrame
		}
		c.nc.SetReadDeadline(time.Now().Add(timeout))
		if _, err := io.ReadFull(rd, hdr[:]); err != nil {
			if hook := testHookConnLost.Load(); hook != nil {
				(*hook)()
			}
			return
		}
		n := int(hdr[1])<<16 | int(hdr[2])<<8 | int(hdr[3])
		if hdr[0] != 0 || n < 4 || n > limit {
			return
		}
		var frame []byte
		var bp *[]byte
		if limit == maxFrame && n > 64<<10 {
			// A logged-on client's large frame (a WRITE) goes into a
			// recycled buffer.
			bp = getBuf(n)
			frame = *bp
			if _, err := io.ReadFull(rd, frame); err != nil {
				return
			}
		} else {
			// Read the frame in pieces so a client announcing a large
			// frame and sending little holds little memory.
			var err error
			if frame, err = readFrame(rd, n); err != nil {
				return
			}
		}
		if err := c.handleFrame(frame, bp); err != nil {
			return
		}
	}
}

func readFrame(r io.Reader, n int) ([]byte, error) {
	const step = 256 << 10
	buf := make([]byte, 0, min(n, step))
	for len(buf) < n {
		k := min(n-len(buf), step)
		if cap(buf)-len(buf) < k {
			nb := make([]byte, len(buf), min(n, 2*cap(buf)+k))
			copy(nb, buf)
			buf = nb
		}
		if _, err := io.ReadFull(r, buf[len(buf):len(buf)+k]); err != nil {
			return nil, err
		}
		buf = buf[:len(buf)+k]
	}
	return buf, nil
}

func (c *conn) authenticated() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.sessions {
		if s.valid.Load() {
			return true
		}
	}
	return false
}

// cleanup ends the connection: pending operations are cancelled and every
// open of every session is closed, which releases their share access,
// locks and delete-pending state in the Backend.
func (c *conn) cleanup() {
	defer close(c.ended)
	c.loggedOn() // leaves the count of connections without a logon
	c.end()
	c.nc.Close()
	c.mu.Lock()
	sessions := c.sessions
	c.sessions = map[uint64]*session{}
	for _, op := range c.async {
		op.cancel()
	}
	c.mu.Unlock()
	c.work.Wait()
	for _, s := range sessions {
		if !c.leaveSession(s) {
			c.closeSession(s)
		}
	}
}

func (o *open) close() {
	o.stopNotify()
	if o.h != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		o.h.Close(ctx)
		cancel()
	}
}

// request is one message of a frame being handled.
type request struct {
	hdr       wire.Header
	msg       []byte
	sess      *session
	tree      *tree
	encrypted bool
	fileID    wire.FileID // the related compound's current file
	// alone is set for a request that came in a frame of its own and is
	// answered in one (a parallel READ or WRITE).
	alone bool
	// more is set for a request of a compound that others follow.
	more bool
}

// midCompound answers a request that would go async (a CHANGE_NOTIFY, a
// blocking LOCK) while others follow it in a compound: Windows fails it
// with STATUS_INTERNAL_ERROR rather than hold the rest of the chain
// (MS-SMB2 3.3.4.2 <165>; smbtorture smb2.compound.interim2). It is nil
// for a request that may go async.
func (c *conn) midCompound(r *request) *response {
	if !r.more {
		return nil
	}
	return c.errorResponse(r, statusInternalError)
}

// response is the answer to one request.
type response struct {
	hdr  wire.Header
	body []byte
	// sign is the key holder for signing; nil means unsigned.
	sign *session
	// sessionKeys signs with the session's own keys and algorithm rather
	// than the channel's (a refused session binding).
	sessionKeys bool
	// post runs on the complete unsigned message (pre-auth hash).
	post func([]byte)
	// release runs once the response was sent (buffer reuse).
	release func()
	// data, when set, writes dataLen more bytes that follow body on the
	// wire (a READ's data, in a response of its own, never signed).
	data    io.WriterTo
	dataLen int64
}

// handleFrame handles one transport frame; bp, when not nil, is the
// recycled buffer holding it, which a parallel READ or WRITE gives back
// once answered (other requests may keep pieces of their frame).
func (c *conn) handleFrame(frame []byte, bp *[]byte) error {
	if len(frame) >= 4 && [4]byte(frame[:4]) == wire.SMB1ID {
		return c.handleSMB1(frame)
	}
	var encSess *session
	if len(frame) >= 4 && [4]byte(frame[:4]) == wire.TransformID {
		var err error
		if frame, encSess, err = c.decrypt(frame); err != nil {
			return err
		}
	}
	if c.goParallel(frame, encSess, bp) {
		return nil
	}
	c.drain()
	var out []*response
	var prev *request
	// prevStatus is the status of the request before; createErr that of
	// a failed CREATE (or of a chain's related first request) the
	// requests related to it inherit.
	prevStatus, createErr := statusSuccess, statusSuccess
	for len(frame) > 0 {
		hdr, err := wire.DecodeHeader(frame)
		if err != nil {
			return err
		}
		msg := frame
		if hdr.NextCommand != 0 {
			if hdr.NextCommand%8 != 0 || hdr.NextCommand < wire.HeaderSize || int(hdr.NextCommand) > len(frame) {
				return wire.ErrMalformed
			}
			msg = frame[:hdr.NextCommand]
			frame = frame[hdr.NextCommand:]
		} else {
			frame = nil
		}
		if hdr.Flags&wire.FlagServerToRedir != 0 {
			return wire.ErrMalformed
		}
		r := &request{hdr: hdr, msg: msg, encrypted: encSess != nil, more: frame != nil}
		related := hdr.Flags&wire.FlagRelated != 0 && prev != nil
		if related {
			r.hdr.SessionID, r.hdr.TreeID, r.fileID = prev.hdr.SessionID, prev.hdr.TreeID, prev.fileID
		}
		if hdr.Command == wire.Cancel {
			c.cancel(r)
			continue
		}
		if !c.useCredits(hdr.MessageID, hdr.CreditCharge) {
			return errors.New("smb: message id outside the credit window")
		}
		var resp *response
		switch {
		case hdr.Flags&wire.FlagRelated != 0 && prev == nil:
			// The first request of a compound cannot be related to
			// one before it (MS-SMB2 3.3.5.2.7.2).
			resp = c.errorResponse(r, statusInvalidParameter)
		case related && hdr.Command > wire.OplockBreak:
			resp = c.errorResponse(r, statusInvalidParameter)
		case related && (prevStatus == statusUserSessionDeleted || prevStatus == statusNetworkNameDeleted):
			// The request before found no session or tree to lend.
			resp = c.errorResponse(r, statusInvalidParameter)
		case related && createErr != statusSuccess:
			// Requests related to a failed CREATE have no file: they
			// fail as it did. Other failures are not inherited (a READ
			// after a refused WRITE still reads).
			resp = c.errorResponse(r, createErr)
		default:
			resp = c.handle(r, encSess)
		}
		if resp == nil {
			return errDisconnect
		}
		if related {
			resp.hdr.Flags |= wire.FlagRelated
		}
		resp.hdr.Credits = c.grant(hdr.Credits, hdr.CreditCharge)
		prevStatus = resp.hdr.Status
		if !related {
			createErr = statusSuccess
		}
		if hdr.Command == wire.Create && resp.hdr.Status != statusPending {
			createErr = resp.hdr.Status
		}
		if hdr.Flags&wire.FlagRelated != 0 && prev == nil {
			// A chain that starts related has nothing to relate to:
			// the requests related to it fail as it did (Windows;
			// smbtorture smb2.compound.related9).
			createErr = statusInvalidParameter
		}
		if resp.hdr.Status == statusPending {
			prevStatus = statusSuccess
		}
		prev = r
		out = append(out, resp)
	}
	if len(out) == 0 {
		return nil
	}
	err := c.send(out, encSess)
	for _, resp := range out {
		if resp.release != nil {
			resp.release()
		}
	}
	return err
}

// maxParallel bounds the READs and WRITEs of one connection that run at
// once. Clients keep many of them in flight; running them one after the
// other would leave the storage idle while the network waits.
const maxParallel = 16

// goParallel runs a frame holding a single READ or WRITE in its own
// goroutine and reports whether it did. Everything else runs in order on
// the read loop.
func (c *conn) goParallel(frame []byte, encSess *session, bp *[]byte) bool {
	if len(frame) < wire.HeaderSize {
		return false
	}
	hdr, err := wire.DecodeHeader(frame)
	if err != nil || hdr.NextCommand != 0 || hdr.Flags&(wire.FlagServerToRedir|wire.FlagRelated) != 0 ||
		(hdr.Command != wire.Read && hdr.Command != wire.Write) || !c.negotiated {
		return false
	}
	if !c.useCredits(hdr.MessageID, hdr.CreditCharge) {
		c.nc.Close()
		return true
	}
	select {
	case c.sem <- struct{}{}:
	case <-c.ctx.Done():
		return true
	}
	c.work.Add(1)
	c.s.workers.run(func() {
		defer c.work.Done()
		defer func() { <-c.sem }()
		r := &request{hdr: hdr, msg: frame, encrypted: encSess != nil, alone: true}
		resp := c.handle(r, encSess)
		if resp == nil {
			c.nc.Close()
			return
		}
		resp.hdr.Credits = c.grant(hdr.Credits, hdr.CreditCharge)
		if err := c.send([]*response{resp}, encSess); err != nil {
			c.nc.Close()
		}
		if resp.release != nil {
			resp.release()
		}
		if bp != nil {
			putBuf(bp)
		}
	})
	return true
}

// drain waits for the parallel READs and WRITEs in flight, so that any
// other request (a CLOSE or FLUSH after pipelined WRITEs, say) sees their
// effects, as it would from a server running requests in order.
func (c *conn) drain() {
	if len(c.sem) == 0 {
		return
	}
	for i := 0; i < maxParallel; i++ {
		c.sem <- struct{}{}
	}
	for i := 0; i < maxParallel; i++ {
		<-c.sem
	}
}

// handle runs one request and returns its response (nil: disconnect).
func (c *conn) handle(r *request, encSess *session) *response {
	h := &r.hdr
	if !c.negotiated && h.Command != wire.Negotiate {
		return nil
	}
	switch h.Command {
	case wire.Negotiate:
		return c.negotiate(r)
	case wire.SessionSetup:
		return c.sessionSetup(r)
	case wire.Echo:
		if err := wire.DecodeSmall(r.msg); err != nil {
			return c.errorResponse(r, statusInvalidParameter)
		}
		return c.ok(r, wire.SmallResponse(nil))
	}
	// Everything else needs a valid session.
	c.mu.Lock()
	s := c.sessions[h.SessionID]
	c.mu.Unlock()
	if s == nil || !s.valid.Load() {
		resp := c.errorResponse(r, statusUserSessionDeleted)
		if h.Flags&wire.FlagSigned != 0 {
			// Flagged signed, with no signature to check: a client
			// that signs (a session bound to another channel, say)
			// takes no unsigned answer (MS-SMB2 3.2.5.1.3).
			resp.hdr.Flags |= wire.FlagSigned
		}
		return resp
	}
	if encSess != nil && encSess != s {
		return c.errorResponse(r, statusAccessDenied)
	}
	r.sess = s
	if encSess == nil {
		if h.Flags&wire.FlagSigned != 0 {
			if !c.verify(s, r.msg) {
				return c.errorResponse(r, statusAccessDenied)
			}
		} else if s.signRequire {
			return c.errorResponse(r, statusAccessDenied)
		}
	}
	switch h.Command {
	case wire.Logoff:
		return c.logoff(r)
	case wire.TreeConnect:
		return c.treeConnect(r)
	}
	s.mu.Lock()
	t := s.trees[h.TreeID]
	s.mu.Unlock()
	if t == nil {
		return c.errorResponse(r, statusNetworkNameDeleted)
	}
	r.tree = t
	switch h.Command {
	case wire.TreeDisconnect:
		return c.treeDisconnect(r)
	case wire.Create:
		return c.createAsync(r)
	case wire.Close:
		return c.closeFile(r)
	case wire.Flush:
		return c.flush(r)
	case wire.Read:
		return c.read(r)
	case wire.Write:
		return c.write(r)
	case wire.Lock:
		return c.lock(r)
	case wire.Ioctl:
		return c.ioctl(r)
	case wire.QueryDirectory:
		return c.queryDirectory(r)
	case wire.QueryInfo:
		return c.queryInfo(r)
	case wire.SetInfo:
		return c.setInfoAsync(r)
	case wire.ChangeNotify:
		return c.changeNotify(r)
	case wire.OplockBreak:
		return c.oplockBreak(r)
	}
	return c.errorResponse(r, statusNotSupported)
}

func (c *conn) newResponse(r *request, status uint32, body []byte) *response {
	resp := &response{hdr: wire.Header{Status: status, Command: r.hdr.Command, Flags: wire.FlagServerToRedir,
		MessageID: r.hdr.MessageID, SessionID: r.hdr.SessionID, TreeID: r.hdr.TreeID, CreditCharge: r.hdr.CreditCharge}, body: body}
	if r.sess != nil && !r.encrypted && r.hdr.Flags&wire.FlagSigned != 0 {
		resp.sign = r.sess
	}
	return resp
}

func (c *conn) ok(r *request, body []byte) *response { return c.newResponse(r, statusSuccess, body) }

func (c *conn) errorResponse(r *request, status uint32) *response {
	return c.newResponse(r, status, wire.ErrorResponse(nil))
}

// useCredits checks that the message ids [mid, mid+charge) were granted
// and not used, and consumes them.
func (c *conn) useCredits(mid uint64, charge uint16) bool {
	n := uint64(max(charge, 1))
	c.mu.Lock()
	defer c.mu.Unlock()
	if mid < c.credLo || mid+n > c.credHi || mid+n < mid {
		return false
	}
	for i := mid; i < mid+n; i++ {
		if _, dup := c.used[i]; dup {
			return false
		}
	}
	for i := mid; i < mid+n; i++ {
		c.used[i] = struct{}{}
	}
	for {
		if _, ok := c.used[c.credLo]; !ok {
			break
		}
		delete(c.used, c.credLo)
		c.credLo++
	}
	return true
}

// grant extends the credit window by what the client asks, keeping at
// most maxCredits outstanding and never leaving the client with none.
func (c *conn) grant(want, charge uint16) uint16 {
	c.mu.Lock()
	defer c.mu.Unlock()
	outstanding := c.credHi - c.credLo - uint64(len(c.used))
	g := uint64(max(want, 1))
	if outstanding+g > maxCredits {
		g = 0
		if maxCredits > outstanding {
			g = maxCredits - outstanding
		}
	}
	if g == 0 && outstanding == 0 {
		g = 1
	}
	c.credHi += g
	return uint16(g)
}

// send writes responses as one compound frame, signing each and
// encrypting the whole when the request was encrypted.
func (c *conn) send(out []*response, encSess *session) error {
	if len(out) == 1 && encSess == nil && out[0].sign == nil && out[0].post == nil {
		// One plain message: its header and body leave in one writev,
		// without copying a READ's data.
		resp := out[0]
		buf := resp.hdr.Append(make([]byte, 4, 4+wire.HeaderSize))
		n := len(buf) - 4 + len(resp.body) + int(resp.dataLen)
		buf[0], buf[1], buf[2], buf[3] = 0, byte(n>>16), byte(n>>8), byte(n)
		bufs := net.Buffers{buf, resp.body}
		c.wmu.Lock()
		defer c.wmu.Unlock()
		c.nc.SetWriteDeadline(time.Now().Add(2 * time.Minute))
		if _, err := bufs.WriteTo(c.nc); err != nil || resp.data == nil {
			return err
		}
		// The frame's length is on the wire: a failure or a short
		// write now can only end the connection.
		k, err := resp.data.WriteTo(c.nc)
		if err == nil && k != resp.dataLen {
			err = io.ErrShortWrite
		}
		return err
	}
	var buf []byte
	if encSess != nil {
		buf = make([]byte, 4+wire.TransformHeaderSize, 4+wire.TransformHeaderSize+256)
	} else {
		buf = make([]byte, 4, 256)
	}
	base := len(buf)
	for i, resp := range out {
		start := len(buf)
		if resp.sign != nil && resp.hdr.Status != statusPending {
			resp.hdr.Flags |= wire.FlagSigned
		}
		buf = resp.hdr.Append(buf)
		buf = append(buf, resp.body...)
		if i < len(out)-1 {
			buf = wire.Pad8(buf, start)
			le.PutUint32(buf[start+20:], uint32(len(buf)-start))
		}
		if resp.hdr.Flags&wire.FlagSigned != 0 && resp.sign != nil {
			if resp.sessionKeys {
				m := buf[start:]
				clear(m[48:64])
				sig := resp.sign.keys.sign(resp.sign.dialect, resp.sign.signAlg, m)
				copy(m[48:64], sig[:])
			} else {
				c.signMsg(resp.sign, buf[start:])
			}
		}
		if resp.post != nil {
			// The pre-authentication hash covers the message as sent,
			// signature included (a session binding's).
			resp.post(buf[start:])
		}
	}
	if encSess != nil {
		c.encrypt(encSess, buf[4:], buf[base:])
	}
	n := len(buf) - 4
	buf[0], buf[1], buf[2], buf[3] = 0, byte(n>>16), byte(n>>8), byte(n)
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.nc.SetWriteDeadline(time.Now().Add(2 * time.Minute))
	_, err := c.nc.Write(buf)
	return err
}

// signMsg signs one message in place (MS-SMB2 §3.1.4.1).
func (c *conn) signMsg(s *session, m []byte) {
	clear(m[48:64])
	sig := c.signature(s, m)
	copy(m[48:64], sig[:])
}

func (c *conn) signature(s *session, m []byte) [16]byte {
	return c.keysOf(s).sign(c.dialect, c.signAlg, m)
}

func (c *conn) verify(s *session, m []byte) bool {
	return c.keysOf(s).verify(c.dialect, c.signAlg, m)
}

// encrypt fills the transform header at th (52 bytes, followed by the
// plaintext) and encrypts in place.
func (c *conn) encrypt(s *session, th []byte, plain []byte) {
	n := s.nonce.Add(1)
	t := wire.TransformHeader{OriginalMessageSize: uint32(len(plain)), Flags: 1, SessionID: s.id}
	le.PutUint64(t.Nonce[:], n)
	rand.Read(t.Nonce[8:11])
	if c.gcm() {
		rand.Read(t.Nonce[8:12])
	} else {
		clear(t.Nonce[11:])
	}
	hdr := t.Append(th[:0])
	aad := hdr[20:wire.TransformHeaderSize]
	if c.gcm() {
		sealed := s.encGCM.Seal(plain[:0], t.Nonce[:12], plain, aad)
		copy(th[4:20], sealed[len(plain):])
		return
	}
	tag := s.encCCM.Seal(t.Nonce[:11], plain, aad)
	copy(th[4:20], tag[:])
}

func (c *conn) decrypt(frame []byte) ([]byte, *session, error) {
	t, err := wire.DecodeTransformHeader(frame)
	if err != nil || c.cipherID == 0 || t.Flags != 1 {
		return nil, nil, wire.ErrMalformed
	}
	c.mu.Lock()
	s := c.sessions[t.SessionID]
	c.mu.Unlock()
	if s == nil || s.decKey == nil {
		return nil, nil, errors.New("smb: encrypted message for an unknown session")
	}
	data := frame[wire.TransformHeaderSize:]
	if int(t.OriginalMessageSize) != len(data) {
		return nil, nil, wire.ErrMalformed
	}
	aad := frame[20:wire.TransformHeaderSize]
	if c.gcm() {
		ct := append(data, t.Signature[:]...) // data is the frame's tail: no realloc needed? be safe below
		plain, err := s.decGCM.Open(data[:0], t.Nonce[:12], ct, aad)
		if err != nil {
			return nil, nil, err
		}
		return plain, s, nil
	}
	if err := s.decCCM.Open(t.Nonce[:11], data, aad, t.Signature[:]); err != nil {
		return nil, nil, err
	}
	return data, s, nil
}

// cancel handles CANCEL: it ends the matching pending operation, whose
// final response then carries STATUS_CANCELLED.
func (c *conn) cancel(r *request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, op := range c.async {
		if (r.hdr.Flags&wire.FlagAsync != 0 && op.id == r.hdr.AsyncID) ||
			(r.hdr.Flags&wire.FlagAsync == 0 && op.hdr.MessageID == r.hdr.MessageID) {
			op.cancel()
		}
	}
}

// goAsync registers a pending operation and returns its interim
// response; the caller runs the operation and calls finishAsync.
func (c *conn) goAsync(r *request) (*asyncOp, context.Context, *response) {
	c.mu.Lock()
	if len(c.async) >= c.s.cfg.MaxAsyncPerConn {
		c.mu.Unlock()
		return nil, nil, c.errorResponse(r, statusInsufficientResources)
	}
	c.nextAsync++
	ctx, cancel := context.WithCancel(c.ctx)
	op := &asyncOp{id: c.nextAsync, hdr: r.hdr, sess: r.sess, enc: r.encrypted,
		signed: r.hdr.Flags&wire.FlagSigned != 0, cancel: cancel, interimSent: make(chan struct{})}
	c.async[op.id] = op
	c.mu.Unlock()
	resp := c.errorResponse(r, statusPending)
	resp.hdr.Flags |= wire.FlagAsync
	resp.hdr.AsyncID = op.id
	resp.release = func() { close(op.interimSent) }
	return op, ctx, resp
}

func (c *conn) finishAsync(op *asyncOp, status uint32, body []byte) {
	c.mu.Lock()
	delete(c.async, op.id)
	c.mu.Unlock()
	op.cancel()
	select {
	case <-op.interimSent:
	case <-c.ctx.Done():
		return // the connection ended before the interim response left
	}
	if body == nil {
		body = wire.ErrorResponse(nil)
	}
	resp := &response{hdr: wire.Header{Status: status, Command: op.hdr.Command,
		Flags: wire.FlagServerToRedir | wire.FlagAsync, MessageID: op.hdr.MessageID, AsyncID: op.id,
		SessionID: op.hdr.SessionID, CreditCharge: op.hdr.CreditCharge}, body: body}
	if op.signed && !op.enc {
		resp.sign = op.sess
	}
	var enc *session
	if op.enc {
		enc = op.sess
	}
	if err := c.send([]*response{resp}, enc); err != nil {
		c.nc.Close()
	}
}

// deriveKeys sets a session's signing and encryption keys from the
// authentication's session key (MS-SMB2 §3.3.5.5.3).
func (c *conn) deriveKeys(s *session, key []byte) error {
	k := make([]byte, 16)
	copy(k, key)
	s.dialect, s.signAlg, s.cipherID, s.clientGUID = c.dialect, c.signAlg, c.cipherID, c.clientGUID
	switch c.dialect {
	case wire.Dialect202, wire.Dialect210:
		s.signKey = k
		return nil
	case wire.Dialect300, wire.Dialect302:
		s.encKey = crypt.KDF(k, []byte("SMB2AESCCM\x00"), []byte("ServerOut\x00"))
		s.decKey = crypt.KDF(k, []byte("SMB2AESCCM\x00"), []byte("ServerIn \x00"))
	default:
		s.encKey = crypt.KDF(k, []byte("SMBS2CCipherKey\x00"), s.preauth[:])
		s.decKey = crypt.KDF(k, []byte("SMBC2SCipherKey\x00"), s.preauth[:])
	}
	var err error
	if s.keys, err = c.signingKeys(key, s.preauth); err != nil {
		return err
	}
	if c.cipherID == 3 || c.cipherID == 4 {
		// The 256-bit ciphers take 256-bit keys from the whole session
		// key (MS-SMB2 3.3.5.5.3).
		s.encKey = crypt.KDF256(key, []byte("SMBS2CCipherKey\x00"), s.preauth[:])
		s.decKey = crypt.KDF256(key, []byte("SMBC2SCipherKey\x00"), s.preauth[:])
	}
	switch c.cipherID {
	case 1, 3:
		s.encCCM, _ = crypt.NewCCM(s.encKey)
		s.decCCM, _ = crypt.NewCCM(s.decKey)
	case 2, 4:
		b, _ := aes.NewCipher(s.encKey)
		s.encGCM, _ = cipher.NewGCM(b)
		b, _ = aes.NewCipher(s.decKey)
		s.decGCM, _ = cipher.NewGCM(b)
	}
	return nil
}

// gcm reports whether the negotiated cipher is AES-GCM (else AES-CCM).
func (c *conn) gcm() bool { return c.cipherID == 2 || c.cipherID == 4 }

func sha512Chain(prev [64]byte, msg []byte) [64]byte {
	h := sha512.New()
	h.Write(prev[:])
	h.Write(msg)
	var out [64]byte
	copy(out[:], h.Sum(nil))
	return out
}

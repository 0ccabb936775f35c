package smb

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"strings"

	"github.com/lazuli-storage/lazuli/internal/smb/ntlm"
	"github.com/lazuli-storage/lazuli/internal/smb/wire"
)

var supportedDialects = []uint16{wire.Dialect311, wire.Dialect302, wire.Dialect300, wire.Dialect210, wire.Dialect202}

// negotiate handles NEGOTIATE (MS-SMB2 §3.3.5.4).
func (c *conn) negotiate(r *request) *response {
	if c.negotiated {
		return nil // a second NEGOTIATE ends the connection
	}
	req, err := wire.DecodeNegotiateRequest(r.msg)
	if err != nil {
		return c.errorResponse(r, statusInvalidParameter)
	}
	dialect := uint16(0)
	for _, d := range supportedDialects {
		for _, cd := range req.Dialects {
			if cd == d && dialect == 0 {
				dialect = d
			}
		}
	}
	if dialect == 0 {
		return c.errorResponse(r, statusNotSupported)
	}
	c.dialect, c.clientGUID, c.clientCaps, c.clientSecMode, c.dialects =
		dialect, req.ClientGUID, req.Capabilities, req.SecurityMode, req.Dialects
	resp := &wire.NegotiateResponse{SecurityMode: wire.SigningEnabled, Dialect: dialect, ServerGUID: c.s.guid,
		MaxTransactSize: maxIO, MaxReadSize: maxIO, MaxWriteSize: maxIO,
		SystemTime: fileTime(c.s.cfg.Now()), SecurityBuffer: ntlm.InitialToken()}
	c.maxIO = maxIO
	if dialect == wire.Dialect202 {
		resp.MaxTransactSize, resp.MaxReadSize, resp.MaxWriteSize = smb202MaxIO, smb202MaxIO, smb202MaxIO
		c.maxIO = smb202MaxIO
	} else {
		// SMB 2.1 on: leases (lease.go).
		resp.Capabilities |= wire.CapLargeMTU | wire.CapLeasing
	}
	if c.dirLeasing() {
		resp.Capabilities |= wire.CapDirectoryLeasing
	}
	if (dialect == wire.Dialect300 || dialect == wire.Dialect302) && req.Capabilities&wire.CapEncryption != 0 {
		resp.Capabilities |= wire.CapEncryption
		c.cipherID = 1
	}
	if dialect >= wire.Dialect300 {
		// Channels may be bound to a session (multichannel.go).
		resp.Capabilities |= wire.CapMultiChannel
	}
	if dialect >= wire.Dialect300 {
		c.signAlg = 1
	}
	var post func([]byte)
	if dialect == wire.Dialect311 {
		havePreauth := false
		for _, ctx := range req.Contexts {
			switch ctx.Type {
			case wire.CtxPreauthIntegrity:
				if len(ctx.Data) < 4 {
					return c.errorResponse(r, statusInvalidParameter)
				}
				n := int(le.Uint16(ctx.Data))
				for i := 0; i < n && 4+2*i+2 <= len(ctx.Data); i++ {
					if le.Uint16(ctx.Data[4+2*i:]) == 1 {
						havePreauth = true
					}
				}
			case wire.CtxEncryption:
				if len(ctx.Data) < 2 {
					return c.errorResponse(r, statusInvalidParameter)
				}
				n := int(le.Uint16(ctx.Data))
				for i := 0; i < n && 2+2*i+2 <= len(ctx.Data) && c.cipherID == 0; i++ {
					if id := le.Uint16(ctx.Data[2+2*i:]); id >= 1 && id <= 4 {
						c.cipherID = id
					}
				}
			case wire.CtxSigning:
				if len(ctx.Data) < 2 {
					return c.errorResponse(r, statusInvalidParameter)
				}
				n := int(le.Uint16(ctx.Data))
				chosen := -1
				for i := 0; i < n && 2+2*i+2 <= len(ctx.Data) && chosen < 0; i++ {
					if id := le.Uint16(ctx.Data[2+2*i:]); id <= 2 {
						chosen = int(id)
					}
				}
				if chosen >= 0 {
					c.signAlg = uint16(chosen)
					resp.Contexts = append(resp.Contexts, wire.NegotiateContext{Type: wire.CtxSigning,
						Data: le.AppendUint16(le.AppendUint16(nil, 1), c.signAlg)})
				}
			}
		}
		if !havePreauth {
			return c.errorResponse(r, statusInvalidParameter)
		}
		salt := make([]byte, 32)
		rand.Read(salt)
		pre := le.AppendUint16(le.AppendUint16(le.AppendUint16(nil, 1), 32), 1)
		resp.Contexts = append([]wire.NegotiateContext{{Type: wire.CtxPreauthIntegrity, Data: append(pre, salt...)}}, resp.Contexts...)
		if c.cipherID != 0 {
			resp.Contexts = append(resp.Contexts, wire.NegotiateContext{Type: wire.CtxEncryption,
				Data: le.AppendUint16(le.AppendUint16(nil, 1), c.cipherID)})
		}
		c.preauth = sha512Chain(c.preauth, r.msg)
		post = func(m []byte) { c.preauth = sha512Chain(c.preauth, m) }
	}
	c.negotiated = true
	c.serverCaps = resp.Capabilities
	out := c.ok(r, resp.Append(nil))
	out.post = post
	return out
}

// handleSMB1 answers an SMB1 NEGOTIATE that offers SMB 2 (how Windows and
// older clients start) with an SMB2 NEGOTIATE response; any other SMB1
// message ends the connection.
func (c *conn) handleSMB1(frame []byte) error {
	if c.negotiated || len(frame) < 35 || frame[4] != 0x72 {
		return wire.ErrMalformed
	}
	dialects := frame[35:]
	var d uint16
	switch {
	case bytes.Contains(dialects, []byte("\x02SMB 2.???\x00")):
		d = wire.DialectWildcard
	case bytes.Contains(dialects, []byte("\x02SMB 2.002\x00")):
		d = wire.Dialect202
	default:
		return errors.New("smb: SMB1 is not supported")
	}
	if !c.useCredits(0, 0) {
		return wire.ErrMalformed
	}
	resp := &wire.NegotiateResponse{SecurityMode: wire.SigningEnabled, Dialect: d, ServerGUID: c.s.guid,
		MaxTransactSize: smb202MaxIO, MaxReadSize: smb202MaxIO, MaxWriteSize: smb202MaxIO,
		SystemTime: fileTime(c.s.cfg.Now()), SecurityBuffer: ntlm.InitialToken()}
	if d == wire.Dialect202 {
		c.negotiated, c.dialect, c.maxIO = true, d, smb202MaxIO
	}
	r := &request{hdr: wire.Header{Command: wire.Negotiate}}
	out := c.ok(r, resp.Append(nil))
	out.hdr.Credits = c.grant(1, 0)
	return c.send([]*response{out}, nil)
}

// sessionSetup handles SESSION_SETUP (MS-SMB2 §3.3.5.5).
func (c *conn) sessionSetup(r *request) *response {
	req, err := wire.DecodeSessionSetupRequest(r.msg)
	if err != nil {
		return c.errorResponse(r, statusInvalidParameter)
	}
	if req.Flags&wire.SessionSetupBinding != 0 {
		return c.bind(r, req)
	}
	c.mu.Lock()
	var s *session
	if r.hdr.SessionID == 0 {
		if len(c.sessions) >= c.s.cfg.MaxSessionsPerConn {
			c.mu.Unlock()
			return c.errorResponse(r, statusInsufficientResources)
		}
		s = &session{trees: map[uint32]*tree{}, opens: map[uint64]*open{}, preauth: c.preauth}
		for s.id == 0 || c.sessions[s.id] != nil || !c.s.registerSession(s) {
			var b [8]byte
			rand.Read(b[:])
			s.id = le.Uint64(b[:]) &^ (1 << 63)
		}
		c.sessions[s.id] = s
	} else {
		s = c.sessions[r.hdr.SessionID]
	}
	c.mu.Unlock()
	if s == nil {
		resp := c.errorResponse(r, statusUserSessionDeleted)
		if r.hdr.Flags&wire.FlagSigned != 0 {
			resp.hdr.Flags |= wire.FlagSigned // as in handle
		}
		return resp
	}
	// unsignedLater is set for a re-authentication sent unsigned on a
	// channel bound later, whose key only the client that bound it
	// knows: its credentials are checked all the same (bad ones end the
	// session with STATUS_LOGON_FAILURE, as on Windows: smbtorture
	// smb2.session.bind_invalid_auth), but good ones do not let it in.
	unsignedLater := false
	if s.valid.Load() {
		// A re-authentication is signed with the channel's key.
		signed := r.hdr.Flags&wire.FlagSigned != 0
		if signed && !c.verify(s, r.msg) {
			resp := c.errorResponse(r, statusAccessDenied)
			resp.hdr.Flags |= wire.FlagSigned // as in handle
			return resp
		}
		unsignedLater = !signed && c.boundLater(s)
	}
	r.hdr.SessionID = s.id
	if s.valid.Load() && s.auth == nil {
		// Re-authentication of an established session, which may be
		// as the anonymous user (reauth.go).
		s.auth = c.s.auth.NewAuth()
		s.auth.AllowAnonymous = true
	}
	if s.auth == nil {
		s.auth = c.s.auth.NewAuth()
	}
	if c.dialect == wire.Dialect311 && !s.valid.Load() {
		s.preauth = sha512Chain(s.preauth, r.msg)
	}
	token, done, err := s.auth.Step(req.SecurityBuffer)
	if err != nil {
		s.auth = nil
		if !s.valid.Load() {
			c.dropSession(s)
		} else {
			// A failed re-authentication ends the session (smbtorture
			// smb2.notify.invalid-reauth).
			c.endSession(s)
		}
		status := statusLogonFailure
		switch {
		case errors.Is(err, ntlm.ErrAnonymous):
			status = statusAccessDenied
		case errors.Is(err, ntlm.ErrMalformed):
			status = statusInvalidParameter
		}
		c.s.cfg.Log.Info("smb logon refused", "client", c.ip, "err", err)
		return c.errorResponse(r, status)
	}
	if !done {
		out := c.newResponse(r, statusMoreProcessingRequired, wire.AppendSessionSetupResponse(nil, 0, token))
		if c.dialect == wire.Dialect311 && !s.valid.Load() {
			out.post = func(m []byte) { s.preauth = sha512Chain(s.preauth, m) }
		}
		return out
	}
	auth := s.auth
	s.auth = nil
	account, _, _ := c.s.account(auth.User)
	if s.valid.Load() {
		if unsignedLater {
			return c.errorResponse(r, statusAccessDenied)
		}
		return c.reauthenticated(r, s, auth, account, token)
	}
	if err := c.deriveKeys(s, auth.SessionKey()); err != nil {
		return c.errorResponse(r, statusInternalError)
	}
	s.account = account
	s.signRequire = req.SecurityMode&uint8(wire.SigningRequired) != 0 || c.clientSecMode&wire.SigningRequired != 0
	s.chmu.Lock()
	s.channels = []*conn{c}
	s.chmu.Unlock()
	s.valid.Store(true)
	c.loggedOn()
	c.endPrevious(req.PreviousSessionID, s)
	out := c.ok(r, wire.AppendSessionSetupResponse(nil, 0, token))
	out.sign = s
	return out
}

// account finds the account of a user name (case-insensitive).
func (s *Server) account(user string) (string, []string, bool) {
	if s.cfg.Passwords == nil {
		return "", nil, false
	}
	name := strings.ToLower(user)
	pw, ok := s.cfg.Passwords(name)
	return name, pw, ok
}

func (c *conn) logoff(r *request) *response {
	if err := wire.DecodeSmall(r.msg); err != nil {
		return c.errorResponse(r, statusInvalidParameter)
	}
	c.dropSession(r.sess)
	c.closeSession(r.sess)
	return c.ok(r, wire.SmallResponse(nil))
}

// treeConnect handles TREE_CONNECT: the share must be one of the
// account's File service shares, or IPC$.
func (c *conn) treeConnect(r *request) *response {
	path, err := wire.DecodeTreeConnectRequest(r.msg)
	if err != nil {
		return c.errorResponse(r, statusInvalidParameter)
	}
	share := path
	if i := strings.LastIndexByte(path, '\\'); i >= 0 {
		share = path[i+1:]
	}
	if !strings.HasPrefix(path, `\\`) || strings.Count(path, `\`) != 3 || share == "" {
		return c.errorResponse(r, statusBadNetworkName)
	}
	t := &tree{share: strings.ToLower(share)}
	if strings.EqualFold(share, "IPC$") {
		t.ipc = true
	} else {
		if !r.sess.mayAccessShare() {
			return c.errorResponse(r, statusAccessDenied)
		}
		ctx, cancel := context.WithTimeout(c.ctx, time_30s)
		err := c.s.cfg.Backend.ShareExists(ctx, r.sess.account, t.share)
		cancel()
		if err != nil {
			return c.errorResponse(r, statusOf(err))
		}
	}
	s := r.sess
	s.mu.Lock()
	if len(s.trees) >= 1024 {
		s.mu.Unlock()
		return c.errorResponse(r, statusInsufficientResources)
	}
	s.nextTree++
	t.id = s.nextTree
	s.trees[t.id] = t
	s.mu.Unlock()
	r.hdr.TreeID = t.id
	typ := wire.ShareTypeDisk
	if t.ipc {
		typ = wire.ShareTypePipe
	}
	out := c.ok(r, wire.AppendTreeConnectResponse(nil, typ, 0, 0, FileAllAccess))
	out.hdr.TreeID = t.id
	return out
}

func (c *conn) treeDisconnect(r *request) *response {
	if err := wire.DecodeSmall(r.msg); err != nil {
		return c.errorResponse(r, statusInvalidParameter)
	}
	s := r.sess
	var closing []*open
	s.mu.Lock()
	delete(s.trees, r.tree.id)
	for id, o := range s.opens {
		if o.tree == r.tree {
			closing = append(closing, o)
			delete(s.opens, id)
		}
	}
	s.mu.Unlock()
	for _, o := range closing {
		o.close()
	}
	return c.ok(r, wire.SmallResponse(nil))
}

// ioctl handles IOCTL: FSCTL_VALIDATE_NEGOTIATE_INFO, server-side copy,
// sparse files and, on IPC$ pipes, FSCTL_PIPE_TRANSCEIVE; everything else
// is not supported.
func (c *conn) ioctl(r *request) *response {
	req, err := wire.DecodeIoctlRequest(r.msg)
	if err != nil {
		return c.errorResponse(r, statusInvalidParameter)
	}
	switch req.CtlCode {
	case wire.FsctlValidateNegotiateInfo:
		if c.dialect == wire.Dialect311 {
			return nil // 3.1.1 clients rely on pre-auth integrity instead
		}
		in := req.Input
		if len(in) < 24 {
			return c.errorResponse(r, statusInvalidParameter)
		}
		n := int(le.Uint16(in[22:]))
		if len(in) < 24+2*n || le.Uint32(in) != c.clientCaps || [16]byte(in[4:20]) != c.clientGUID ||
			le.Uint16(in[20:]) != c.clientSecMode || n != len(c.dialects) {
			return nil
		}
		for i := 0; i < n; i++ {
			if le.Uint16(in[24+2*i:]) != c.dialects[i] {
				return nil
			}
		}
		out := le.AppendUint32(nil, c.serverCaps)
		out = append(out, c.s.guid[:]...)
		out = le.AppendUint16(out, wire.SigningEnabled)
		out = le.AppendUint16(out, c.dialect)
		return c.ok(r, wire.AppendIoctlResponse(nil, req.CtlCode, req.FileID, out))
	case fsctlQueryNetworkInterfaceInfo:
		if c.dialect >= wire.Dialect300 {
			return c.networkInterfaces(r, req)
		}
	case wire.FsctlSrvRequestResumeKey:
		return c.requestResumeKey(r, req)
	case wire.FsctlSrvCopyChunk, wire.FsctlSrvCopyChunkWrite:
		return c.copyChunk(r, req)
	case fsctlSetSparse:
		return c.setSparse(r, req)
	case fsctlSetZeroData:
		return c.setZeroData(r, req)
	case fsctlQueryAllocatedRanges:
		return c.queryAllocatedRanges(r, req)
	case fsctlFileLevelTrim:
		return c.fileLevelTrim(r, req)
	case fsctlLmrRequestResiliency:
		return c.requestResiliency(r, req)
	case wire.FsctlPipeTransceive:
		o := c.lookupOpen(r, req.FileID)
		if o == nil {
			return c.errorResponse(r, statusFileClosed)
		}
		if o.pipe == nil {
			return c.errorResponse(r, statusInvalidDeviceRequest)
		}
		o.pipe.write(req.Input)
		out := o.pipe.read(int(req.MaxOutputResponse))
		status := statusSuccess
		if o.pipe.pending() > 0 {
			status = statusBufferOverflow
		}
		return c.newResponse(r, status, wire.AppendIoctlResponse(nil, req.CtlCode, req.FileID, out))
	}
	return c.unsupportedFsctl(r, req)
}

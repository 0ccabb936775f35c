package wire

// NegotiateRequest is the NEGOTIATE request (MS-SMB2 §2.2.3).
type NegotiateRequest struct {
	SecurityMode uint16
	Capabilities uint32
	ClientGUID   [16]byte
	Dialects     []uint16
	Contexts     []NegotiateContext
}

// NegotiateContext is one negotiate context (MS-SMB2 §2.2.3.1).
type NegotiateContext struct {
	Type uint16
	Data []byte
}

// Negotiate context types.
const (
	CtxPreauthIntegrity uint16 = 1
	CtxEncryption       uint16 = 2
	CtxCompression      uint16 = 3
	CtxNetname          uint16 = 5
	CtxTransport        uint16 = 6
	CtxRDMA             uint16 = 7
	CtxSigning          uint16 = 8
)

// Security modes and capabilities.
const (
	SigningEnabled  uint16 = 1
	SigningRequired uint16 = 2

	CapDFS               uint32 = 0x01
	CapLeasing           uint32 = 0x02
	CapLargeMTU          uint32 = 0x04
	CapMultiChannel      uint32 = 0x08
	CapPersistentHandles uint32 = 0x10
	CapDirectoryLeasing  uint32 = 0x20
	CapEncryption        uint32 = 0x40
)

// DecodeNegotiateRequest decodes a NEGOTIATE request message.
func DecodeNegotiateRequest(msg []byte) (*NegotiateRequest, error) {
	b, err := body(msg, 36)
	if err != nil {
		return nil, err
	}
	r := &NegotiateRequest{SecurityMode: le.Uint16(b[4:]), Capabilities: le.Uint32(b[8:])}
	copy(r.ClientGUID[:], b[12:28])
	n := int(le.Uint16(b[2:]))
	if n == 0 || len(b) < 36+2*n {
		return nil, ErrMalformed
	}
	for i := 0; i < n; i++ {
		r.Dialects = append(r.Dialects, le.Uint16(b[36+2*i:]))
	}
	off, cnt := le.Uint32(b[28:]), int(le.Uint16(b[32:]))
	hasContexts := false
	for _, d := range r.Dialects {
		hasContexts = hasContexts || d == Dialect311
	}
	if hasContexts && cnt > 0 {
		r.Contexts, err = decodeNegotiateContexts(msg, off, cnt)
		if err != nil {
			return nil, err
		}
	}
	return r, nil
}

func decodeNegotiateContexts(msg []byte, off uint32, cnt int) ([]NegotiateContext, error) {
	if cnt > 64 {
		return nil, ErrMalformed
	}
	var out []NegotiateContext
	p := uint64(off)
	for i := 0; i < cnt; i++ {
		p = (p + 7) &^ 7
		if p+8 > uint64(len(msg)) {
			return nil, ErrMalformed
		}
		typ, n := le.Uint16(msg[p:]), uint64(le.Uint16(msg[p+2:]))
		if p+8+n > uint64(len(msg)) {
			return nil, ErrMalformed
		}
		out = append(out, NegotiateContext{Type: typ, Data: msg[p+8 : p+8+n]})
		p += 8 + n
	}
	return out, nil
}

// NegotiateResponse is the NEGOTIATE response (MS-SMB2 §2.2.4).
type NegotiateResponse struct {
	SecurityMode    uint16
	Dialect         uint16
	ServerGUID      [16]byte
	Capabilities    uint32
	MaxTransactSize uint32
	MaxReadSize     uint32
	MaxWriteSize    uint32
	SystemTime      uint64
	ServerStartTime uint64
	SecurityBuffer  []byte
	Contexts        []NegotiateContext
}

// Append appends the body of r to msg, which holds the header.
func (r *NegotiateResponse) Append(msg []byte) []byte {
	start := len(msg) - HeaderSize
	msg = le.AppendUint16(msg, 65)
	msg = le.AppendUint16(msg, r.SecurityMode)
	msg = le.AppendUint16(msg, r.Dialect)
	msg = le.AppendUint16(msg, uint16(len(r.Contexts)))
	msg = append(msg, r.ServerGUID[:]...)
	msg = le.AppendUint32(msg, r.Capabilities)
	msg = le.AppendUint32(msg, r.MaxTransactSize)
	msg = le.AppendUint32(msg, r.MaxReadSize)
	msg = le.AppendUint32(msg, r.MaxWriteSize)
	msg = le.AppendUint64(msg, r.SystemTime)
	msg = le.AppendUint64(msg, r.ServerStartTime)
	msg = le.AppendUint16(msg, HeaderSize+64)
	msg = le.AppendUint16(msg, uint16(len(r.SecurityBuffer)))
	ctxOffAt := len(msg)
	msg = le.AppendUint32(msg, 0)
	msg = append(msg, r.SecurityBuffer...)
	if len(r.SecurityBuffer) == 0 {
		msg = append(msg, 0)
	}
	if len(r.Contexts) > 0 {
		msg = Pad8(msg, start)
		le.PutUint32(msg[ctxOffAt:], uint32(len(msg)-start))
		for i, c := range r.Contexts {
			if i > 0 {
				msg = Pad8(msg, start)
			}
			msg = le.AppendUint16(msg, c.Type)
			msg = le.AppendUint16(msg, uint16(len(c.Data)))
			msg = le.AppendUint32(msg, 0)
			msg = append(msg, c.Data...)
		}
	}
	return msg
}

// SessionSetupRequest is the SESSION_SETUP request (MS-SMB2 §2.2.5).
type SessionSetupRequest struct {
	Flags             uint8
	SecurityMode      uint8
	Capabilities      uint32
	SecurityBuffer    []byte
	PreviousSessionID uint64
}

// SessionSetupBinding is the flag of a request binding a channel.
const SessionSetupBinding = 0x01

// DecodeSessionSetupRequest decodes a SESSION_SETUP request message.
func DecodeSessionSetupRequest(msg []byte) (*SessionSetupRequest, error) {
	b, err := body(msg, 25)
	if err != nil {
		return nil, err
	}
	r := &SessionSetupRequest{Flags: b[2], SecurityMode: b[3], Capabilities: le.Uint32(b[4:]),
		PreviousSessionID: le.Uint64(b[16:])}
	r.SecurityBuffer, err = buffer(msg, uint32(le.Uint16(b[12:])), uint32(le.Uint16(b[14:])))
	return r, err
}

// Session flags of the SESSION_SETUP response.
const (
	SessionFlagGuest   uint16 = 1
	SessionFlagNull    uint16 = 2
	SessionFlagEncrypt uint16 = 4
)

// AppendSessionSetupResponse appends a SESSION_SETUP response body.
func AppendSessionSetupResponse(msg []byte, flags uint16, token []byte) []byte {
	msg = le.AppendUint16(msg, 9)
	msg = le.AppendUint16(msg, flags)
	msg = le.AppendUint16(msg, HeaderSize+8)
	msg = le.AppendUint16(msg, uint16(len(token)))
	msg = append(msg, token...)
	if len(token) == 0 {
		msg = append(msg, 0)
	}
	return msg
}

// DecodeTreeConnectRequest returns the path of a TREE_CONNECT request
// (MS-SMB2 §2.2.9), e.g. `\\server\share`.
func DecodeTreeConnectRequest(msg []byte) (string, error) {
	b, err := body(msg, 9)
	if err != nil {
		return "", err
	}
	p, err := buffer(msg, uint32(le.Uint16(b[4:])), uint32(le.Uint16(b[6:])))
	if err != nil {
		return "", err
	}
	return DecodeUTF16(p)
}

// Share types and flags of the TREE_CONNECT response.
const (
	ShareTypeDisk uint8 = 1
	ShareTypePipe uint8 = 2

	ShareFlagNoCaching   uint32 = 0x30
	ShareFlagEncryptData uint32 = 0x8000
)

// AppendTreeConnectResponse appends a TREE_CONNECT response body.
func AppendTreeConnectResponse(msg []byte, shareType uint8, flags, caps, maxAccess uint32) []byte {
	msg = le.AppendUint16(msg, 16)
	msg = append(msg, shareType, 0)
	msg = le.AppendUint32(msg, flags)
	msg = le.AppendUint32(msg, caps)
	return le.AppendUint32(msg, maxAccess)
}

// CreateRequest is the CREATE request (MS-SMB2 §2.2.13).
type CreateRequest struct {
	OplockLevel        uint8
	ImpersonationLevel uint32
	DesiredAccess      uint32
	FileAttributes     uint32
	ShareAccess        uint32
	CreateDisposition  uint32
	CreateOptions      uint32
	Name               string
	Contexts           []CreateContext
}

// CreateContext is one create context (MS-SMB2 §2.2.13.2).
type CreateContext struct {
	Name string
	Data []byte
}

// DecodeCreateRequest decodes a CREATE request message.
func DecodeCreateRequest(msg []byte) (*CreateRequest, error) {
	b, err := body(msg, 57)
	if err != nil {
		return nil, err
	}
	r := &CreateRequest{OplockLevel: b[3], ImpersonationLevel: le.Uint32(b[4:]),
		DesiredAccess: le.Uint32(b[24:]), FileAttributes: le.Uint32(b[28:]), ShareAccess: le.Uint32(b[32:]),
		CreateDisposition: le.Uint32(b[36:]), CreateOptions: le.Uint32(b[40:])}
	nameOff, nameLen := uint32(le.Uint16(b[44:])), uint32(le.Uint16(b[46:]))
	name, err := buffer(msg, nameOff, nameLen)
	if err != nil {
		return nil, err
	}
	if r.Name, err = DecodeUTF16(name); err != nil {
		return nil, err
	}
	ctxOff, ctxLen := le.Uint32(b[48:]), le.Uint32(b[52:])
	ctx, err := buffer(msg, ctxOff, ctxLen)
	if err != nil {
		return nil, err
	}
	r.Contexts, err = decodeCreateContexts(ctx)
	return r, err
}

func decodeCreateContexts(b []byte) ([]CreateContext, error) {
	var out []CreateContext
	for len(b) > 0 {
		if len(b) < 16 || len(out) >= 32 {
			return nil, ErrMalformed
		}
		next := le.Uint32(b)
		nameOff, nameLen := uint32(le.Uint16(b[4:])), uint32(le.Uint16(b[6:]))
		dataOff, dataLen := uint32(le.Uint16(b[10:])), le.Uint32(b[12:])
		if uint64(nameOff)+uint64(nameLen) > uint64(len(b)) || uint64(dataOff)+uint64(dataLen) > uint64(len(b)) ||
			(dataLen > 0 && dataOff < 16) || nameOff < 16 {
			return nil, ErrMalformed
		}
		out = append(out, CreateContext{Name: string(b[nameOff : nameOff+nameLen]), Data: b[dataOff : dataOff+dataLen]})
		if next == 0 {
			break
		}
		if next < 16 || uint64(next) > uint64(len(b)) || next%8 != 0 {
			return nil, ErrMalformed
		}
		b = b[next:]
	}
	return out, nil
}

// FileTimes are the four times and sizes common to several responses.
type FileTimes struct {
	CreationTime, LastAccessTime, LastWriteTime, ChangeTime uint64
	AllocationSize, EndOfFile                               uint64
	FileAttributes                                          uint32
}

// CreateResponse is the CREATE response (MS-SMB2 §2.2.14).
type CreateResponse struct {
	OplockLevel  uint8
	Flags        uint8
	CreateAction uint32
	FileTimes
	FileID   FileID
	Contexts []CreateContext
}

// AppendCreateResponse appends a CREATE response body.
func (r *CreateResponse) Append(msg []byte) []byte {
	start := len(msg) - HeaderSize
	msg = le.AppendUint16(msg, 89)
	msg = append(msg, r.OplockLevel, r.Flags)
	msg = le.AppendUint32(msg, r.CreateAction)
	msg = appendTimes(msg, &r.FileTimes)
	msg = le.AppendUint32(msg, 0)
	msg = AppendFileID(msg, r.FileID)
	ctxAt := len(msg)
	msg = le.AppendUint32(msg, 0)
	msg = le.AppendUint32(msg, 0)
	if len(r.Contexts) == 0 {
		return append(msg, 0)
	}
	ctxStart := len(msg)
	le.PutUint32(msg[ctxAt:], uint32(ctxStart-start))
	prev := -1
	for _, c := range r.Contexts {
		msg = Pad8(msg, start)
		if prev >= 0 {
			le.PutUint32(msg[prev:], uint32(len(msg)-prev))
		}
		prev = len(msg)
		msg = le.AppendUint32(msg, 0)
		msg = le.AppendUint16(msg, 16)
		msg = le.AppendUint16(msg, uint16(len(c.Name)))
		msg = le.AppendUint16(msg, 0)
		msg = le.AppendUint16(msg, 24)
		msg = le.AppendUint32(msg, uint32(len(c.Data)))
		msg = append(msg, c.Name...)
		for len(msg)-prev < 24 {
			msg = append(msg, 0)
		}
		msg = append(msg, c.Data...)
	}
	le.PutUint32(msg[ctxAt+4:], uint32(len(msg)-ctxStart))
	return msg
}

func appendTimes(msg []byte, t *FileTimes) []byte {
	msg = le.AppendUint64(msg, t.CreationTime)
	msg = le.AppendUint64(msg, t.LastAccessTime)
	msg = le.AppendUint64(msg, t.LastWriteTime)
	msg = le.AppendUint64(msg, t.ChangeTime)
	msg = le.AppendUint64(msg, t.AllocationSize)
	msg = le.AppendUint64(msg, t.EndOfFile)
	return le.AppendUint32(msg, t.FileAttributes)
}

// CloseRequest is the CLOSE request (MS-SMB2 §2.2.15).
type CloseRequest struct {
	Flags  uint16
	FileID FileID
}

// ClosePostQueryAttrib asks for the attributes in the CLOSE response.
const ClosePostQueryAttrib uint16 = 1

// DecodeCloseRequest decodes a CLOSE request message.
func DecodeCloseRequest(msg []byte) (*CloseRequest, error) {
	b, err := body(msg, 24)
	if err != nil {
		return nil, err
	}
	return &CloseRequest{Flags: le.Uint16(b[2:]), FileID: getFileID(b[8:])}, nil
}

// AppendCloseResponse appends a CLOSE response body; t nil leaves the
// attributes zero.
func AppendCloseResponse(msg []byte, t *FileTimes) []byte {
	msg = le.AppendUint16(msg, 60)
	if t == nil {
		msg = le.AppendUint16(msg, 0)
		return append(msg, make([]byte, 56)...)
	}
	msg = le.AppendUint16(msg, ClosePostQueryAttrib)
	msg = le.AppendUint32(msg, 0)
	return appendTimes(msg, t)
}

// DecodeFlushRequest decodes a FLUSH request message (MS-SMB2 §2.2.17).
func DecodeFlushRequest(msg []byte) (FileID, error) {
	b, err := body(msg, 24)
	if err != nil {
		return FileID{}, err
	}
	return getFileID(b[8:]), nil
}

// ReadRequest is the READ request (MS-SMB2 §2.2.19).
type ReadRequest struct {
	Flags        uint8
	Length       uint32
	Offset       uint64
	FileID       FileID
	MinimumCount uint32
}

// DecodeReadRequest decodes a READ request message.
func DecodeReadRequest(msg []byte) (*ReadRequest, error) {
	b, err := body(msg, 49)
	if err != nil {
		return nil, err
	}
	return &ReadRequest{Flags: b[3], Length: le.Uint32(b[4:]), Offset: le.Uint64(b[8:]),
		FileID: getFileID(b[16:]), MinimumCount: le.Uint32(b[32:])}, nil
}

// ReadResponseHeaderSize is the size of the READ response body before
// the data.
const ReadResponseHeaderSize = 16

// AppendReadResponseHeader appends the fixed part of a READ response; n
// data bytes are to follow.
func AppendReadResponseHeader(msg []byte, n uint32) []byte {
	msg = le.AppendUint16(msg, 17)
	msg = append(msg, HeaderSize+ReadResponseHeaderSize, 0)
	msg = le.AppendUint32(msg, n)
	msg = le.AppendUint32(msg, 0)
	return le.AppendUint32(msg, 0)
}

// WriteRequest is the WRITE request (MS-SMB2 §2.2.21).
type WriteRequest struct {
	Offset uint64
	FileID FileID
	Flags  uint32
	Data   []byte
}

// DecodeWriteRequest decodes a WRITE request message; Data aliases msg.
func DecodeWriteRequest(msg []byte) (*WriteRequest, error) {
	b, err := body(msg, 49)
	if err != nil {
		return nil, err
	}
	r := &WriteRequest{Offset: le.Uint64(b[8:]), FileID: getFileID(b[16:]), Flags: le.Uint32(b[44:])}
	r.Data, err = buffer(msg, uint32(le.Uint16(b[2:])), le.Uint32(b[4:]))
	return r, err
}

// AppendWriteResponse appends a WRITE response body.
func AppendWriteResponse(msg []byte, count uint32) []byte {
	msg = le.AppendUint16(msg, 17)
	msg = le.AppendUint16(msg, 0)
	msg = le.AppendUint32(msg, count)
	msg = le.AppendUint32(msg, 0)
	return le.AppendUint32(msg, 0)
}

// LockElement is one range of a LOCK request (MS-SMB2 §2.2.26.1).
type LockElement struct {
	Offset, Length uint64
	Flags          uint32
}

// Lock flags.
const (
	LockShared          uint32 = 0x01
	LockExclusive       uint32 = 0x02
	LockUnlock          uint32 = 0x04
	LockFailImmediately uint32 = 0x10
)

// LockRequest is the LOCK request (MS-SMB2 §2.2.26).
type LockRequest struct {
	// LockSequence holds LockSequenceNumber (low 4 bits) and
	// LockSequenceIndex (the rest).
	LockSequence uint32
	FileID       FileID
	Locks        []LockElement
}

// DecodeLockRequest decodes a LOCK request message.
func DecodeLockRequest(msg []byte) (*LockRequest, error) {
	b, err := body(msg, 48)
	if err != nil {
		return nil, err
	}
	n := int(le.Uint16(b[2:]))
	if n == 0 || len(b) < 24+24*n {
		return nil, ErrMalformed
	}
	r := &LockRequest{LockSequence: le.Uint32(b[4:]), FileID: getFileID(b[8:])}
	for i := 0; i < n; i++ {
		e := b[24+24*i:]
		r.Locks = append(r.Locks, LockElement{Offset: le.Uint64(e), Length: le.Uint64(e[8:]), Flags: le.Uint32(e[16:])})
	}
	return r, nil
}

// IoctlRequest is the IOCTL request (MS-SMB2 §2.2.31).
type IoctlRequest struct {
	CtlCode           uint32
	FileID            FileID
	Input             []byte
	MaxOutputResponse uint32
	Flags             uint32
}

// IOCTL codes.
const (
	FsctlValidateNegotiateInfo uint32 = 0x00140204
	FsctlPipeTransceive        uint32 = 0x0011C017
	FsctlDfsGetReferrals       uint32 = 0x00060194
	FsctlSrvRequestResumeKey   uint32 = 0x00140078
	FsctlSrvCopyChunk          uint32 = 0x001440F2
	FsctlSrvCopyChunkWrite     uint32 = 0x001480F2
	IoctlIsFsctl               uint32 = 1
)

// DecodeIoctlRequest decodes an IOCTL request message.
func DecodeIoctlRequest(msg []byte) (*IoctlRequest, error) {
	b, err := body(msg, 57)
	if err != nil {
		return nil, err
	}
	r := &IoctlRequest{CtlCode: le.Uint32(b[4:]), FileID: getFileID(b[8:]),
		MaxOutputResponse: le.Uint32(b[44:]), Flags: le.Uint32(b[48:])}
	r.Input, err = buffer(msg, le.Uint32(b[24:]), le.Uint32(b[28:]))
	return r, err
}

// AppendIoctlResponse appends an IOCTL response body.
func AppendIoctlResponse(msg []byte, code uint32, fid FileID, out []byte) []byte {
	msg = le.AppendUint16(msg, 49)
	msg = le.AppendUint16(msg, 0)
	msg = le.AppendUint32(msg, code)
	msg = AppendFileID(msg, fid)
	msg = le.AppendUint32(msg, HeaderSize+48)
	msg = le.AppendUint32(msg, 0)
	msg = le.AppendUint32(msg, HeaderSize+48)
	msg = le.AppendUint32(msg, uint32(len(out)))
	msg = le.AppendUint32(msg, 0)
	msg = le.AppendUint32(msg, 0)
	return append(msg, out...)
}

// QueryDirectoryRequest is the QUERY_DIRECTORY request (MS-SMB2 §2.2.33).
type QueryDirectoryRequest struct {
	InfoClass    uint8
	Flags        uint8
	FileIndex    uint32
	FileID       FileID
	Pattern      string
	OutputLength uint32
}

// QUERY_DIRECTORY flags.
const (
	QDRestartScans      uint8 = 0x01
	QDReturnSingleEntry uint8 = 0x02
	QDIndexSpecified    uint8 = 0x04
	QDReopen            uint8 = 0x10
)

// DecodeQueryDirectoryRequest decodes a QUERY_DIRECTORY request message.
func DecodeQueryDirectoryRequest(msg []byte) (*QueryDirectoryRequest, error) {
	b, err := body(msg, 33)
	if err != nil {
		return nil, err
	}
	r := &QueryDirectoryRequest{InfoClass: b[2], Flags: b[3], FileIndex: le.Uint32(b[4:]),
		FileID: getFileID(b[8:]), OutputLength: le.Uint32(b[28:])}
	p, err := buffer(msg, uint32(le.Uint16(b[24:])), uint32(le.Uint16(b[26:])))
	if err != nil {
		return nil, err
	}
	r.Pattern, err = DecodeUTF16(p)
	return r, err
}

// AppendBufferResponse appends the body shared by QUERY_DIRECTORY and
// QUERY_INFO responses (StructureSize 9, offset, length, buffer).
func AppendBufferResponse(msg []byte, out []byte) []byte {
	msg = le.AppendUint16(msg, 9)
	msg = le.AppendUint16(msg, HeaderSize+8)
	msg = le.AppendUint32(msg, uint32(len(out)))
	msg = append(msg, out...)
	if len(out) == 0 {
		msg = append(msg, 0)
	}
	return msg
}

// Info types of QUERY_INFO and SET_INFO.
const (
	InfoFile       uint8 = 1
	InfoFilesystem uint8 = 2
	InfoSecurity   uint8 = 3
	InfoQuota      uint8 = 4
)

// QueryInfoRequest is the QUERY_INFO request (MS-SMB2 §2.2.37).
type QueryInfoRequest struct {
	InfoType     uint8
	InfoClass    uint8
	OutputLength uint32
	Input        []byte
	AddlInfo     uint32
	Flags        uint32
	FileID       FileID
}

// DecodeQueryInfoRequest decodes a QUERY_INFO request message.
func DecodeQueryInfoRequest(msg []byte) (*QueryInfoRequest, error) {
	b, err := body(msg, 41)
	if err != nil {
		return nil, err
	}
	r := &QueryInfoRequest{InfoType: b[2], InfoClass: b[3], OutputLength: le.Uint32(b[4:]),
		AddlInfo: le.Uint32(b[16:]), Flags: le.Uint32(b[20:]), FileID: getFileID(b[24:])}
	r.Input, err = buffer(msg, uint32(le.Uint16(b[8:])), le.Uint32(b[12:]))
	return r, err
}

// SetInfoRequest is the SET_INFO request (MS-SMB2 §2.2.39).
type SetInfoRequest struct {
	InfoType  uint8
	InfoClass uint8
	Buffer    []byte
	AddlInfo  uint32
	FileID    FileID
}

// DecodeSetInfoRequest decodes a SET_INFO request message.
func DecodeSetInfoRequest(msg []byte) (*SetInfoRequest, error) {
	b, err := body(msg, 33)
	if err != nil {
		return nil, err
	}
	r := &SetInfoRequest{InfoType: b[2], InfoClass: b[3], AddlInfo: le.Uint32(b[12:]), FileID: getFileID(b[16:])}
	r.Buffer, err = buffer(msg, uint32(le.Uint16(b[8:])), le.Uint32(b[4:]))
	return r, err
}

// AppendSetInfoResponse appends a SET_INFO response body.
func AppendSetInfoResponse(msg []byte) []byte {
	return append(msg, 2, 0)
}

// DecodeChangeNotifyRequest checks a CHANGE_NOTIFY request (§2.2.35).
func DecodeChangeNotifyRequest(msg []byte) (FileID, error) {
	b, err := body(msg, 32)
	if err != nil {
		return FileID{}, err
	}
	return getFileID(b[8:]), nil
}

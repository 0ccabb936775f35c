package smb

import "github.com/lazuli-storage/lazuli/internal/smb/wire"

// FSCTLs addressed to the server rather than to an open.
const (
	fsctlDfsGetReferralsEx         uint32 = 0x000601B0
	fsctlQueryNetworkInterfaceInfo uint32 = 0x001401FC
)

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

package smb

import (
	"time"

	"github.com/lazuli-storage/lazuli/internal/smb/wire"
)

// Resilient handles (MS-SMB2 3.3.5.15.9): on SMB 2.1 and later a client
// may ask, with FSCTL_LMR_REQUEST_RESILIENCY, that an open outlive a lost
// connection for a timeout of its choosing, whatever oplock or lease it
// holds. Such an open is kept as a durable one is (durable.go: parked,
// taken back with DHnC by the same user) and its LOCKs are checked
// against their lock sequence numbers so a replay is not run twice.

const fsctlLmrRequestResiliency uint32 = 0x001401D4

// maxResiliencyTimeout bounds the timeout asked for (Windows: 5 minutes);
// a larger one is refused.
const maxResiliencyTimeout = 300 * time.Second

// defaultResiliencyTimeout is kept when the request asks for none
// (Windows: 2 minutes).
const defaultResiliencyTimeout = 120 * time.Second

// requestResiliency handles FSCTL_LMR_REQUEST_RESILIENCY, whose input is
// NETWORK_RESILIENCY_REQUEST: a timeout in milliseconds and four reserved
// bytes. The open stops being durable and becomes resilient.
func (c *conn) requestResiliency(r *request, req *wire.IoctlRequest) *response {
	if c.dialect == wire.Dialect202 {
		return c.errorResponse(r, statusInvalidDeviceRequest)
	}
	o := c.lookupOpen(r, req.FileID)
	if o == nil {
		return c.errorResponse(r, statusFileClosed)
	}
	if len(req.Input) < 8 {
		return c.errorResponse(r, statusInvalidParameter)
	}
	timeout := time.Duration(le.Uint32(req.Input)) * time.Millisecond
	if timeout > maxResiliencyTimeout {
		return c.errorResponse(r, statusInvalidParameter)
	}
	if timeout == 0 {
		timeout = defaultResiliencyTimeout
	}
	if o.h == nil {
		// A pipe has nothing to keep.
		return c.errorResponse(r, statusInvalidDeviceRequest)
	}
	o.mu.Lock()
	o.durable = &durable{resilient: true, timeout: timeout, clientGUID: c.clientGUID}
	o.mu.Unlock()
	return c.ok(r, wire.AppendIoctlResponse(nil, req.CtlCode, req.FileID, nil))
}

// durableState is what makes o durable or resilient, nil for neither: a
// resiliency request may set it while the open is in use.
func (o *open) durableState() *durable {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.durable
}

package smb

import (
	"bytes"
	"crypto/rand"

	"github.com/lazuli-storage/lazuli/internal/smb/wire"
)

// Server-side copy limits (MS-SMB2 3.3.3: ServerSideCopyMaxNumberofChunks,
// ServerSideCopyMaxChunkSize, ServerSideCopyMaxDataSize), as Windows sets
// them.
const (
	copyMaxChunks    = 256
	copyMaxChunkSize = 1 << 20
	copyMaxDataSize  = 16 << 20
)

const statusInvalidViewSize uint32 = 0xC000001F

// requestResumeKey answers FSCTL_SRV_REQUEST_RESUME_KEY: a key naming the
// open as the source of a later FSCTL_SRV_COPYCHUNK (MS-SMB2 3.3.5.15.5).
func (c *conn) requestResumeKey(r *request, req *wire.IoctlRequest) *response {
	o := c.lookupOpen(r, req.FileID)
	if o == nil {
		return c.errorResponse(r, statusFileClosed)
	}
	if o.h == nil || o.isDir {
		return c.errorResponse(r, statusInvalidParameter)
	}
	if req.MaxOutputResponse < 32 {
		return c.errorResponse(r, statusInvalidParameter)
	}
	o.mu.Lock()
	if o.resumeKey == ([24]byte{}) {
		// The key is unguessable, so it names the open only for those
		// it was given to.
		rand.Read(o.resumeKey[:])
	}
	key := o.resumeKey
	o.mu.Unlock()
	out := append(key[:], make([]byte, 8)...) // ContextLength 0, Context
	return c.ok(r, wire.AppendIoctlResponse(nil, req.CtlCode, req.FileID, out))
}

// sourceOpen finds the open of this connection a resume key names.
func (c *conn) sourceOpen(key []byte) *open {
	for _, s := range c.sessionList() {
		s.mu.Lock()
		for _, o := range s.opens {
			o.mu.Lock()
			match := o.resumeKey != ([24]byte{}) && bytes.Equal(o.resumeKey[:], key)
			o.mu.Unlock()
			if match {
				s.mu.Unlock()
				return o
			}
		}
		s.mu.Unlock()
	}
	return nil
}

// copyChunk handles FSCTL_SRV_COPYCHUNK and FSCTL_SRV_COPYCHUNK_WRITE
// (MS-SMB2 3.3.5.15.6): ranges of the source open go to the open the
// request names, each a read and a write through the Backend, so share
// access, byte-range locks and the REST view hold as for any READ and
// WRITE. The answer counts what was written, also when a chunk fails.
func (c *conn) copyChunk(r *request, req *wire.IoctlRequest) *response {
	dst := c.lookupOpen(r, req.FileID)
	if dst == nil {
		return c.errorResponse(r, statusFileClosed)
	}
	if dst.h == nil || dst.isDir {
		return c.errorResponse(r, statusInvalidDeviceRequest)
	}
	// SRV_COPYCHUNK_RESPONSE: ChunksWritten, ChunkBytesWritten,
	// TotalBytesWritten.
	answer := func(status uint32, chunks, chunkBytes, total uint32) *response {
		out := le.AppendUint32(le.AppendUint32(le.AppendUint32(nil, chunks), chunkBytes), total)
		return c.newResponse(r, status, wire.AppendIoctlResponse(nil, req.CtlCode, req.FileID, out))
	}
	limits := func() *response {
		return answer(statusInvalidParameter, copyMaxChunks, copyMaxChunkSize, copyMaxDataSize)
	}
	if req.MaxOutputResponse < 12 {
		return c.errorResponse(r, statusInvalidParameter)
	}
	in := req.Input
	if len(in) < 32 {
		return c.errorResponse(r, statusInvalidParameter)
	}
	n := int(le.Uint32(in[24:]))
	if n > copyMaxChunks {
		return limits()
	}
	if len(in) < 32+24*n {
		return c.errorResponse(r, statusInvalidParameter)
	}
	type chunk struct {
		src, dst uint64
		n        uint32
	}
	chunks := make([]chunk, n)
	total := 0
	for i := range chunks {
		e := in[32+24*i:]
		chunks[i] = chunk{le.Uint64(e), le.Uint64(e[8:]), le.Uint32(e[16:])}
		total += int(chunks[i].n)
		if chunks[i].n == 0 || chunks[i].n > copyMaxChunkSize || total > copyMaxDataSize {
			return limits()
		}
	}
	// The destination is written, and for FSCTL_SRV_COPYCHUNK read too.
	if dst.access&(FileWriteData|FileAppendData) == 0 ||
		req.CtlCode == wire.FsctlSrvCopyChunk && dst.access&FileReadData == 0 {
		return c.errorResponse(r, statusAccessDenied)
	}
	src := c.sourceOpen(in[:24])
	if src == nil {
		return c.errorResponse(r, statusObjectNameNotFound)
	}
	if src.access&(FileReadData|FileExecute) == 0 {
		return c.errorResponse(r, statusAccessDenied)
	}
	ctx, cancel := c.reqCtx()
	defer cancel()
	written, bytesWritten := uint32(0), uint32(0)
	var buf bytes.Buffer
	for _, ch := range chunks {
		if ch.src > maxFileSize || ch.dst+uint64(ch.n) > maxFileSize {
			return answer(statusInvalidViewSize, written, 0, bytesWritten)
		}
		got, data, err := src.h.ReadAt(ctx, int64(ch.src), int64(ch.n))
		if err != nil {
			return answer(statusOf(err), written, 0, bytesWritten)
		}
		if got < int64(ch.n) {
			// The range ends past the end of the source.
			return answer(statusInvalidViewSize, written, 0, bytesWritten)
		}
		buf.Reset()
		if _, err := data.WriteTo(&buf); err != nil {
			return answer(statusOf(err), written, 0, bytesWritten)
		}
		if err := dst.h.WriteAt(ctx, buf.Bytes(), int64(ch.dst)); err != nil {
			return answer(statusOf(err), written, 0, bytesWritten)
		}
		written++
		bytesWritten += ch.n
	}
	return answer(statusSuccess, written, 0, bytesWritten)
}

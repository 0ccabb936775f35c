package h1

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/textproto"
)

// body is a request body read from the connection: either a known length
// or chunked. It is not safe for concurrent use (nor is net/http's).
type body struct {
	c         *conn
	w         *response
	remaining int64 // known length: bytes left
	chunked   bool
	chunkLeft int64 // chunked: data bytes left in the current chunk
	needCRLF  bool  // chunked: a chunk's data ended; its CRLF is next
	overhead  int64 // chunked: framing bytes not yet paid for by data
	expect    bool  // 100-continue still to be sent on the first read
	continued bool  // 100 Continue was sent
	sawEOF    bool
	closed    bool
	err       error
}

var (
	errTooMuchOverhead = errors.New("h1: chunked encoding contains too much non-data")
	// errBodyCut is a body that ended before its framing said it would;
	// errors.Is(err, io.ErrUnexpectedEOF) holds for it.
	errBodyCut = fmt.Errorf("h1: request body ended early: %w", io.ErrUnexpectedEOF)
)

func (b *body) Read(p []byte) (int, error) {
	if b.closed {
		return 0, http.ErrBodyReadAfterClose
	}
	return b.read(p)
}

func (b *body) read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if b.expect {
		b.expect = false
		b.sendContinue()
	}
	var n int
	var err error
	if b.chunked {
		n, err = b.readChunked(p)
	} else {
		n, err = b.readFixed(p)
	}
	if err != nil {
		if err == io.EOF {
			b.sawEOF = true
			b.c.watch.bodyDone.Store(true)
		} else {
			// The connection is out of step with the client.
			b.w.closeAfter = true
		}
		b.err = err
	}
	return n, err
}

func (b *body) sendContinue() {
	w := b.w
	if w.committed || w.noContinue {
		return
	}
	c := b.c
	out := c.getOut()
	out.bw.WriteString("HTTP/1.1 100 Continue\r\n\r\n")
	c.flush()
	b.continued = true
}

func (b *body) readFixed(p []byte) (int, error) {
	if b.remaining <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > b.remaining {
		p = p[:b.remaining]
	}
	n, err := b.c.br.Read(p)
	b.remaining -= int64(n)
	if b.remaining == 0 {
		return n, io.EOF
	}
	if err == io.EOF {
		err = errBodyCut
	}
	if n > 0 && err != nil && err != errBodyCut {
		// Report the data now, the failure on the next read.
		b.err = err
		return n, nil
	}
	return n, err
}

func (b *body) readChunked(p []byte) (int, error) {
	br := b.c.br
	for b.chunkLeft == 0 {
		if b.needCRLF {
			if err := b.expectCRLF(); err != nil {
				return 0, err
			}
			b.needCRLF = false
		}
		size, err := b.chunkSize()
		if err != nil {
			return 0, err
		}
		if size == 0 {
			if err := b.skipTrailer(); err != nil {
				return 0, err
			}
			return 0, io.EOF
		}
		b.chunkLeft = size
	}
	if len(p) == 0 {
		return 0, nil
	}
	if int64(len(p)) > b.chunkLeft {
		p = p[:b.chunkLeft]
	}
	n, err := br.Read(p)
	b.chunkLeft -= int64(n)
	if b.chunkLeft == 0 {
		b.needCRLF = true
	}
	if err == io.EOF {
		err = errBodyCut
	}
	if n > 0 && err != nil {
		b.err = err
		return n, nil
	}
	return n, err
}

func (b *body) expectCRLF() error {
	br := b.c.br
	c1, err := br.ReadByte()
	if err != nil {
		return eofUnexpected(err)
	}
	if c1 != '\r' {
		return errMalformedChunk
	}
	c2, err := br.ReadByte()
	if err != nil {
		return eofUnexpected(err)
	}
	if c2 != '\n' {
		return errMalformedChunk
	}
	return nil
}

func eofUnexpected(err error) error {
	if err == io.EOF {
		return errBodyCut
	}
	return err
}

// chunkLine reads one CRLF-terminated line of chunk framing (at most 4 KiB),
// with no CR before its end (RFC 9112, and net/http).
func (b *body) chunkLine() ([]byte, error) {
	line, err := b.c.br.ReadSlice('\n')
	if err != nil {
		if err == io.EOF {
			return nil, errBodyCut
		}
		if err == bufio.ErrBufferFull {
			return nil, errMalformedChunk
		}
		return nil, err
	}
	if len(line) < 2 || len(line) > 4096 || indexByte(line, '\r') != len(line)-2 {
		return nil, errMalformedChunk
	}
	return line[:len(line)-2], nil
}

// chunkSize reads a chunk-size line: hex digits and an optional extension
// after ';' (ignored), read as net/http reads it: trailing whitespace of
// the line is dropped, then the extension, and what is left must be 1 to
// 16 hex digits.
func (b *body) chunkSize() (int64, error) {
	line, err := b.chunkLine()
	if err != nil {
		return 0, err
	}
	b.overhead += int64(len(line)) + 4
	line = trimRight(line)
	if i := indexByte(line, ';'); i >= 0 {
		line = line[:i]
	}
	if len(line) == 0 || len(line) > 16 {
		return 0, errMalformedChunk
	}
	var size uint64
	for _, c := range line {
		d := unhex(c)
		if d < 0 {
			return 0, errMalformedChunk
		}
		size = size<<4 | uint64(d)
	}
	// A size past what int64 holds is more than any client will send:
	// read until the connection ends, as net/http does.
	n := int64(min(size, 1<<63-1))
	// Bound the framing a client can make the server parse per byte of
	// data: chunk extensions are ignored, but not free.
	b.overhead -= 16 + 2*min(n, 1<<40)
	if b.overhead < 0 {
		b.overhead = 0
	}
	if b.overhead > 16<<10 {
		return 0, errTooMuchOverhead
	}
	return n, nil
}

// trimRight drops trailing spaces, tabs, CRs and LFs.
func trimRight(b []byte) []byte {
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

func unhex(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// skipTrailer reads the trailer section up to its empty line and drops it,
// accepting what net/http accepts: the section must end within the read
// buffer (4 KiB) and parse as a MIME header.
func (b *body) skipTrailer() error {
	br := b.c.br
	p, err := br.Peek(2)
	if len(p) == 2 && p[0] == '\r' && p[1] == '\n' {
		br.Discard(2)
		return nil
	}
	if len(p) < 2 {
		return errBodyCut
	}
	if err != nil {
		return err
	}
	end := false
	for n := 4; !end; n++ {
		p, err := br.Peek(n)
		end = len(p) >= 4 && string(p[len(p)-4:]) == "\r\n\r\n"
		if err != nil {
			break
		}
	}
	if !end {
		return errMalformedChunk
	}
	if _, err := textproto.NewReader(br).ReadMIMEHeader(); err != nil {
		return eofUnexpected(err)
	}
	return nil
}

// Close stops the handler's use of the body. What is left of it is read
// and dropped (up to a bound) when the response is completed, so that the
// connection can carry the next request.
func (b *body) Close() error {
	b.closed = true
	return nil
}

// drain reads and drops what is left of the body, up to maxDiscard bytes,
// and reports whether the body's end was reached.
func (b *body) drain() bool {
	if b.sawEOF {
		return true
	}
	if b.err != nil {
		return false
	}
	if !b.chunked && b.remaining >= maxDiscard {
		return false
	}
	if b.expect {
		// The client waits for 100 Continue before sending the body; it
		// was never asked for it.
		return false
	}
	var buf [4096]byte
	read := 0
	for read <= maxDiscard {
		n, err := b.read(buf[:])
		read += n
		if err == io.EOF {
			return true
		}
		if err != nil {
			return false
		}
	}
	return false
}

package blobhttp

import (
	"encoding/binary"
	"hash"
	"io"
	"strconv"
	"strings"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/blob"
	"github.com/lazuli-storage/lazuli/internal/content"
)

// Structured message bodies (x-ms-structured-body: XSM/1.0;
// properties=crc64) are what the SDKs send when asked to compute CRC-64
// checksums themselves: the content is cut into segments, each followed by
// its CRC-64, and the whole is followed by the CRC-64 of the content.
//
//	header:  version (1 byte, 1), message length (8, LE), flags (2, LE;
//	         1 = CRC-64), segment count (2, LE)
//	segment: number (2, LE, from 1), content length (8, LE), content,
//	         CRC-64 of the content (8, LE)
//	footer:  CRC-64 of the whole content (8, LE)
const (
	smVersion       = 1
	smHeaderLen     = 13
	smSegHeaderLen  = 10
	smFooterLen     = 8
	smFlagCRC64     = 1
	structuredValue = "XSM/1.0; properties=crc64"
)

// smReader yields the content of a structured message read from r,
// checking every CRC-64, the segment numbering and both lengths. Errors
// are 400: Crc64Mismatch for a checksum that differs, InvalidInput for a
// message that is not well formed.
type smReader struct {
	r       io.Reader
	msgLen  int64 // encoded length the request declared (Content-Length)
	content int64 // decoded length (x-ms-structured-content-length)
	segs    int
	seg     int
	left    int64 // content bytes left in the current segment
	got     int64
	segCRC  hash.Hash64
	msgCRC  hash.Hash64
	started bool
	done    bool
}

func newSMReader(r io.Reader, msgLen, contentLen int64) *smReader {
	return &smReader{r: r, msgLen: msgLen, content: contentLen,
		segCRC: content.NewCRC64(), msgCRC: content.NewCRC64()}
}

func smInvalid(why string) error {
	return azerr.Newf(azerr.InvalidInput, "The structured message body is not valid: %s.", why)
}

func (m *smReader) full(n int) ([]byte, error) {
	buf := make([]byte, n)
	if _, err := io.ReadFull(m.r, buf); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil, smInvalid("it ends early")
		}
		return nil, err
	}
	return buf, nil
}

func (m *smReader) Read(p []byte) (int, error) {
	if m.done {
		return 0, io.EOF
	}
	if !m.started {
		h, err := m.full(smHeaderLen)
		if err != nil {
			return 0, err
		}
		if h[0] != smVersion {
			return 0, smInvalid("unknown version")
		}
		if l := int64(binary.LittleEndian.Uint64(h[1:9])); m.msgLen >= 0 && l != m.msgLen {
			return 0, smInvalid("the message length is not the request's Content-Length")
		}
		if binary.LittleEndian.Uint16(h[9:11]) != smFlagCRC64 {
			return 0, smInvalid("the flags are not CRC-64")
		}
		m.segs = int(binary.LittleEndian.Uint16(h[11:13]))
		m.started = true
	}
	for m.left == 0 {
		if m.seg > 0 && m.segCRC != nil {
			f, err := m.full(smFooterLen)
			if err != nil {
				return 0, err
			}
			if binary.LittleEndian.Uint64(f) != m.segCRC.Sum64() {
				return 0, azerr.New(azerr.Crc64Mismatch)
			}
			m.segCRC = nil
		}
		if m.seg == m.segs {
			f, err := m.full(smFooterLen)
			if err != nil {
				return 0, err
			}
			if binary.LittleEndian.Uint64(f) != m.msgCRC.Sum64() {
				return 0, azerr.New(azerr.Crc64Mismatch)
			}
			if m.got != m.content {
				return 0, smInvalid("the content length is not x-ms-structured-content-length")
			}
			var one [1]byte
			if n, _ := io.ReadFull(m.r, one[:]); n != 0 {
				return 0, smInvalid("bytes follow the message footer")
			}
			m.done = true
			return 0, io.EOF
		}
		h, err := m.full(smSegHeaderLen)
		if err != nil {
			return 0, err
		}
		if int(binary.LittleEndian.Uint16(h[0:2])) != m.seg+1 {
			return 0, smInvalid("segments are out of order")
		}
		n := binary.LittleEndian.Uint64(h[2:10])
		if n > uint64(m.content-m.got) {
			return 0, smInvalid("a segment is longer than the content")
		}
		m.seg++
		m.left = int64(n)
		m.segCRC = content.NewCRC64()
	}
	if int64(len(p)) > m.left {
		p = p[:m.left]
	}
	n, err := m.r.Read(p)
	m.segCRC.Write(p[:n])
	m.msgCRC.Write(p[:n])
	m.left -= int64(n)
	m.got += int64(n)
	if err == io.EOF {
		if m.left > 0 {
			return n, smInvalid("it ends early")
		}
		err = nil
	}
	return n, err
}

// uploadBody is what an upload stores: the request body, or the content
// of a structured message body.
type uploadBody struct {
	r          io.Reader
	size       int64 // content length; -1 when unknown
	structured bool  // the answer then carries x-ms-structured-body
}

// upload returns the content of an upload's body.
func (rq *req) upload() (uploadBody, error) {
	hd := rq.r.Header
	v := hd.Get("X-Ms-Structured-Body")
	if v == "" {
		return uploadBody{r: rq.body(), size: rq.r.ContentLength}, nil
	}
	if !strings.EqualFold(strings.Join(strings.Fields(v), " "), structuredValue) {
		return uploadBody{}, azerr.InvalidHeader("x-ms-structured-body", v)
	}
	if hd.Get("Content-Md5") != "" || hd.Get("X-Ms-Content-Crc64") != "" {
		return uploadBody{}, azerr.InvalidHeader("x-ms-structured-body", v)
	}
	cv := hd.Get("X-Ms-Structured-Content-Length")
	if cv == "" {
		return uploadBody{}, azerr.MissingHeader("x-ms-structured-content-length")
	}
	n, err := strconv.ParseInt(cv, 10, 64)
	if err != nil || n < 0 || (rq.r.ContentLength >= 0 && n > rq.r.ContentLength) {
		return uploadBody{}, azerr.InvalidHeader("x-ms-structured-content-length", cv)
	}
	return uploadBody{r: newSMReader(rq.body(), rq.r.ContentLength, n), size: n, structured: true}, nil
}

// ingest writes an upload's content to the chunk store (inline when
// small and inline is set), checks its transactional checksums and marks
// a structured message answer.
func (h *handler) ingest(rq *req, u uploadBody, sums txSums, inline bool, want blob.Checksums) (blob.Ingested, error) {
	data, err := h.svc.IngestSize(rq.ctx(), u.r, u.size, inline, sums.md5, want)
	if err != nil {
		return data, err
	}
	if u.structured {
		rq.w.Header().Set("X-Ms-Structured-Body", structuredValue)
	}
	return data, sums.verify(data)
}

// smSegment is the content length of the segments lazuli writes.
const smSegment = 4 << 20

// structuredLen is the length of the structured message framing n bytes.
func structuredLen(n int64) int64 {
	segs := smSegments(n)
	return n + smHeaderLen + segs*(smSegHeaderLen+smFooterLen) + smFooterLen
}

// smSegments is the number of segments of a message carrying n bytes:
// empty content still travels in one (empty) segment, as Azure and the
// SDKs frame it.
func smSegments(n int64) int64 { return max(1, (n+smSegment-1)/smSegment) }

// writeStructured writes n bytes of content, read from open(off, len)
// segment by segment, as a structured message with CRC-64 checksums.
func writeStructured(w io.Writer, open func(off, n int64) io.ReadCloser, off, n int64) error {
	segs := smSegments(n)
	hd := []byte{smVersion}
	hd = binary.LittleEndian.AppendUint64(hd, uint64(structuredLen(n)))
	hd = binary.LittleEndian.AppendUint16(hd, smFlagCRC64)
	hd = binary.LittleEndian.AppendUint16(hd, uint16(segs))
	if _, err := w.Write(hd); err != nil {
		return err
	}
	msg := content.NewCRC64()
	for i := int64(0); i < segs; i++ {
		l := min(int64(smSegment), n-i*smSegment)
		sh := binary.LittleEndian.AppendUint16(nil, uint16(i+1))
		sh = binary.LittleEndian.AppendUint64(sh, uint64(l))
		if _, err := w.Write(sh); err != nil {
			return err
		}
		seg := content.NewCRC64()
		rc := open(off+i*smSegment, l)
		_, err := io.Copy(io.MultiWriter(w, seg, msg), io.LimitReader(rc, l))
		rc.Close()
		if err != nil {
			return err
		}
		if _, err := w.Write(binary.LittleEndian.AppendUint64(nil, seg.Sum64())); err != nil {
			return err
		}
	}
	_, err := w.Write(binary.LittleEndian.AppendUint64(nil, msg.Sum64()))
	return err
}

// wantsStructured reports whether a read asks for its body as a
// structured message; a value other than Azure's one is 400.
func (rq *req) wantsStructured() (bool, error) {
	v := rq.r.Header.Get("X-Ms-Structured-Body")
	if v == "" {
		return false, nil
	}
	if !strings.EqualFold(strings.Join(strings.Fields(v), " "), structuredValue) {
		return false, azerr.InvalidHeader("x-ms-structured-body", v)
	}
	return true, nil
}

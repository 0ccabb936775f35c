package content

import (
	"bufio"
	"bytes"
	"context"
	"hash"
	"io"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/md5lanes"
	"github.com/lazuli-storage/lazuli/storage"
)

// Chunks writes request bodies to an engine's chunk store and streams
// segments back.
type Chunks struct {
	eng storage.Engine
	// md5 hashes request bodies (nil: crypto/md5 for each).
	md5 *md5lanes.Lanes
}

// NewChunks returns the chunk side of eng.
func NewChunks(eng storage.Engine) *Chunks { return &Chunks{eng: eng} }

// UseMD5Lanes makes the chunk store hash request bodies with l.
func (s *Chunks) UseMD5Lanes(l *md5lanes.Lanes) { s.md5 = l }

// Ingested is a request body written to the chunk store (or kept inline).
type Ingested struct {
	Segs []Segment
	Size int64
	MD5  []byte
	// CRC64 is Azure Storage's CRC-64 of the bytes.
	CRC64 uint64
}

// Checksums says which checksums an ingest computes.
type Checksums uint8

const (
	// SumMD5 is the body's MD5 (Ingested.MD5).
	SumMD5 Checksums = 1 << iota
	// SumCRC64 is Azure Storage's CRC-64 of the body (Ingested.CRC64).
	SumCRC64
)

// sums computes the checksums of a body as it is read; a nil hash is not
// computed. The MD5 comes from the service's lanes, which hash large
// bodies many at once.
type sums struct {
	md5 hash.Hash
	crc hash.Hash64
}

func (c *Chunks) newSums(want Checksums, size int64) sums {
	var s sums
	if want&SumMD5 != 0 {
		s.md5 = c.md5.Get(size)
	}
	if want&SumCRC64 != 0 {
		s.crc = NewCRC64()
	}
	return s
}

func (s sums) Write(p []byte) (int, error) {
	if s.md5 != nil {
		s.md5.Write(p)
	}
	if s.crc != nil {
		s.crc.Write(p)
	}
	return len(p), nil
}

// Ingest reads body to the end, writing it to the chunk store in pieces of
// ChunkPiece bytes before any metadata transaction; bodies of at most
// InlineMax bytes stay in memory when inline is set. The MD5 of the bytes
// and CRC-64 are computed on the way; when wantMD5 is non-empty and differs the result
// is 400 Md5Mismatch (the chunks written are left to the garbage
// collector).
func (s *Chunks) Ingest(ctx context.Context, body io.Reader, inline bool, wantMD5 []byte) (Ingested, error) {
	return s.IngestSize(ctx, body, -1, inline, wantMD5, SumMD5|SumCRC64)
}

// IngestSize is Ingest with the expected length of body (its
// Content-Length; -1 when unknown), which lets small bodies be read into a
// buffer of exactly their size, computing only the checksums in want (and
// the MD5 when wantMD5 is given); the others stay empty. Each operation
// computes what it returns or stores: Put Block, Put Page and Append Block
// return an MD5 only when the request sent one, and File Put Range returns
// no CRC-64. (A 64 MiB block upload spent half of the server's CPU on an
// MD5 nobody asked for.)
func (s *Chunks) IngestSize(ctx context.Context, body io.Reader, size int64, inline bool, wantMD5 []byte, want Checksums) (Ingested, error) {
	var out Ingested
	if len(wantMD5) > 0 {
		want |= SumMD5
	}
	h := s.newSums(want, size)
	defer s.md5.Put(h.md5)
	if body == nil {
		body = bytes.NewReader(nil)
	}
	tr := io.TeeReader(body, h)
	if inline {
		var buf []byte
		var err error
		if size >= 0 && size <= InlineMax {
			buf = make([]byte, size, size+1)
			if _, err = io.ReadFull(tr, buf); err != nil {
				if err == io.ErrUnexpectedEOF || err == io.EOF {
					err = azerr.New(azerr.InvalidInput)
				}
				return out, err
			}
			// The body may still be longer than announced.
			var one [1]byte
			n, err := io.ReadFull(tr, one[:])
			if err != nil && err != io.EOF {
				return out, err
			}
			buf = append(buf, one[:n]...)
		} else {
			if buf, err = readUpTo(tr, InlineMax+1); err != nil {
				return out, err
			}
		}
		if len(buf) <= InlineMax {
			if len(buf) > 0 {
				out.Segs = []Segment{{Len: int64(len(buf)), Data: buf}}
			}
			out.Size = int64(len(buf))
			return finish(out, h, wantMD5)
		}
		// Too large to inline: the buffered prefix goes first.
		return s.ingestChunks(ctx, io.MultiReader(bytes.NewReader(buf), tr), h, wantMD5)
	}
	return s.ingestChunks(ctx, tr, h, wantMD5)
}

func readUpTo(r io.Reader, n int) ([]byte, error) {
	buf := make([]byte, 0, 4096)
	lr := io.LimitReader(r, int64(n))
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		m, err := lr.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+m]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

func (s *Chunks) ingestChunks(ctx context.Context, r io.Reader, h sums, wantMD5 []byte) (Ingested, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	out, err := s.putPieces(ctx, func() (io.Reader, error) {
		if _, err := br.Peek(1); err != nil {
			return nil, err
		}
		return io.LimitReader(br, ChunkPiece), nil
	})
	if err != nil {
		return out, err
	}
	return finish(out, h, wantMD5)
}

// IngestBytes is IngestSize of a body held in memory, without checksums:
// p stays the caller's (what is kept inline is a copy). The chunk store
// writes each piece straight from p: copying an 8 MiB SMB WRITE through
// a buffer on its way to the chunk files was a sixth of the server's CPU
// time when smbclient put a 256 MiB file.
func (s *Chunks) IngestBytes(ctx context.Context, p []byte, inline bool) (Ingested, error) {
	if inline && len(p) <= InlineMax {
		return s.IngestSize(ctx, bytes.NewReader(p), int64(len(p)), true, nil, 0)
	}
	return s.putPieces(ctx, func() (io.Reader, error) {
		if len(p) == 0 {
			return nil, io.EOF
		}
		piece := p[:min(len(p), BytesPiece)]
		p = p[len(piece):]
		return bytes.NewReader(piece), nil
	})
}

// putPieces writes each piece next returns (until io.EOF) as a chunk.
// Each piece's fsync runs while the next pieces are written (at most
// maxUnsynced of them wait at once, each holding an open file); putPieces
// waits for all of them before it returns, before any record can point
// at the pieces.
func (s *Chunks) putPieces(ctx context.Context, next func() (io.Reader, error)) (Ingested, error) {
	var out Ingested
	var waits []func() error
	var err error
	wait := func() {
		if werr := waits[0](); err == nil {
			err = werr
		}
		waits = waits[1:]
	}
	for err == nil {
		var piece io.Reader
		if piece, err = next(); err != nil {
			break
		}
		ref, n, w, perr := storage.PutDeferred(ctx, s.eng.Chunks(), piece)
		if perr != nil {
			err = perr
			break
		}
		waits = append(waits, w)
		out.Segs = append(out.Segs, Segment{Ref: ref, Len: n})
		out.Size += n
		if len(waits) > maxUnsynced {
			wait()
		}
	}
	if err == io.EOF {
		err = nil
	}
	for len(waits) > 0 {
		wait()
	}
	if err != nil {
		return Ingested{}, err
	}
	return out, nil
}

// maxUnsynced bounds the pieces of one ingest whose fsync is under way.
const maxUnsynced = 4

func finish(out Ingested, h sums, wantMD5 []byte) (Ingested, error) {
	if h.md5 != nil {
		out.MD5 = h.md5.Sum(nil)
	}
	if h.crc != nil {
		out.CRC64 = h.crc.Sum64()
	}
	if len(wantMD5) > 0 && !bytes.Equal(wantMD5, out.MD5) {
		return out, azerr.New(azerr.Md5Mismatch)
	}
	return out, nil
}

// SliceSegments returns the part [off, off+n) of the concatenation of segs.
func SliceSegments(segs []Segment, off, n int64) []Segment {
	var out []Segment
	pos := int64(0)
	end := off + n
	for _, sg := range segs {
		sEnd := pos + sg.Len
		if sEnd > off && pos < end {
			lo, hi := max(off, pos), min(end, sEnd)
			cut := Segment{Ref: sg.Ref, Off: sg.Off + (lo - pos), Len: hi - lo}
			if sg.Data != nil {
				cut.Data = sg.Data[lo-pos : hi-pos]
			}
			out = append(out, cut)
		}
		pos = sEnd
		if pos >= end {
			break
		}
	}
	return out
}

// OpenSegments streams the given segments.
func (s *Chunks) OpenSegments(ctx context.Context, segs []Segment) io.ReadCloser {
	return &segReader{ctx: ctx, cs: s.eng.Chunks(), segs: segs}
}

type segReader struct {
	ctx  context.Context
	cs   storage.ChunkStore
	segs []Segment
	cur  io.ReadCloser
}

type zeros struct{ n int64 }

func (z *zeros) Read(p []byte) (int, error) {
	if z.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > z.n {
		p = p[:z.n]
	}
	clear(p)
	z.n -= int64(len(p))
	return len(p), nil
}

// openSegment returns a reader of one segment's bytes.
func openSegment(ctx context.Context, cs storage.ChunkStore, sg Segment) (io.ReadCloser, error) {
	switch {
	case sg.Data != nil:
		return io.NopCloser(bytes.NewReader(sg.Data)), nil
	case sg.Ref != "":
		return cs.Open(ctx, sg.Ref, sg.Off, sg.Len)
	}
	return io.NopCloser(&zeros{n: sg.Len}), nil
}

// WriteSegments writes the bytes of segs to w, one segment's reader at a
// time through io.Copy, so that a chunk store whose readers implement
// io.WriterTo can hand its files to w (sendfile(2) to a socket) instead of
// copying them through a buffer. It returns the bytes written.
func (s *Chunks) WriteSegments(ctx context.Context, w io.Writer, segs []Segment) (int64, error) {
	var total int64
	for _, sg := range segs {
		rc, err := openSegment(ctx, s.eng.Chunks(), sg)
		if err != nil {
			return total, err
		}
		n, err := io.Copy(w, rc)
		rc.Close()
		total += n
		if err != nil {
			return total, err
		}
		if n != sg.Len {
			return total, io.ErrUnexpectedEOF
		}
	}
	return total, nil
}

func (r *segReader) Read(p []byte) (int, error) {
	for {
		if r.cur == nil {
			if len(r.segs) == 0 {
				return 0, io.EOF
			}
			rc, err := openSegment(r.ctx, r.cs, r.segs[0])
			if err != nil {
				return 0, err
			}
			r.segs = r.segs[1:]
			r.cur = rc
		}
		n, err := r.cur.Read(p)
		if err == io.EOF {
			r.cur.Close()
			r.cur = nil
			if n > 0 {
				return n, nil
			}
			continue
		}
		return n, err
	}
}

func (r *segReader) Close() error {
	if r.cur != nil {
		return r.cur.Close()
	}
	return nil
}

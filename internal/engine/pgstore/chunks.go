package pgstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lazuli-storage/lazuli/storage"
)

// PartSize is the largest chunk row: a chunk is stored as rows of
// PartSize bytes (the last one shorter), so a reader holds at most one
// part in memory and a range read fetches only the parts it covers.
const PartSize = 1 << 20

// Chunk tables: lazuli_chunks has one row per chunk (complete once every
// part is written; written is the database time of its last part, which
// the garbage collector's grace period counts from), lazuli_chunk_parts
// the bytes.
const (
	sqlChunkHead  = "INSERT INTO lazuli_chunks (ref, written, size, complete) VALUES ($1, clock_timestamp(), 0, false)"
	sqlChunkPart  = "INSERT INTO lazuli_chunk_parts (ref, seq, data) VALUES ($1, $2, $3)"
	sqlChunkTouch = "UPDATE lazuli_chunks SET written = clock_timestamp() WHERE ref = $1"
	sqlChunkDone  = "UPDATE lazuli_chunks SET complete = true, size = $2, written = clock_timestamp() WHERE ref = $1"
	sqlChunkWhole = "INSERT INTO lazuli_chunks (ref, written, size, complete) VALUES ($1, clock_timestamp(), $2, true)"
	sqlChunkSize  = "SELECT size FROM lazuli_chunks WHERE ref = $1 AND complete"
	sqlChunkRead  = "SELECT substring(data FROM $3 FOR $4) FROM lazuli_chunk_parts WHERE ref = $1 AND seq = $2"
	sqlChunkDelP  = "DELETE FROM lazuli_chunk_parts WHERE ref = ANY($1)"
	sqlChunkDelH  = "DELETE FROM lazuli_chunks WHERE ref = ANY($1)"
	sqlChunkWalk  = "SELECT ref, written FROM lazuli_chunks WHERE ref > $1 ORDER BY ref LIMIT 1000"
)

type chunkStore struct{ s *Store }

// refLen is the length of a ref: 16 random bytes in hex.
const refLen = 32

func newRef() string {
	var b [refLen / 2]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func validRef(ref storage.ChunkRef) bool {
	if len(ref) != refLen {
		return false
	}
	_, err := hex.DecodeString(string(ref))
	return err == nil
}

// Put stores r's bytes. A chunk of one part goes in with a single
// transaction; a longer one gets an incomplete head row first, then its
// parts, then is marked complete, so a crash mid-upload leaves a head the
// garbage collector finds and removes.
func (cs *chunkStore) Put(ctx context.Context, r io.Reader) (storage.ChunkRef, int64, error) {
	s := cs.s
	if s.closed.Load() {
		return "", 0, storage.ErrClosed
	}
	buf := make([]byte, PartSize)
	n, err := io.ReadFull(r, buf)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return "", 0, err
	}
	ref := newRef()
	if n < PartSize {
		b := &pgx.Batch{}
		b.Queue("BEGIN")
		b.Queue(sqlChunkWhole, ref, n)
		b.Queue(sqlChunkPart, ref, 0, buf[:n])
		b.Queue("COMMIT")
		if err := s.withRetryOnDeadConn(ctx, func() error { return s.pool.SendBatch(ctx, b).Close() }); err != nil {
			return "", 0, s.mapErr(err)
		}
		return storage.ChunkRef(ref), int64(n), nil
	}
	if _, err := s.pool.Exec(ctx, sqlChunkHead, ref); err != nil {
		return "", 0, s.mapErr(err)
	}
	fail := func(err error) (storage.ChunkRef, int64, error) {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		cs.Delete(dctx, []storage.ChunkRef{storage.ChunkRef(ref)})
		return "", 0, s.mapErr(err)
	}
	var size int64
	for seq := 0; n > 0; seq++ {
		b := &pgx.Batch{}
		b.Queue(sqlChunkPart, ref, seq, buf[:n])
		b.Queue(sqlChunkTouch, ref)
		if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
			return fail(err)
		}
		size += int64(n)
		if n < PartSize {
			break
		}
		n, err = io.ReadFull(r, buf)
		if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
			return fail(err)
		}
	}
	tag, err := s.pool.Exec(ctx, sqlChunkDone, ref, size)
	if err != nil {
		return fail(err)
	}
	if tag.RowsAffected() != 1 {
		// A collector removed it (an upload stalled past the grace).
		return fail(errors.New("pgstore: chunk removed by the garbage collector during its upload"))
	}
	return storage.ChunkRef(ref), size, nil
}

// Open returns a reader that fetches the parts it covers one at a time.
func (cs *chunkStore) Open(ctx context.Context, ref storage.ChunkRef, off, n int64) (io.ReadCloser, error) {
	s := cs.s
	if s.closed.Load() {
		return nil, storage.ErrClosed
	}
	if !validRef(ref) || off < 0 {
		return nil, storage.ErrNotFound
	}
	var size int64
	err := s.withRetryOnDeadConn(ctx, func() error { return s.pool.QueryRow(ctx, sqlChunkSize, string(ref)).Scan(&size) })
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, storage.ErrNotFound
	}
	if err != nil {
		return nil, s.mapErr(err)
	}
	end := size
	if n >= 0 && off+n < size {
		end = off + n
	}
	off = min(off, end)
	return &chunkReader{ctx: ctx, s: s, ref: string(ref), off: off, end: end}, nil
}

// chunkReader streams [off, end) of a chunk, one part (or the covered
// piece of one) per query.
type chunkReader struct {
	ctx      context.Context
	s        *Store
	ref      string
	off, end int64
	buf      []byte
	err      error
}

func (r *chunkReader) Read(p []byte) (int, error) {
	for len(r.buf) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		if r.off >= r.end {
			return 0, io.EOF
		}
		seq := r.off / PartSize
		inPart := r.off % PartSize
		want := min(PartSize-inPart, r.end-r.off)
		var data []byte
		err := r.s.withRetryOnDeadConn(r.ctx, func() error {
			return r.s.pool.QueryRow(r.ctx, sqlChunkRead, r.ref, seq, inPart+1, want).Scan(&data)
		})
		if errors.Is(err, pgx.ErrNoRows) {
			err = errors.New("pgstore: chunk deleted while being read")
		}
		if err == nil && int64(len(data)) != want {
			err = io.ErrUnexpectedEOF
		}
		if err != nil {
			r.err = r.s.mapErr(err)
			return 0, r.err
		}
		r.buf = data
		r.off += want
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

func (r *chunkReader) Close() error {
	r.buf, r.err = nil, errors.New("pgstore: chunk reader closed")
	return nil
}

// Delete removes chunks: parts first, so a crash between the two leaves a
// head that a later collection deletes again, never parts without a head.
func (cs *chunkStore) Delete(ctx context.Context, refs []storage.ChunkRef) error {
	s := cs.s
	if s.closed.Load() {
		return storage.ErrClosed
	}
	ids := make([]string, 0, len(refs))
	for _, r := range refs {
		if validRef(r) {
			ids = append(ids, string(r))
		}
	}
	if len(ids) == 0 {
		return nil
	}
	if _, err := s.pool.Exec(ctx, sqlChunkDelP, ids); err != nil {
		return s.mapErr(err)
	}
	if _, err := s.pool.Exec(ctx, sqlChunkDelH, ids); err != nil {
		return s.mapErr(err)
	}
	return nil
}

// Walk lists every chunk, complete or not, in pages, with the database
// time of its last write.
func (cs *chunkStore) Walk(ctx context.Context, fn func(storage.ChunkRef, time.Time) error) error {
	s := cs.s
	if s.closed.Load() {
		return storage.ErrClosed
	}
	after := ""
	for {
		type entry struct {
			ref string
			t   time.Time
		}
		var page []entry
		rows, err := s.pool.Query(ctx, sqlChunkWalk, after)
		if err != nil {
			return s.mapErr(err)
		}
		for rows.Next() {
			var e entry
			if err := rows.Scan(&e.ref, &e.t); err != nil {
				rows.Close()
				return err
			}
			page = append(page, e)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return s.mapErr(err)
		}
		for _, e := range page {
			if err := fn(storage.ChunkRef(e.ref), e.t); err != nil {
				return err
			}
		}
		if len(page) < 1000 {
			return nil
		}
		after = page[len(page)-1].ref
	}
}

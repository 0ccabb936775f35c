package content

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/engine/filestore"
	"github.com/lazuli-storage/lazuli/internal/engine/logstore"
	"github.com/lazuli-storage/lazuli/internal/engine/memstore"
	"github.com/lazuli-storage/lazuli/storage/storagetest"
)

// gateFS holds the fsync of the first chunk file written until a second
// chunk file is created (or a while has passed).
type gateFS struct {
	filestore.FS
	mu       sync.Mutex
	chunks   int
	second   chan struct{} // closed when the second chunk file is created
	overlaps bool          // the first fsync saw the second chunk begun
}

func (g *gateFS) OpenFile(name string, flag int, perm fs.FileMode) (filestore.File, error) {
	f, err := g.FS.OpenFile(name, flag, perm)
	if err != nil || flag&os.O_CREATE == 0 || !strings.Contains(name, "/chunks/") {
		return f, err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.chunks++
	switch g.chunks {
	case 1:
		return &gateFile{File: f, g: g}, nil
	case 2:
		close(g.second)
	}
	return f, nil
}

type gateFile struct {
	filestore.File
	g *gateFS
}

func (f *gateFile) Sync() error {
	select {
	case <-f.g.second:
		f.g.mu.Lock()
		f.g.overlaps = true
		f.g.mu.Unlock()
	case <-time.After(2 * time.Second):
	}
	return f.File.Sync()
}

// A durable ingest of several pieces, from a reader (REST) or from bytes
// in memory (SMB), writes the next piece while the disk flushes the one
// before (an 8 MiB SMB WRITE is two pieces), and what it returns is on
// stable storage: a power cut right after it loses nothing.
func TestIngestOverlapsChunkFsyncs(t *testing.T) {
	t.Run("reader", func(t *testing.T) {
		testIngestOverlaps(t, func(c *Chunks, body []byte) (Ingested, error) {
			return c.IngestSize(context.Background(), bytes.NewReader(body), int64(len(body)), false, nil, 0)
		})
	})
	t.Run("bytes", func(t *testing.T) {
		testIngestOverlaps(t, func(c *Chunks, body []byte) (Ingested, error) {
			in, err := c.IngestBytes(context.Background(), body, true)
			// The bytes stay the caller's (SMB recycles its buffers):
			// the chunks hold a copy.
			clear(body)
			return in, err
		})
	})
}

func testIngestOverlaps(t *testing.T, ingest func(c *Chunks, body []byte) (Ingested, error)) {
	ctx := context.Background()
	power := storagetest.NewPowerFS()
	g := &gateFS{FS: power, second: make(chan struct{})}
	eng, err := logstore.Open(logstore.Options{Dir: "/data", Sync: true, FS: g})
	if err != nil {
		t.Fatal(err)
	}
	body := make([]byte, BytesPiece+ChunkPiece+1000)
	for i := range body {
		body[i] = byte(i * 7)
	}
	want := append([]byte(nil), body...)
	in, err := ingest(NewChunks(eng), body)
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Segs) < 2 {
		t.Fatalf("%d pieces, want several", len(in.Segs))
	}
	g.mu.Lock()
	overlaps := g.overlaps
	g.mu.Unlock()
	if !overlaps {
		t.Error("the second piece was written only after the first piece's fsync")
	}

	after := power.Cut(rand.New(rand.NewPCG(1, 2)))
	eng.Close() // fails: the power is off
	eng, err = logstore.Open(logstore.Options{Dir: "/data", Sync: true, FS: after})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	var got []byte
	for _, sg := range in.Segs {
		rc, err := eng.Chunks().Open(ctx, sg.Ref, 0, -1)
		if err != nil {
			t.Fatalf("piece %s after the power cut: %v", sg.Ref, err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, b...)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("after the power cut the pieces hold %d bytes, not the %d ingested", len(got), len(want))
	}
}

// An 8 MiB SMB WRITE is one chunk: one file to fsync, not two.
func TestIngestBytesOnePiecePerWrite(t *testing.T) {
	eng := memstore.New()
	defer eng.Close()
	in, err := NewChunks(eng).IngestBytes(context.Background(), make([]byte, 8<<20), true)
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Segs) != 1 || in.Size != 8<<20 {
		t.Fatalf("%d pieces of %d bytes, want one of 8 MiB", len(in.Segs), in.Size)
	}
}

// slowSyncFS counts the chunk files written and not yet fsynced, each
// fsync taking a while.
type slowSyncFS struct {
	filestore.FS
	mu         sync.Mutex
	open, most int
}

func (s *slowSyncFS) OpenFile(name string, flag int, perm fs.FileMode) (filestore.File, error) {
	f, err := s.FS.OpenFile(name, flag, perm)
	if err != nil || flag&os.O_CREATE == 0 || !strings.Contains(name, "/chunks/") {
		return f, err
	}
	s.mu.Lock()
	s.open++
	s.most = max(s.most, s.open)
	s.mu.Unlock()
	return &slowSyncFile{File: f, fs: s}, nil
}

type slowSyncFile struct {
	filestore.File
	fs *slowSyncFS
}

func (f *slowSyncFile) Sync() error {
	time.Sleep(200 * time.Millisecond)
	f.fs.mu.Lock()
	f.fs.open--
	f.fs.mu.Unlock()
	return f.File.Sync()
}

// A long body does not leave a fsync (and an open file) per piece
// waiting: at most a few pieces wait for theirs at once.
func TestIngestBoundsUnsyncedPieces(t *testing.T) {
	fsys := &slowSyncFS{FS: storagetest.NewPowerFS()}
	eng, err := logstore.Open(logstore.Options{Dir: "/data", Sync: true, FS: fsys})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	body := make([]byte, 8*ChunkPiece)
	in, err := NewChunks(eng).IngestSize(context.Background(), bytes.NewReader(body), int64(len(body)), false, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Segs) != 8 {
		t.Fatalf("%d pieces, want 8", len(in.Segs))
	}
	// maxUnsynced waiting, and the one just written.
	if fsys.most > 5 {
		t.Fatalf("%d pieces waited for their fsync at once, want at most 5", fsys.most)
	}
}

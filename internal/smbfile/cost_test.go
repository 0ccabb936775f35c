package smbfile

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/lazuli-storage/lazuli/internal/engine/logstore"
	"github.com/lazuli-storage/lazuli/internal/engine/memstore"
	"github.com/lazuli-storage/lazuli/internal/smb"
	"github.com/lazuli-storage/lazuli/internal/smb/smbtest"
	"github.com/lazuli-storage/lazuli/internal/smb/wire"
	"github.com/lazuli-storage/lazuli/storage"
)

// countingEngine counts the transactions run through it.
type countingEngine struct {
	storage.Engine
	mu             sync.Mutex
	updates, views int
}

func (e *countingEngine) Update(ctx context.Context, fn func(storage.Tx) error) error {
	e.mu.Lock()
	e.updates++
	e.mu.Unlock()
	return e.Engine.Update(ctx, fn)
}

func (e *countingEngine) View(ctx context.Context, fn func(storage.Tx) error) error {
	e.mu.Lock()
	e.views++
	e.mu.Unlock()
	return e.Engine.View(ctx, fn)
}

// take returns the counts so far and starts again from zero.
func (e *countingEngine) take() (updates, views int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	updates, views = e.updates, e.views
	e.updates, e.views = 0, 0
	return updates, views
}

// TestSmallPutCosts pins what smbclient's put of a small file asks of the
// engine, one request at a time (the client waits for each): CREATE of a
// new file, one WRITE and CLOSE are one Update each (each a durable
// commit the client waits for) and read nothing else. The close of a
// written file breaks the leases of its directory in its own Update,
// without a View first to look for them.
func TestSmallPutCosts(t *testing.T) {
	eng := &countingEngine{Engine: memstore.New()}
	addr, _ := serveShare(t, eng)
	c, err := smbtest.Dial(addr, "acct", "key")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.TreeConnect("share"); err != nil {
		t.Fatal(err)
	}
	check := func(what string, st uint32, wantUpdates, wantViews int) {
		t.Helper()
		if st != 0 {
			t.Fatalf("%s: status %#x", what, st)
		}
		if u, v := eng.take(); u != wantUpdates || v != wantViews {
			t.Errorf("%s: %d Updates and %d Views, want %d and %d", what, u, v, wantUpdates, wantViews)
		}
	}
	const rw = smb.FileReadData | smb.FileWriteData | smb.FileReadAttributes | smb.FileWriteAttributes
	for _, path := range []string{"f", "f2"} {
		eng.take()
		fid, st := c.Create(path, rw, smb.FileShareRead|smb.FileShareWrite, smb.FileOverwriteIf, smb.FileNonDirectoryFile)
		check("CREATE "+path, st, 1, 0)
		check("WRITE "+path, c.Write(fid, 0, bytes.Repeat([]byte{7}, 4096)), 1, 0)
		check("CLOSE "+path, c.CloseFile(fid), 1, 0)
	}
}

// BenchmarkSmallPut is smbclient's put of a 4 KiB file (CREATE, WRITE,
// CLOSE, one request at a time) on the log engine; -benchtime with
// -cpuprofile shows where the server's CPU goes, without the fsyncs
// (LAZULI_BENCH_SYNC=1 adds them).
func BenchmarkSmallPut(b *testing.B) {
	eng, err := logstore.Open(logstore.Options{Dir: b.TempDir(), Sync: os.Getenv("LAZULI_BENCH_SYNC") == "1"})
	if err != nil {
		b.Fatal(err)
	}
	addr, _ := serveShare(b, eng)
	c, err := smbtest.Dial(addr, "acct", "key")
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	if err := c.TreeConnect("share"); err != nil {
		b.Fatal(err)
	}
	body := bytes.Repeat([]byte{7}, 4096)
	const rw = smb.FileReadData | smb.FileWriteData | smb.FileReadAttributes | smb.FileWriteAttributes
	b.ResetTimer()
	for i := range b.N {
		fid, st := c.Create(fmt.Sprintf("f%d", i), rw, smb.FileShareRead|smb.FileShareWrite, smb.FileOverwriteIf, smb.FileNonDirectoryFile)
		if st != 0 {
			b.Fatalf("CREATE: %#x", st)
		}
		if st := c.Write(fid, 0, body); st != 0 {
			b.Fatalf("WRITE: %#x", st)
		}
		if st := c.CloseFile(fid); st != 0 {
			b.Fatalf("CLOSE: %#x", st)
		}
	}
}

// BenchmarkBigPut is smbclient's put of a 64 MiB file: 8 MiB WRITEs, two
// in flight, on the log engine with fsync (LAZULI_BENCH_SYNC=0 without).
func BenchmarkBigPut(b *testing.B) {
	eng, err := logstore.Open(logstore.Options{Dir: b.TempDir(), Sync: os.Getenv("LAZULI_BENCH_SYNC") != "0"})
	if err != nil {
		b.Fatal(err)
	}
	addr, _ := serveShare(b, eng)
	c, err := smbtest.Dial(addr, "acct", "key")
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	if err := c.TreeConnect("share"); err != nil {
		b.Fatal(err)
	}
	// Enough credits for two 8 MiB WRITEs (128 each) in flight.
	for range 4 {
		if _, _, err := c.Do(wire.Echo, []byte{4, 0, 0, 0}); err != nil {
			b.Fatal(err)
		}
	}
	const size, step = 64 << 20, 8 << 20
	data := make([]byte, step)
	for i := range data {
		data[i] = byte(i * 13)
	}
	const rw = smb.FileReadData | smb.FileWriteData | smb.FileReadAttributes | smb.FileWriteAttributes
	b.SetBytes(size)
	b.ResetTimer()
	for i := range b.N {
		fid, st := c.Create(fmt.Sprintf("big%d", i), rw, smb.FileShareRead, smb.FileOverwriteIf, smb.FileNonDirectoryFile)
		if st != 0 {
			b.Fatalf("CREATE: %#x", st)
		}
		// WRITE answers may come in any order: count them.
		inflight := 0
		answered := func() {
			h, _, err := c.Recv()
			if err != nil || h.Command != wire.Write || h.Status != 0 {
				b.Fatalf("WRITE: %v %#x", err, h.Status)
			}
			inflight--
		}
		for off := 0; off < size; off += step {
			if inflight == 2 {
				answered()
			}
			if _, err := c.Send(wire.Write, smbtest.WriteBody(fid, uint64(off), data)); err != nil {
				b.Fatal(err)
			}
			inflight++
		}
		for inflight > 0 {
			answered()
		}
		if st := c.CloseFile(fid); st != 0 {
			b.Fatalf("CLOSE: %#x", st)
		}
	}
}

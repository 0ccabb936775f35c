package smb_test

import (
	"strconv"
	"sync"
	"testing"

	"github.com/lazuli-storage/lazuli/internal/smb/smbtest"
	"github.com/lazuli-storage/lazuli/internal/smb/wire"
)

const racers = 12

// race runs fn on racers SMB connections at once and returns the
// statuses.
func race(t *testing.T, e *env, fn func(i int, c *smbtest.Client) uint32) []uint32 {
	t.Helper()
	clients := make([]*smbtest.Client, racers)
	for i := range clients {
		clients[i] = e.smb(t)
	}
	out := make([]uint32, racers)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			out[i] = fn(i, c)
		}()
	}
	close(start)
	wg.Wait()
	return out
}

func count(sts []uint32, want uint32) int {
	n := 0
	for _, s := range sts {
		if s == want {
			n++
		}
	}
	return n
}

// TestRaceExclusiveOpens: of many SMB clients opening one file with no
// sharing at once, exactly one gets it; the others get
// STATUS_SHARING_VIOLATION.
func TestRaceExclusiveOpens(t *testing.T) {
	engines(t, func(t *testing.T, e *env) {
		e.createFile(t, "x.txt", []byte("x"))
		sts := race(t, e, func(i int, c *smbtest.Client) uint32 {
			_, st := c.Create("x.txt", readData|writeData, 0, openOnly, nonDir)
			return st
		})
		if count(sts, 0) != 1 || count(sts, smbtest.StatusSharingViolation) != racers-1 {
			t.Fatalf("statuses %x: want one success and %d sharing violations", sts, racers-1)
		}
	})
}

// TestRaceCreateNew: of many FILE_CREATE opens of one new name, exactly one
// creates it; the others get STATUS_OBJECT_NAME_COLLISION.
func TestRaceCreateNew(t *testing.T) {
	engines(t, func(t *testing.T, e *env) {
		sts := race(t, e, func(i int, c *smbtest.Client) uint32 {
			fid, st := c.Create("new.txt", readData|writeData, shareR|shareW|shareD, 2 /* FILE_CREATE */, nonDir)
			if st == 0 {
				c.Write(fid, 0, []byte(strconv.Itoa(i)))
				c.CloseFile(fid)
			}
			return st
		})
		if count(sts, 0) != 1 || count(sts, 0xC0000035) != racers-1 {
			t.Fatalf("statuses %x: want one success and %d name collisions", sts, racers-1)
		}
	})
}

// TestRaceExclusiveLocks: of many opens taking an exclusive lock on one
// range at once, exactly one gets it.
func TestRaceExclusiveLocks(t *testing.T) {
	engines(t, func(t *testing.T, e *env) {
		e.createFile(t, "l.txt", make([]byte, 100))
		sts := race(t, e, func(i int, c *smbtest.Client) uint32 {
			fid, st := c.Create("l.txt", readData|writeData, shareR|shareW, openOnly, nonDir)
			if st != 0 {
				return st
			}
			return c.Lock(fid, 10, 20, wire.LockExclusive|wire.LockFailImmediately)
		})
		if count(sts, 0) != 1 || count(sts, smbtest.StatusLockNotGranted) != racers-1 {
			t.Fatalf("statuses %x: want one lock and %d refusals", sts, racers-1)
		}
	})
}

// TestRaceSMBWritesAndRESTWrites: SMB writes and REST Put Ranges to
// disjoint ranges of one file, all at once, all land.
func TestRaceSMBWritesAndRESTWrites(t *testing.T) {
	engines(t, func(t *testing.T, e *env) {
		const n = 8
		f := e.createFile(t, "w.txt", make([]byte, 2*n*512))
		c := e.smb(t)
		fid, st := c.Create("w.txt", readData|writeData, shareR|shareW|shareD, openOnly, nonDir)
		if st != 0 {
			t.Fatalf("open: %#x", st)
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		for i := 0; i < n; i++ {
			wg.Add(2)
			go func() {
				defer wg.Done()
				mu.Lock() // one smbtest client sends one request at a time
				defer mu.Unlock()
				if st := c.Write(fid, uint64(2*i*512), bytesOf('s', 512)); st != 0 {
					t.Errorf("SMB write %d: %#x", i, st)
				}
			}()
			go func() {
				defer wg.Done()
				if _, err := f.UploadRange(ctx(t), int64((2*i+1)*512), body(bytesOf('r', 512)), nil); err != nil {
					t.Errorf("REST write %d: %v", i, err)
				}
			}()
		}
		wg.Wait()
		got, st := c.Read(fid, 0, 2*n*512)
		if st != 0 || len(got) != 2*n*512 {
			t.Fatalf("read: %d bytes, %#x", len(got), st)
		}
		for i := 0; i < 2*n; i++ {
			want := byte('s')
			if i%2 == 1 {
				want = 'r'
			}
			for _, b := range got[i*512 : (i+1)*512] {
				if b != want {
					t.Fatalf("block %d holds %q, want %q", i, b, want)
				}
			}
		}
	})
}

func bytesOf(b byte, n int) []byte {
	out := make([]byte, n)
	for i := range out {
		out[i] = b
	}
	return out
}

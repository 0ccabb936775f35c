package file_test

import (
	"bytes"
	"fmt"
	"sync"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/lease"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/share"

	"github.com/lazuli-storage/lazuli/conformance/harness"
)

// TestRaceDisjointPutRanges: REST writes are last writer wins per byte,
// so many clients writing disjoint ranges of one file at once all land.
func TestRaceDisjointPutRanges(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		e := newEnv(t, tg)
		const n, size = 24, 3000 // unaligned on purpose
		f := e.sc.NewRootDirectoryClient().NewFileClient("shared")
		_, err := f.Create(ctx, n*size, nil)
		must(t, err)
		want := make([]byte, n*size)
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for i := 0; i < n; i++ {
			part := bytes.Repeat([]byte{byte('A' + i)}, size)
			copy(want[i*size:], part)
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := f.UploadRange(ctx, int64(i*size), body(part), nil)
				errs <- err
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			must(t, err)
		}
		dl, err := f.DownloadStream(ctx, nil)
		must(t, err)
		if !bytes.Equal(readAll(t, dl.Body), want) {
			t.Fatal("a concurrent Put Range was lost")
		}
	})
}

// TestRaceLeaseExactlyOneHolder: of many concurrent Lease File acquires
// with different ids exactly one wins; the rest get 409.
func TestRaceLeaseExactlyOneHolder(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		e := newEnv(t, tg)
		f := e.sc.NewRootDirectoryClient().NewFileClient("contended")
		_, err := f.Create(ctx, 1, nil)
		must(t, err)
		const n = 20
		var wg sync.WaitGroup
		var mu sync.Mutex
		wins := 0
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				lc, err := lease.NewFileClient(f, &lease.FileClientOptions{LeaseID: ptr(fmt.Sprintf("00000000-0000-0000-0000-%012d", i))})
				if err != nil {
					t.Error(err)
					return
				}
				_, err = lc.Acquire(ctx, nil)
				mu.Lock()
				defer mu.Unlock()
				if err == nil {
					wins++
				} else if !isCode(err, 409, "LeaseAlreadyPresent") {
					t.Errorf("acquire: %v", err)
				}
			}()
		}
		wg.Wait()
		if wins != 1 {
			t.Fatalf("%d holders", wins)
		}
		// The same for share leases.
		wins = 0
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				lc, err := lease.NewShareClient(e.sc, &lease.ShareClientOptions{LeaseID: ptr(fmt.Sprintf("10000000-0000-0000-0000-%012d", i))})
				if err != nil {
					t.Error(err)
					return
				}
				_, err = lc.Acquire(ctx, -1, nil)
				mu.Lock()
				defer mu.Unlock()
				if err == nil {
					wins++
				} else if !isCode(err, 409, "LeaseAlreadyPresent") {
					t.Errorf("acquire share: %v", err)
				}
			}()
		}
		wg.Wait()
		if wins != 1 {
			t.Fatalf("%d share lease holders", wins)
		}
	})
}

// TestRaceSnapshotConsistentUnderWriters: snapshots taken while writers
// run hold every file either wholly before or wholly after each Put
// Range, and a write to one file before another in time is never seen
// without the earlier one.
func TestRaceSnapshotConsistentUnderWriters(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		e := newEnv(t, tg)
		const size = 128 << 10
		root := e.sc.NewRootDirectoryClient()
		a, b := root.NewFileClient("a"), root.NewFileClient("b")
		for _, f := range []*file.Client{a, b} {
			_, err := f.Create(ctx, size, nil)
			must(t, err)
			_, err = f.UploadRange(ctx, 0, body(make([]byte, size)), nil)
			must(t, err)
		}
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for v := byte(1); ; v++ {
				select {
				case <-stop:
					return
				default:
				}
				for _, f := range []*file.Client{a, b} {
					if _, err := f.UploadRange(ctx, 0, body(bytes.Repeat([]byte{v}, size)), nil); err != nil {
						t.Error(err)
						return
					}
				}
			}
		}()
		var snaps []string
		for i := 0; i < 8; i++ {
			s, err := e.sc.CreateSnapshot(ctx, nil)
			must(t, err)
			snaps = append(snaps, *s.Snapshot)
		}
		close(stop)
		wg.Wait()
		for _, sn := range snaps {
			ss, err := e.sc.WithSnapshot(sn)
			must(t, err)
			var vals []byte
			for _, name := range []string{"a", "b"} {
				dl, err := ss.NewRootDirectoryClient().NewFileClient(name).DownloadStream(ctx, nil)
				must(t, err)
				got := readAll(t, dl.Body)
				if len(got) != size || !bytes.Equal(got, bytes.Repeat(got[:1], size)) {
					t.Fatalf("snapshot %s holds part of a write to %s", sn, name)
				}
				vals = append(vals, got[0])
			}
			if vals[0] != vals[1] && vals[0] != vals[1]+1 {
				t.Fatalf("snapshot %s: a=%d b=%d", sn, vals[0], vals[1])
			}
		}
		_, err := e.sc.Delete(ctx, &share.DeleteOptions{DeleteSnapshots: ptr(share.DeleteSnapshotsOptionTypeInclude)})
		must(t, err)
	})
}

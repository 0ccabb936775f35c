package blob_test

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"

	"github.com/lazuli-storage/lazuli/conformance/harness"
)

// startGate releases n goroutines at once so that their requests overlap.
type startGate struct {
	ready sync.WaitGroup
	start chan struct{}
}

func newStartGate(n int) *startGate {
	g := &startGate{start: make(chan struct{})}
	g.ready.Add(n)
	return g
}

func (g *startGate) wait() { g.ready.Done(); <-g.start }
func (g *startGate) open() { g.ready.Wait(); close(g.start) }

// TestRaceAuditDeleteContainerVsUpload: uploads racing Delete Container
// either land first (and are deleted with it) or fail with 404
// ContainerNotFound; a container created again under the name is empty.
func TestRaceAuditDeleteContainerVsUpload(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		c := client(t, tg)
		ctx := harness.Ctx(t)
		const writers = 8
		for round := 0; round < 4; round++ {
			name := harness.UniqueName("dc")
			_, err := c.CreateContainer(ctx, name, nil)
			must(t, err)
			cc := c.ServiceClient().NewContainerClient(name)
			g := newStartGate(writers + 1)
			var wg sync.WaitGroup
			wg.Add(writers + 1)
			for w := 0; w < writers; w++ {
				go func() {
					defer wg.Done()
					bb := cc.NewBlockBlobClient(fmt.Sprint("b", w))
					g.wait()
					var err error
					if w%2 == 0 {
						_, err = bb.Upload(context.Background(), body([]byte("payload")), nil)
					} else {
						_, err = bb.StageBlock(context.Background(), blockID(w), body([]byte("staged")), nil)
					}
					if err != nil && !isCode(err, 404, "ContainerNotFound") {
						t.Errorf("writer %d: %v", w, err)
					}
				}()
			}
			go func() {
				defer wg.Done()
				g.wait()
				if _, err := cc.Delete(context.Background(), nil); err != nil {
					t.Error(err)
				}
			}()
			g.open()
			wg.Wait()
			if t.Failed() {
				return
			}
			for w := 0; w < writers; w++ {
				_, err := cc.NewBlockBlobClient(fmt.Sprint("b", w)).GetProperties(ctx, nil)
				mustCode(t, err, 404, "ContainerNotFound")
			}
			_, err = c.CreateContainer(ctx, name, nil)
			must(t, err)
			pager := cc.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Include: container.ListBlobsInclude{UncommittedBlobs: true, Snapshots: true}})
			for pager.More() {
				page, err := pager.NextPage(ctx)
				must(t, err)
				if n := len(page.Segment.BlobItems); n != 0 {
					t.Fatalf("round %d: re-created container lists %d blobs", round, n)
				}
			}
		}
	})
}

// TestRaceAuditLeaseVsDelete: Acquire Lease racing Delete Blob: exactly one
// wins; the loser gets 404 BlobNotFound or 412 LeaseIdMissing, and the
// blob's state matches the winner.
func TestRaceAuditLeaseVsDelete(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		for round := 0; round < 8; round++ {
			bb := e.cc.NewBlockBlobClient(fmt.Sprint("ld", round))
			_, err := bb.Upload(ctx, body([]byte("x")), nil)
			must(t, err)
			lc, err := lease.NewBlobClient(bb, nil)
			must(t, err)
			g := newStartGate(2)
			var acqErr, delErr error
			var wg sync.WaitGroup
			wg.Add(2)
			go func() {
				defer wg.Done()
				g.wait()
				_, acqErr = lc.AcquireLease(context.Background(), -1, nil)
			}()
			go func() {
				defer wg.Done()
				g.wait()
				_, delErr = bb.Delete(context.Background(), nil)
			}()
			g.open()
			wg.Wait()
			switch {
			case acqErr == nil && isCode(delErr, 412, "LeaseIdMissing"):
				p, err := bb.GetProperties(ctx, nil)
				must(t, err)
				if *p.LeaseState != "leased" {
					t.Fatalf("round %d: lease won, state %s", round, *p.LeaseState)
				}
			case delErr == nil && isCode(acqErr, 404, "BlobNotFound"):
				_, err := bb.GetProperties(ctx, nil)
				mustCode(t, err, 404, "BlobNotFound")
			default:
				t.Fatalf("round %d: acquire %v, delete %v", round, acqErr, delErr)
			}
		}
	})
}

// TestRaceAuditSameBlockIDThenCommit: concurrent Stage Block calls with one
// block id leave one block holding one caller's bytes, which a commit
// makes the whole content.
func TestRaceAuditSameBlockIDThenCommit(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		bb := e.cc.NewBlockBlobClient("same-id")
		const n = 8
		g := newStartGate(n)
		var wg sync.WaitGroup
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				data := bytes.Repeat([]byte{byte('a' + i)}, 1000+i)
				g.wait()
				if _, err := bb.StageBlock(context.Background(), blockID(1), body(data), nil); err != nil {
					t.Error(err)
				}
			}()
		}
		g.open()
		wg.Wait()
		bl, err := bb.GetBlockList(ctx, blockblob.BlockListTypeUncommitted, nil)
		must(t, err)
		if len(bl.UncommittedBlocks) != 1 {
			t.Fatalf("%d staged blocks for one id", len(bl.UncommittedBlocks))
		}
		_, err = bb.CommitBlockList(ctx, []string{blockID(1)}, nil)
		must(t, err)
		got, err := bb.DownloadStream(ctx, nil)
		must(t, err)
		data := readAll(t, got.Body)
		if len(data) < 1000 || len(data) >= 1000+n || !bytes.Equal(data, bytes.Repeat(data[:1], len(data))) ||
			int(data[0]-'a') != len(data)-1000 || int64(len(data)) != *bl.UncommittedBlocks[0].Size {
			t.Fatalf("committed %d bytes that are not one caller's block", len(data))
		}
	})
}

// TestRaceAuditSnapshotVsUpload: snapshots taken while the blob is being
// overwritten each hold one whole version, the one named by the ETag the
// snapshot reported.
func TestRaceAuditSnapshotVsUpload(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		bb := e.cc.NewBlockBlobClient("snap-race")
		up, err := bb.Upload(ctx, body([]byte("v-initial")), nil)
		must(t, err)
		var mu sync.Mutex
		versions := map[string]string{string(*up.ETag): "v-initial"}
		snaps := map[string]string{} // snapshot id -> ETag it reported
		const writers, snappers, each = 2, 2, 6
		g := newStartGate(writers + snappers)
		var wg sync.WaitGroup
		for w := 0; w < writers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				g.wait()
				for i := 0; i < each; i++ {
					content := fmt.Sprintf("v-%d-%d-%s", w, i, bytes.Repeat([]byte{'x'}, 70000*(i%2)))
					r, err := bb.Upload(context.Background(), body([]byte(content)), nil)
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					versions[string(*r.ETag)] = content
					mu.Unlock()
				}
			}()
		}
		for n := 0; n < snappers; n++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				g.wait()
				for i := 0; i < each; i++ {
					r, err := bb.CreateSnapshot(context.Background(), nil)
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					snaps[*r.Snapshot] = string(*r.ETag)
					mu.Unlock()
				}
			}()
		}
		g.open()
		wg.Wait()
		if t.Failed() {
			return
		}
		if len(snaps) != snappers*each {
			t.Fatalf("%d distinct snapshots, want %d", len(snaps), snappers*each)
		}
		for id, etag := range snaps {
			want, ok := versions[etag]
			if !ok {
				t.Fatalf("snapshot %s reported ETag %s of no upload", id, etag)
			}
			sc, err := bb.WithSnapshot(id)
			must(t, err)
			got, err := sc.DownloadStream(ctx, nil)
			must(t, err)
			if data := string(readAll(t, got.Body)); data != want {
				t.Fatalf("snapshot %s holds %d bytes, its ETag names a %d-byte version", id, len(data), len(want))
			}
		}
	})
}

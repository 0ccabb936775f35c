package blob

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/conditional"
	"github.com/lazuli-storage/lazuli/internal/content"
	"github.com/lazuli-storage/lazuli/internal/engine/memstore"
	"github.com/lazuli-storage/lazuli/internal/engine/sqlitestore"
	"github.com/lazuli-storage/lazuli/internal/keyenc"
	"github.com/lazuli-storage/lazuli/internal/lease"
	"github.com/lazuli-storage/lazuli/storage"
)

// onEngines runs fn against a fresh service with container "cont" on the
// memory and the SQLite engine. The clock stands still unless the test
// moves it.
func onEngines(t *testing.T, fn func(t *testing.T, s *Service, clk *clock)) {
	open := map[string]func(t *testing.T) storage.Engine{
		"memory": func(t *testing.T) storage.Engine { return memstore.New() },
		"sqlite": func(t *testing.T) storage.Engine {
			e, err := sqlitestore.Open(sqlitestore.Options{Dir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			return e
		},
	}
	for _, name := range []string{"memory", "sqlite"} {
		t.Run(name, func(t *testing.T) {
			e := open[name](t)
			t.Cleanup(func() { e.Close() })
			clk := &clock{t: time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)}
			var mu sync.Mutex
			n := 0
			s := New(e, clk.now, func() string {
				mu.Lock()
				defer mu.Unlock()
				n++
				return fmt.Sprintf("%08d-0000-0000-0000-000000000000", n)
			})
			if _, err := s.CreateContainer(context.Background(), "acct", "cont", nil, ""); err != nil {
				t.Fatal(err)
			}
			fn(t, s, clk)
		})
	}
}

// gate releases n goroutines at once so that they really overlap.
type gate struct {
	ready sync.WaitGroup
	start chan struct{}
}

func newGate(n int) *gate {
	g := &gate{start: make(chan struct{})}
	g.ready.Add(n)
	return g
}

// wait blocks the calling goroutine until all n have arrived.
func (g *gate) wait() { g.ready.Done(); <-g.start }

// open lets everybody go once all have arrived.
func (g *gate) open() { g.ready.Wait(); close(g.start) }

func codeOf(err error) string {
	if e, ok := azerr.As(err); ok {
		return e.Code.String()
	}
	if err != nil {
		return err.Error()
	}
	return ""
}

func ingest(t *testing.T, s *Service, data []byte) Ingested {
	t.Helper()
	in, err := s.Ingest(context.Background(), bytes.NewReader(data), true, nil)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// chunked writes data to the chunk store (no inlining), as large bodies are.
func chunked(t *testing.T, s *Service, data []byte) Ingested {
	t.Helper()
	in, err := s.Ingest(context.Background(), bytes.NewReader(data), false, nil)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

func readBlob(t *testing.T, s *Service, ref Ref) (*Blob, []byte) {
	t.Helper()
	b, err := s.GetBlob(context.Background(), ref, Cond{}, "")
	if err != nil {
		t.Fatal(err)
	}
	rc := s.Open(context.Background(), b, 0, b.Size)
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return b, data
}

func ifMatch(etag uint64) Cond {
	return Cond{Conditions: conditional.Conditions{IfMatch: []string{content.ETagRaw(etag)}}}
}

func bid(i int) string {
	return base64.StdEncoding.EncodeToString([]byte(fmt.Sprintf("block-%04d", i)))
}

// TestETagNotReusedAfterRecreate: a blob or container deleted and created
// again within one clock reading must not get the ETag of the old one, or
// an If-Match holding the old ETag would pass against the new object.
func TestETagNotReusedAfterRecreate(t *testing.T) {
	onEngines(t, func(t *testing.T, s *Service, clk *clock) {
		ctx := context.Background()
		ref := Ref{Account: "acct", Container: "cont", Name: "b", Snapshot: ""}
		old := put(t, s, "b", "old", Cond{})
		if err := s.DeleteBlob(ctx, ref, "", Cond{}); err != nil {
			t.Fatal(err)
		}
		nb := put(t, s, "b", "new", Cond{})
		if nb.ETag <= old.ETag {
			t.Fatalf("re-created blob ETag %x, old %x", nb.ETag, old.ETag)
		}
		_, err := s.SetBlobMetadata(ctx, ref, []KV{{"k", "v"}}, ifMatch(old.ETag))
		if codeOf(err) != "ConditionNotMet" {
			t.Fatalf("If-Match with the deleted blob's ETag: %v", err)
		}
		c1, err := s.CreateContainer(ctx, "acct", "again", nil, "")
		if err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteContainer(ctx, "acct", "again", Cond{}); err != nil {
			t.Fatal(err)
		}
		c2, err := s.CreateContainer(ctx, "acct", "again", nil, "")
		if err != nil {
			t.Fatal(err)
		}
		if c2.ETag <= c1.ETag {
			t.Fatalf("re-created container ETag %x, old %x", c2.ETag, c1.ETag)
		}
	})
}

// TestRacePutBlockListVsPutBlob: a commit racing a single-shot upload
// leaves one whole version, never a mix of the two, and the stored ETag is
// the one the later of the two writes returned.
func TestRacePutBlockListVsPutBlob(t *testing.T) {
	onEngines(t, func(t *testing.T, s *Service, clk *clock) {
		ctx := context.Background()
		for round := 0; round < 20; round++ {
			ref := Ref{Account: "acct", Container: "cont", Name: fmt.Sprint("mix", round), Snapshot: ""}
			var ids []BlockListItem
			var listed bytes.Buffer
			for i := 0; i < 4; i++ {
				part := bytes.Repeat([]byte{byte('a' + i)}, 100+i)
				listed.Write(part)
				if err := s.PutBlock(ctx, ref, bid(i), chunked(t, s, part), Cond{}); err != nil {
					t.Fatal(err)
				}
				ids = append(ids, BlockListItem{ID: bid(i), Kind: "Uncommitted"})
			}
			single := bytes.Repeat([]byte{'Z'}, 300)
			in := chunked(t, s, single)
			g := newGate(2)
			var listB, singleB *Blob
			var listErr, singleErr error
			var wg sync.WaitGroup
			wg.Add(2)
			go func() {
				defer wg.Done()
				g.wait()
				listB, listErr = s.PutBlockList(ctx, PutBlockListRequest{Ref: ref, Blocks: ids})
			}()
			go func() {
				defer wg.Done()
				g.wait()
				singleB, singleErr = s.PutBlob(ctx, PutBlobRequest{Ref: ref, Type: BlockBlob, Data: in})
			}()
			g.open()
			wg.Wait()
			if singleErr != nil {
				t.Fatal(singleErr)
			}
			// Put Blob first drops the staged blocks: the commit then
			// finds none.
			if listErr != nil && codeOf(listErr) != "InvalidBlockList" {
				t.Fatal(listErr)
			}
			b, data := readBlob(t, s, ref)
			switch {
			case bytes.Equal(data, single):
				if b.ETag != singleB.ETag || listErr == nil && listB.ETag > singleB.ETag {
					t.Fatalf("round %d: single-shot content with ETag %x (put %x)", round, b.ETag, singleB.ETag)
				}
			case bytes.Equal(data, listed.Bytes()):
				if listErr != nil || b.ETag != listB.ETag || listB.ETag < singleB.ETag {
					t.Fatalf("round %d: committed content with ETag %x after %v", round, b.ETag, listErr)
				}
			default:
				t.Fatalf("round %d: mixed content %q", round, data)
			}
			bl, err := s.GetBlockList(ctx, ref, "all", Cond{})
			if err != nil {
				t.Fatal(err)
			}
			if len(bl.Uncommitted) != 0 {
				t.Fatalf("round %d: %d staged blocks survive", round, len(bl.Uncommitted))
			}
		}
	})
}

// TestRacePutBlockSameID: concurrent Put Block calls with one block id
// leave one staged block holding exactly one caller's bytes; committing it
// gives that content whole.
func TestRacePutBlockSameID(t *testing.T) {
	onEngines(t, func(t *testing.T, s *Service, clk *clock) {
		ctx := context.Background()
		ref := Ref{Account: "acct", Container: "cont", Name: "same", Snapshot: ""}
		const n = 12
		payloads := map[string]bool{}
		ins := make([]Ingested, n)
		for i := range ins {
			p := bytes.Repeat([]byte{byte('A' + i)}, 1000+i)
			payloads[string(p)] = true
			ins[i] = chunked(t, s, p)
		}
		g := newGate(n)
		var wg sync.WaitGroup
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				g.wait()
				if err := s.PutBlock(ctx, ref, bid(7), ins[i], Cond{}); err != nil {
					t.Error(err)
				}
			}()
		}
		g.open()
		wg.Wait()
		bl, err := s.GetBlockList(ctx, ref, "uncommitted", Cond{})
		if err != nil {
			t.Fatal(err)
		}
		if len(bl.Uncommitted) != 1 || bl.Uncommitted[0].Name != bid(7) {
			t.Fatalf("staged %+v", bl.Uncommitted)
		}
		var st *Staging
		if err := s.Engine().View(ctx, func(tx storage.Tx) error {
			if err := s.keyed(tx, &ref); err != nil {
				return err
			}
			st, err = getStaging(tx, ref)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if st == nil || st.Count != 1 {
			t.Fatalf("staging record %+v, want a count of 1", st)
		}
		if _, err := s.PutBlockList(ctx, PutBlockListRequest{Ref: ref, Blocks: []BlockListItem{{ID: bid(7), Kind: "Latest"}}}); err != nil {
			t.Fatal(err)
		}
		b, data := readBlob(t, s, ref)
		if !payloads[string(data)] || b.Size != int64(len(data)) || int64(len(data)) != bl.Uncommitted[0].Size {
			t.Fatalf("committed %d bytes (staged size %d), not one caller's block", len(data), bl.Uncommitted[0].Size)
		}
	})
}

// TestRaceLeaseAcquireVsDelete: an acquire racing a Delete Blob without a
// lease id: exactly one wins; the loser fails for the reason the winner
// gives it (BlobNotFound, or LeaseIdMissing).
func TestRaceLeaseAcquireVsDelete(t *testing.T) {
	onEngines(t, func(t *testing.T, s *Service, clk *clock) {
		ctx := context.Background()
		wonLease, wonDelete := 0, 0
		for round := 0; round < 30; round++ {
			name := fmt.Sprint("ld", round)
			ref := Ref{Account: "acct", Container: "cont", Name: name, Snapshot: ""}
			put(t, s, name, "x", Cond{})
			g := newGate(2)
			var acqErr, delErr error
			var res lease.Result
			var wg sync.WaitGroup
			wg.Add(2)
			go func() {
				defer wg.Done()
				g.wait()
				_, res, acqErr = s.LeaseBlob(ctx, ref, LeaseRequest{Action: lease.Action{Kind: lease.Acquire, Duration: lease.Infinite}})
			}()
			go func() {
				defer wg.Done()
				g.wait()
				delErr = s.DeleteBlob(ctx, ref, "", Cond{})
			}()
			g.open()
			wg.Wait()
			switch {
			case acqErr == nil && codeOf(delErr) == "LeaseIdMissing":
				wonLease++
				b, err := s.GetBlobProperties(ctx, ref, Cond{LeaseID: res.LeaseID}, "")
				if err != nil || b.Lease.StateName(clk.now()) != "leased" {
					t.Fatalf("round %d: lease won but blob %v %v", round, b, err)
				}
				if err := s.DeleteBlob(ctx, ref, "", Cond{LeaseID: res.LeaseID}); err != nil {
					t.Fatal(err)
				}
			case delErr == nil && codeOf(acqErr) == "BlobNotFound":
				wonDelete++
				if _, err := s.GetBlobProperties(ctx, ref, Cond{}, ""); codeOf(err) != "BlobNotFound" {
					t.Fatalf("round %d: delete won but blob answers %v", round, err)
				}
			default:
				t.Fatalf("round %d: acquire %v, delete %v", round, acqErr, delErr)
			}
		}
		t.Logf("lease won %d, delete won %d", wonLease, wonDelete)
	})
}

// TestRaceSnapshotVsWrite: snapshots taken while the blob is rewritten
// each hold one whole version: the content that version's ETag names.
func TestRaceSnapshotVsWrite(t *testing.T) {
	onEngines(t, func(t *testing.T, s *Service, clk *clock) {
		ctx := context.Background()
		ref := Ref{Account: "acct", Container: "cont", Name: "snapped", Snapshot: ""}
		first := put(t, s, "snapped", "v-initial", Cond{})
		const writers, snappers, each = 4, 4, 10
		var mu sync.Mutex
		versions := map[uint64]string{first.ETag: "v-initial"}
		var snaps []*Blob
		g := newGate(writers + snappers)
		var wg sync.WaitGroup
		for w := 0; w < writers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				g.wait()
				for i := 0; i < each; i++ {
					content := fmt.Sprintf("v-%d-%d-%s", w, i, bytes.Repeat([]byte{'x'}, w*100+i))
					var in Ingested
					if i%2 == 0 {
						in = ingest(t, s, []byte(content))
					} else {
						in = chunked(t, s, []byte(content))
					}
					b, err := s.PutBlob(ctx, PutBlobRequest{Ref: ref, Type: BlockBlob, Data: in})
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					versions[b.ETag] = content
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
					sn, err := s.SnapshotBlob(ctx, ref, nil, Cond{})
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					snaps = append(snaps, sn)
					mu.Unlock()
				}
			}()
		}
		g.open()
		wg.Wait()
		if t.Failed() {
			return
		}
		ids := map[string]bool{}
		for _, sn := range snaps {
			if ids[sn.Snapshot] {
				t.Fatalf("snapshot id %s handed out twice", sn.Snapshot)
			}
			ids[sn.Snapshot] = true
			want, ok := versions[sn.ETag]
			if !ok {
				t.Fatalf("snapshot %s has ETag %x of no written version", sn.Snapshot, sn.ETag)
			}
			b, data := readBlob(t, s, Ref{Account: "acct", Container: "cont", Name: "snapped", Snapshot: sn.Snapshot})
			if string(data) != want || b.ETag != sn.ETag {
				t.Fatalf("snapshot %s holds %q, its ETag names %q", sn.Snapshot, data, want)
			}
		}
		if len(ids) != snappers*each {
			t.Fatalf("%d snapshots, want %d", len(ids), snappers*each)
		}
	})
}

// TestRaceDeleteContainerVsPutBlob: writes racing Delete Container either
// land before the delete (and go with it) or fail with ContainerNotFound;
// nothing of the container survives, and a container created again under
// the name starts empty.
func TestRaceDeleteContainerVsPutBlob(t *testing.T) {
	onEngines(t, func(t *testing.T, s *Service, clk *clock) {
		ctx := context.Background()
		const writers = 8
		for round := 0; round < 10; round++ {
			cname := fmt.Sprint("doomed", round)
			if _, err := s.CreateContainer(ctx, "acct", cname, nil, ""); err != nil {
				t.Fatal(err)
			}
			in := chunked(t, s, []byte("payload"))
			g := newGate(writers + 1)
			var wg sync.WaitGroup
			wg.Add(writers + 1)
			for w := 0; w < writers; w++ {
				go func() {
					defer wg.Done()
					ref := Ref{Account: "acct", Container: cname, Name: fmt.Sprint("b", w)}
					g.wait()
					var err error
					switch w % 4 {
					case 0:
						_, err = s.PutBlob(ctx, PutBlobRequest{Ref: ref, Type: BlockBlob, Data: in, Tags: []KV{{"t", "v"}}})
					case 1:
						err = s.PutBlock(ctx, ref, bid(w), in, Cond{})
					case 2:
						_, err = s.PutBlob(ctx, PutBlobRequest{Ref: ref, Type: AppendBlob})
						if err == nil {
							_, _, err = s.AppendBlock(ctx, ref, AppendRequest{Data: in})
						}
					case 3:
						_, err = s.PutBlob(ctx, PutBlobRequest{Ref: ref, Type: PageBlob, PageSize: 1024})
					}
					if err != nil && codeOf(err) != "ContainerNotFound" {
						t.Errorf("writer %d: %v", w, err)
					}
				}()
			}
			go func() {
				defer wg.Done()
				g.wait()
				if err := s.DeleteContainer(ctx, "acct", cname, Cond{}); err != nil {
					t.Error(err)
				}
			}()
			g.open()
			wg.Wait()
			if t.Failed() {
				return
			}
			// No key of the container is left, whatever its kind.
			if err := s.Engine().View(ctx, func(tx storage.Tx) error {
				for _, kind := range []byte{kindContainer, kindBlob, kindStaging, kindBlock, kindAppend, kindPage, kindBlockList} {
					p := keyenc.AppendString(keyenc.AppendString([]byte{kind}, "acct"), cname)
					it := tx.Scan(p, keyenc.PrefixEnd(p), false)
					left := it.Next()
					it.Close()
					if left {
						return fmt.Errorf("kind %c: keys of the deleted container remain", kind)
					}
				}
				it := tx.Scan([]byte{kindTagIndex}, []byte{kindTagIndex + 1}, false)
				defer it.Close()
				if it.Next() {
					return fmt.Errorf("tag index entry %q remains", it.Key())
				}
				return nil
			}); err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
			if _, err := s.CreateContainer(ctx, "acct", cname, nil, ""); err != nil {
				t.Fatal(err)
			}
			items, _, err := s.ListBlobs(ctx, "acct", cname, ListBlobsRequest{Max: 100, Uncommitted: true, Snapshots: true})
			if err != nil || len(items) != 0 {
				t.Fatalf("round %d: re-created container lists %d items (%v)", round, len(items), err)
			}
			if err := s.DeleteContainer(ctx, "acct", cname, Cond{}); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// steppingClock moves forward by step after every reading, so an operation
// that reads the clock twice sees two different instants.
type steppingClock struct {
	mu   sync.Mutex
	t    time.Time
	step time.Duration
}

func (c *steppingClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.t
	c.t = c.t.Add(c.step)
	return t
}

// TestPutBlockFromURLReadsTheClockOnce: Put Block From URL checks the
// source's lease at the same instant as everything else it decides. With
// a clock that jumps past the source's fixed lease between two readings,
// a second reading would see the lease expired and refuse its id.
func TestPutBlockFromURLReadsTheClockOnce(t *testing.T) {
	onEngines(t, func(t *testing.T, s *Service, clk *clock) {
		ctx := context.Background()
		sc := &steppingClock{t: clk.now()}
		s.now = sc.now
		src := Ref{Account: "acct", Container: "cont", Name: "src", Snapshot: ""}
		if _, err := s.PutBlob(ctx, PutBlobRequest{Ref: src, Type: BlockBlob, Data: ingest(t, s, []byte("source bytes"))}); err != nil {
			t.Fatal(err)
		}
		_, res, err := s.LeaseBlob(ctx, src, LeaseRequest{Action: lease.Action{Kind: lease.Acquire, Duration: 20}})
		if err != nil {
			t.Fatal(err)
		}
		// From now on every reading is 25 s after the one before: the
		// operation's first reading still falls inside the 20 s lease, a
		// second one would not.
		sc.mu.Lock()
		sc.step = 25 * time.Second
		sc.mu.Unlock()
		dst := Ref{Account: "acct", Container: "cont", Name: "dst", Snapshot: ""}
		if err := s.PutBlockFromURL(ctx, dst, bid(1), src, 0, -1, Cond{LeaseID: res.LeaseID}, Cond{}); err != nil {
			t.Fatalf("Put Block From URL under an active source lease: %v", err)
		}
	})
}

// TestRaceSealAgainstAppends seals an append blob while many goroutines
// append to it: the seal is one point in the order of appends, so every
// append either landed before it (and is in the content, at its offset)
// or was refused with BlobIsSealed; none is lost or half-written.
func TestRaceSealAgainstAppends(t *testing.T) {
	onEngines(t, func(t *testing.T, s *Service, clk *clock) {
		ctx := context.Background()
		ref := Ref{Account: "acct", Container: "cont", Name: "log", Snapshot: ""}
		if _, err := s.PutBlob(ctx, PutBlobRequest{Ref: ref, Type: AppendBlob}); err != nil {
			t.Fatal(err)
		}
		const writers = 24
		g := newGate(writers + 1)
		type result struct {
			off  int64
			line string
			err  error
		}
		results := make([]result, writers)
		var wg sync.WaitGroup
		for i := 0; i < writers; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				line := fmt.Sprintf("line %02d\n", i)
				in := ingest(t, s, []byte(line))
				g.wait()
				_, off, err := s.AppendBlock(ctx, ref, AppendRequest{Data: in})
				results[i] = result{off, line, err}
			}(i)
		}
		var sealErr error
		wg.Add(1)
		go func() {
			defer wg.Done()
			g.wait()
			_, sealErr = s.SealBlob(ctx, ref, nil, Cond{})
		}()
		g.open()
		wg.Wait()
		if sealErr != nil {
			t.Fatal(sealErr)
		}
		b, err := s.GetBlob(ctx, ref, Cond{}, "")
		if err != nil {
			t.Fatal(err)
		}
		rc := s.Open(ctx, b, 0, b.Size)
		content, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		var landed int64
		for _, r := range results {
			switch codeOf(r.err) {
			case "":
				landed += int64(len(r.line))
				if got := string(content[r.off : r.off+int64(len(r.line))]); got != r.line {
					t.Fatalf("append at %d holds %q, want %q", r.off, got, r.line)
				}
			case "BlobIsSealed":
			default:
				t.Fatalf("append: %v", r.err)
			}
		}
		if landed != b.Size || !b.Sealed {
			t.Fatalf("landed %d bytes, blob holds %d, sealed %v", landed, b.Size, b.Sealed)
		}
		if _, _, err := s.AppendBlock(ctx, ref, AppendRequest{Data: ingest(t, s, []byte("late\n"))}); codeOf(err) != "BlobIsSealed" {
			t.Fatalf("append after the race: %v", err)
		}
	})
}

// TestRaceCreateOnlyPutBlob races writers allowed to create but not to
// overwrite (a SAS with create and no write permission): exactly one
// creates the blob, every other gets 403 AuthorizationPermissionMismatch,
// and the blob holds the winner's content.
func TestRaceCreateOnlyPutBlob(t *testing.T) {
	onEngines(t, func(t *testing.T, s *Service, clk *clock) {
		ctx := context.Background()
		ref := Ref{Account: "acct", Container: "cont", Name: "once", Snapshot: ""}
		const writers = 16
		g := newGate(writers)
		errs := make([]error, writers)
		var wg sync.WaitGroup
		for i := 0; i < writers; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				in := ingest(t, s, []byte(fmt.Sprint("writer ", i)))
				g.wait()
				_, errs[i] = s.PutBlob(ctx, PutBlobRequest{Ref: ref, Type: BlockBlob, Data: in, Cond: Cond{CreateOnly: true}})
			}(i)
		}
		g.open()
		wg.Wait()
		winner := -1
		for i, err := range errs {
			switch codeOf(err) {
			case "":
				if winner >= 0 {
					t.Fatalf("writers %d and %d both created the blob", winner, i)
				}
				winner = i
			case "AuthorizationPermissionMismatch":
			default:
				t.Fatalf("writer %d: %v", i, err)
			}
		}
		if winner < 0 {
			t.Fatal("nobody created the blob")
		}
		b, err := s.GetBlob(ctx, ref, Cond{}, "")
		if err != nil {
			t.Fatal(err)
		}
		rc := s.Open(ctx, b, 0, b.Size)
		got, _ := io.ReadAll(rc)
		rc.Close()
		if string(got) != fmt.Sprint("writer ", winner) {
			t.Fatalf("content %q, winner %d", got, winner)
		}
	})
}

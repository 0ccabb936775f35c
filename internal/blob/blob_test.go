package blob

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/content"
	"github.com/lazuli-storage/lazuli/internal/engine/memstore"
	"github.com/lazuli-storage/lazuli/internal/lease"
	"github.com/lazuli-storage/lazuli/storage"
)

// clock is a manual clock for time-driven rules.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newService(t *testing.T) (*Service, *clock) {
	t.Helper()
	clk := &clock{t: time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)}
	n := 0
	var mu sync.Mutex
	s := New(memstore.New(), clk.now, func() string {
		mu.Lock()
		defer mu.Unlock()
		n++
		return fmt.Sprintf("%08d-0000-0000-0000-000000000000", n)
	})
	if _, err := s.CreateContainer(context.Background(), "acct", "cont", nil, ""); err != nil {
		t.Fatal(err)
	}
	return s, clk
}

func mustCode(t *testing.T, err error, code azerr.Code) {
	t.Helper()
	e, ok := azerr.As(err)
	if !ok || e.Code != code {
		t.Fatalf("got %v, want %s", err, code)
	}
}

func put(t *testing.T, s *Service, name, data string, cond Cond) *Blob {
	t.Helper()
	in, err := s.Ingest(context.Background(), bytes.NewReader([]byte(data)), true, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.PutBlob(context.Background(), PutBlobRequest{Ref: Ref{Account: "acct", Container: "cont", Name: name, Snapshot: ""}, Type: BlockBlob, Data: in, Cond: cond})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestETagDistinctWithinOneTick(t *testing.T) {
	s, _ := newService(t) // the clock never moves
	seen := map[uint64]bool{}
	b := put(t, s, "b", "1", Cond{})
	seen[b.ETag] = true
	for i := 0; i < 5; i++ {
		nb, err := s.SetBlobMetadata(context.Background(), Ref{Account: "acct", Container: "cont", Name: "b", Snapshot: ""}, []KV{{"i", fmt.Sprint(i)}}, Cond{})
		if err != nil {
			t.Fatal(err)
		}
		if seen[nb.ETag] || nb.ETag <= b.ETag {
			t.Fatalf("ETag %x repeated or went back", nb.ETag)
		}
		seen[nb.ETag] = true
		b = nb
	}
	if got := content.ETagString(b.ETag); got[:3] != `"0x` {
		t.Fatalf("ETag %s", got)
	}
}

func TestLeaseExpiryLazy(t *testing.T) {
	s, clk := newService(t)
	ctx := context.Background()
	ref := Ref{Account: "acct", Container: "cont", Name: "b", Snapshot: ""}
	put(t, s, "b", "x", Cond{})
	_, res, err := s.LeaseBlob(ctx, ref, LeaseRequest{Action: lease.Action{Kind: lease.Acquire, Duration: 15}})
	if err != nil {
		t.Fatal(err)
	}
	id := res.LeaseID
	// While leased, a write needs the id.
	_, err = s.SetBlobMetadata(ctx, ref, nil, Cond{})
	mustCode(t, err, azerr.LeaseIdMissing)
	clk.add(16 * time.Second)
	b, err := s.GetBlob(ctx, ref, Cond{}, "")
	if err != nil {
		t.Fatal(err)
	}
	if b.Lease.StateName(clk.now()) != "expired" || b.Lease.Status(clk.now()) != "unlocked" {
		t.Fatalf("state %s", b.Lease.StateName(clk.now()))
	}
	// Renew after expiry without a write in between brings the lease back.
	_, _, err = s.LeaseBlob(ctx, ref, LeaseRequest{Action: lease.Action{Kind: lease.Renew, LeaseID: id}})
	if err != nil {
		t.Fatal(err)
	}
	clk.add(16 * time.Second)
	// The expired id on a write is stale.
	_, err = s.SetBlobMetadata(ctx, ref, nil, Cond{LeaseID: id})
	mustCode(t, err, azerr.LeaseNotPresentWithBlobOperation)
	// A write without the id goes through and forgets the lease.
	if _, err := s.SetBlobMetadata(ctx, ref, nil, Cond{}); err != nil {
		t.Fatal(err)
	}
	_, _, err = s.LeaseBlob(ctx, ref, LeaseRequest{Action: lease.Action{Kind: lease.Renew, LeaseID: id}})
	mustCode(t, err, azerr.LeaseIdMismatchWithLeaseOperation)
	// Breaking ends by itself.
	_, _, err = s.LeaseBlob(ctx, ref, LeaseRequest{Action: lease.Action{Kind: lease.Acquire, Duration: lease.Infinite, ProposedID: id}})
	if err != nil {
		t.Fatal(err)
	}
	p := 10
	_, r, err := s.LeaseBlob(ctx, ref, LeaseRequest{Action: lease.Action{Kind: lease.Break, BreakPeriod: &p}})
	if err != nil || r.LeaseTime != 10 {
		t.Fatalf("break: %v %d", err, r.LeaseTime)
	}
	_, err = s.SetBlobMetadata(ctx, ref, nil, Cond{})
	mustCode(t, err, azerr.LeaseIdMissing)
	clk.add(10 * time.Second)
	if _, err := s.SetBlobMetadata(ctx, ref, nil, Cond{}); err != nil {
		t.Fatalf("write after break period: %v", err)
	}
}

func TestContainerLeaseExpiry(t *testing.T) {
	s, clk := newService(t)
	ctx := context.Background()
	_, res, err := s.LeaseContainer(ctx, "acct", "cont", LeaseRequest{Action: lease.Action{Kind: lease.Acquire, Duration: 20}})
	if err != nil {
		t.Fatal(err)
	}
	mustCode(t, s.DeleteContainer(ctx, "acct", "cont", Cond{}), azerr.LeaseIdMissing)
	clk.add(21 * time.Second)
	// Expired(A) + renew(A) succeeds for containers too.
	if _, _, err := s.LeaseContainer(ctx, "acct", "cont", LeaseRequest{Action: lease.Action{Kind: lease.Renew, LeaseID: res.LeaseID}}); err != nil {
		t.Fatal(err)
	}
	clk.add(21 * time.Second)
	if err := s.DeleteContainer(ctx, "acct", "cont", Cond{}); err != nil {
		t.Fatal(err)
	}
}

func TestChunkMarker(t *testing.T) {
	s, _ := newService(t)
	ctx := context.Background()
	big := bytes.Repeat([]byte("z"), InlineMax+1)
	in, err := s.Ingest(ctx, bytes.NewReader(big), true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Segs) != 1 || in.Segs[0].Ref == "" {
		t.Fatalf("large body not chunked: %+v", in.Segs)
	}
	ref := Ref{Account: "acct", Container: "cont", Name: "big", Snapshot: ""}
	if _, err := s.PutBlob(ctx, PutBlobRequest{Ref: ref, Type: BlockBlob, Data: in}); err != nil {
		t.Fatal(err)
	}
	snap, err := s.SnapshotBlob(ctx, ref, nil, Cond{})
	if err != nil {
		t.Fatal(err)
	}
	staged, err := s.Ingest(ctx, bytes.NewReader([]byte("blk")), false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutBlock(ctx, Ref{Account: "acct", Container: "cont", Name: "other", Snapshot: ""}, "YWJj", staged, Cond{}); err != nil {
		t.Fatal(err)
	}
	// Overwrite the base: its old chunk is still referenced by the snapshot.
	put(t, s, "big", "small", Cond{})
	marked := map[storage.ChunkRef]bool{}
	if err := MarkChunks(ctx, s.eng, func(r storage.ChunkRef) { marked[r] = true }); err != nil {
		t.Fatal(err)
	}
	if !marked[in.Segs[0].Ref] || !marked[staged.Segs[0].Ref] || len(marked) != 2 {
		t.Fatalf("marked %v", marked)
	}
	// Deleting the snapshot and the staged blob unreferences both.
	if err := s.DeleteBlob(ctx, Ref{Account: "acct", Container: "cont", Name: "big", Snapshot: snap.Snapshot}, "", Cond{}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteContainer(ctx, "acct", "cont", Cond{}); err != nil {
		t.Fatal(err)
	}
	marked = map[storage.ChunkRef]bool{}
	if err := MarkChunks(ctx, s.eng, func(r storage.ChunkRef) { marked[r] = true }); err != nil {
		t.Fatal(err)
	}
	if len(marked) != 0 {
		t.Fatalf("still marked %v", marked)
	}
}

func TestListBlobsPaging(t *testing.T) {
	s, clk := newService(t)
	ctx := context.Background()
	for _, n := range []string{"a", "b/1", "b/2", "c"} {
		put(t, s, n, n, Cond{})
	}
	for i := 0; i < 2; i++ {
		clk.add(time.Second)
		if _, err := s.SnapshotBlob(ctx, Ref{Account: "acct", Container: "cont", Name: "a", Snapshot: ""}, nil, Cond{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.PutBlock(ctx, Ref{Account: "acct", Container: "cont", Name: "b/3", Snapshot: ""}, "YWJj", Ingested{}, Cond{}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		req  ListBlobsRequest
		want string
	}{
		{ListBlobsRequest{Snapshots: true}, "a@1,a@2,a,b/1,b/2,c"},
		{ListBlobsRequest{Delimiter: "/", Snapshots: true}, "a@1,a@2,a,P:b/,c"},
		{ListBlobsRequest{Uncommitted: true, Prefix: "b/"}, "b/1,b/2,b/3(u)"},
		{ListBlobsRequest{Delimiter: "/", Prefix: "b/"}, "b/1,b/2"},
	} {
		for max := 1; max <= 7; max++ {
			req := tc.req
			req.Max = max
			var got []string
			snaps := map[string]string{}
			for {
				items, next, err := s.ListBlobs(ctx, "acct", "cont", req)
				if err != nil {
					t.Fatal(err)
				}
				if len(items) > max {
					t.Fatalf("page of %d > %d", len(items), max)
				}
				for _, it := range items {
					switch {
					case it.Prefix != "":
						got = append(got, "P:"+it.Prefix)
					case it.Uncommitted:
						got = append(got, it.Blob.Name+"(u)")
					case it.Blob.Snapshot != "":
						if snaps[it.Blob.Snapshot] == "" {
							snaps[it.Blob.Snapshot] = fmt.Sprint(len(snaps) + 1)
						}
						got = append(got, it.Blob.Name+"@"+snaps[it.Blob.Snapshot])
					default:
						got = append(got, it.Blob.Name)
					}
				}
				if next == "" {
					break
				}
				req.Marker = next
			}
			if s := fmt.Sprint(joinComma(got)); s != tc.want {
				t.Fatalf("%+v max %d: %s, want %s", tc.req, max, s, tc.want)
			}
		}
	}
}

func joinComma(s []string) string {
	out := ""
	for i, v := range s {
		if i > 0 {
			out += ","
		}
		out += v
	}
	return out
}

func TestValidation(t *testing.T) {
	for name, ok := range map[string]bool{"abc": true, "a-b-c": true, "$root": true, "ab": false, "Abc": false, "a--b": false, "-ab": false, "ab-": false, "a_b": false} {
		if (ValidateContainerName(name) == nil) != ok {
			t.Errorf("container %q", name)
		}
	}
	for name, ok := range map[string]bool{"a": true, "dir/x y.txt": true, "": false, string(make([]byte, 1025)): false, "bad\x01": false} {
		if (ValidateBlobName(name) == nil) != ok {
			t.Errorf("blob %q", name)
		}
	}
	mustCode(t, content.ValidateMetadata([]KV{{"", "x"}}), azerr.EmptyMetadataKey)
	mustCode(t, content.ValidateMetadata([]KV{{"1a", "x"}}), azerr.InvalidMetadata)
	mustCode(t, content.ValidateMetadata([]KV{{"a", "x"}, {"A", "y"}}), azerr.InvalidMetadata)
	mustCode(t, content.ValidateMetadata([]KV{{"a", string(bytes.Repeat([]byte("v"), 8192))}}), azerr.MetadataTooLarge)
	if content.ValidateMetadata([]KV{{"_ok1", "v"}}) != nil {
		t.Error("valid metadata rejected")
	}
	mustCode(t, ValidateBlockID("!!"), azerr.InvalidBlockId)
	mustCode(t, ValidateBlockID(base64.StdEncoding.EncodeToString(bytes.Repeat([]byte("A"), 65))), azerr.InvalidBlockId)
	if ValidateBlockID(base64.StdEncoding.EncodeToString(bytes.Repeat([]byte("A"), 64))) != nil {
		t.Error("64-byte id rejected")
	}
}

func TestTagExpressions(t *testing.T) {
	tags := []KV{{"a", "1"}, {"b", "x y"}}
	for expr, want := range map[string]bool{
		`a = '1'`:                            true,
		`"a" = '1' AND b = 'x y'`:            true,
		`a > '0' AND (b = 'no' OR a <= '1')`: true,
		`a <> '1'`:                           false,
		`c = '1'`:                            false,
		`c <> '1'`:                           false,
		`a = '1' OR c <> '1'`:                true,
		`a < '1' OR b >= 'z'`:                false,
	} {
		got, err := MatchTags(expr, tags, "")
		if err != nil || got != want {
			t.Errorf("%s: %v %v", expr, got, err)
		}
	}
	for _, bad := range []string{``, `a`, `a =`, `a = 1`, `(a = '1'`, `a = '1' AND`, `= '1'`, `a == '1'`, `'a' = '1'`,
		`key+1 = '1'`, `key--1 = '1'`, `@container = 'c'`, `a = '1' AND @container = 'c'`} {
		if _, err := MatchTags(bad, tags, ""); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	mustCode(t, ValidateTags([]KV{{"k!", "v"}}), azerr.InvalidTag)
}

func FuzzTagExpr(f *testing.F) {
	f.Add(`a = '1' AND ("b" > 'x' OR c <> '')`)
	f.Add(`k0='v0' and k1>='' and @container='c'`)
	f.Fuzz(func(t *testing.T, expr string) {
		if _, err := MatchTags(expr, []KV{{"a", "1"}}, "c"); err != nil {
			if _, ok := azerr.As(err); !ok {
				t.Fatal(err)
			}
		}
		// Find Blobs by Tags' stricter reading never accepts what the
		// conditional reading refuses, but for @container, which only a
		// query may name.
		if _, err := parseTags(expr, true); err == nil && !strings.Contains(expr, "@container") {
			if _, err := parseTags(expr, false); err != nil {
				t.Fatalf("%q: accepted by Find Blobs only: %v", expr, err)
			}
		}
	})
}

// genReader yields n pseudo-random bytes without holding them.
type genReader struct {
	n, off int64
}

// genPeriod is the period of genReader's bytes: byte i is bits 13 to 20
// of i*2654435761, which only the low 21 bits of i decide.
const genPeriod = 1 << 21

// genPattern holds one period, so that Read copies instead of computing
// every byte: under the race detector each byte written in a loop is an
// instrumented store, and TestLargeBlobMemoryFlat reads 2 GiB.
var genPattern = sync.OnceValue(func() []byte {
	p := make([]byte, genPeriod)
	for i := range p {
		p[i] = byte(int64(i) * 2654435761 >> 13)
	}
	return p
})

func (g *genReader) Read(p []byte) (int, error) {
	if g.off >= g.n {
		return 0, io.EOF
	}
	if int64(len(p)) > g.n-g.off {
		p = p[:g.n-g.off]
	}
	pat := genPattern()
	for done := 0; done < len(p); {
		done += copy(p[done:], pat[(g.off+int64(done))%genPeriod:])
	}
	g.off += int64(len(p))
	return len(p), nil
}

func TestStagedBlocksExpireAfterAWeek(t *testing.T) {
	s, clk := newService(t)
	ctx := context.Background()
	ref := Ref{Account: "acct", Container: "cont", Name: "b", Snapshot: ""}
	if err := s.PutBlock(ctx, ref, "YWJj", Ingested{}, Cond{}); err != nil {
		t.Fatal(err)
	}
	clk.add(StagingLifetime + time.Second)
	bl, err := s.GetBlockList(ctx, ref, "all", Cond{})
	if err == nil {
		t.Fatalf("expired staging still listed: %+v", bl)
	}
	mustCode(t, err, azerr.BlobNotFound)
	_, err = s.PutBlockList(ctx, PutBlockListRequest{Ref: ref, Blocks: []BlockListItem{{ID: "YWJj", Kind: "Latest"}}})
	mustCode(t, err, azerr.InvalidBlockList)
	// A new Put Block starts afresh, even with another id length.
	if err := s.PutBlock(ctx, ref, "YWJjZA==", Ingested{}, Cond{}); err != nil {
		t.Fatal(err)
	}
	bl, err = s.GetBlockList(ctx, ref, "all", Cond{})
	if err != nil || len(bl.Uncommitted) != 1 {
		t.Fatalf("%+v %v", bl, err)
	}
}

func TestRecordRoundTrip(t *testing.T) {
	b := &Blob{Name: "n", Type: BlockBlob, Blocks: []Block{
		{ID: "a", Size: 3, Segs: []Segment{{Len: 3, Data: []byte("abc")}}},
		{ID: "b", Size: 5, Segs: []Segment{{Ref: "r1", Off: 2, Len: 2}, {Len: 3, Data: []byte("xyz")}}},
	}, Pages: []Page{{Start: 512, Seg: Segment{Len: 2, Data: []byte("pq")}}}}
	got, err := decodeBlob(encodeBlob(b))
	if err != nil {
		t.Fatal(err)
	}
	if string(got.Blocks[0].Segs[0].Data) != "abc" || string(got.Blocks[1].Segs[1].Data) != "xyz" || got.Blocks[1].Segs[0].Ref != "r1" ||
		got.Blocks[1].Segs[0].Data != nil || string(got.Pages[0].Seg.Data) != "pq" {
		t.Fatalf("round trip %+v", got)
	}
	// The original is untouched.
	if b.Blocks[0].Segs[0].Data == nil {
		t.Fatal("encode mutated its input")
	}
	bl, err := decodeBlock(encodeBlock(&b.Blocks[1]))
	if err != nil || string(bl.Segs[1].Data) != "xyz" {
		t.Fatalf("block %+v %v", bl, err)
	}
	// Corrupt records are errors, not panics: bad tag, bad length, raw
	// bytes shorter than the inline segments.
	short := encodeBlob(b)
	for _, bad := range [][]byte{nil, {'{'}, {0x01, 200}, {blobBinaryTag, 200}, short[:len(short)-1]} {
		if _, err := decodeBlob(bad); err == nil {
			t.Errorf("decoded %q", bad)
		}
	}
}

func TestAppendBlocksLiveOutsideTheRecord(t *testing.T) {
	s, _ := newService(t)
	ctx := context.Background()
	ref := Ref{Account: "acct", Container: "cont", Name: "log", Snapshot: ""}
	if _, err := s.PutBlob(ctx, PutBlobRequest{Ref: ref, Type: AppendBlob}); err != nil {
		t.Fatal(err)
	}
	recordSize := func() int {
		v, err := storage.GetValue(ctx, s.eng, blobKey("acct", "cont", "log", ""))
		if err != nil {
			t.Fatal(err)
		}
		return len(v)
	}
	var chunks []storage.ChunkRef
	var sizes []int
	for i := 0; i < 20; i++ {
		in, err := s.Ingest(ctx, bytes.NewReader([]byte(fmt.Sprintf("line %02d\n", i))), false, nil)
		if err != nil {
			t.Fatal(err)
		}
		chunks = append(chunks, in.Segs[0].Ref)
		if _, _, err := s.AppendBlock(ctx, ref, AppendRequest{Data: in}); err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, recordSize())
	}
	if sizes[19] > sizes[1]+8 {
		t.Fatalf("record grows with appends: %v", sizes)
	}
	b, err := s.GetBlob(ctx, ref, Cond{}, "")
	if err != nil {
		t.Fatal(err)
	}
	rc := s.Open(ctx, b, 0, b.Size)
	data, _ := io.ReadAll(rc)
	rc.Close()
	if len(data) != 160 || string(data[:8]) != "line 00\n" || string(data[152:]) != "line 19\n" {
		t.Fatalf("content %q", data)
	}
	// A snapshot keeps its own copy of the block list.
	snap, err := s.SnapshotBlob(ctx, ref, nil, Cond{})
	if err != nil {
		t.Fatal(err)
	}
	put(t, s, "log", "replaced by a block blob", Cond{})
	sb, err := s.GetBlob(ctx, Ref{Account: "acct", Container: "cont", Name: "log", Snapshot: snap.Snapshot}, Cond{}, "")
	if err != nil {
		t.Fatal(err)
	}
	if sb.Size != 160 || len(sb.Blocks) != 20 {
		t.Fatalf("snapshot %d bytes, %d blocks", sb.Size, len(sb.Blocks))
	}
	marked := map[storage.ChunkRef]bool{}
	MarkChunks(ctx, s.eng, func(r storage.ChunkRef) { marked[r] = true })
	if len(marked) != 20 || !marked[chunks[0]] {
		t.Fatalf("marked %d chunks", len(marked))
	}
	if err := s.DeleteBlob(ctx, Ref{Account: "acct", Container: "cont", Name: "log", Snapshot: snap.Snapshot}, "", Cond{}); err != nil {
		t.Fatal(err)
	}
	marked = map[storage.ChunkRef]bool{}
	MarkChunks(ctx, s.eng, func(r storage.ChunkRef) { marked[r] = true })
	if len(marked) != 0 {
		t.Fatalf("append blocks outlived their snapshot: %d", len(marked))
	}
}

// TestPageWritesAgainstModel applies random page writes, clears and
// resizes and compares content and page ranges with a byte-array model.
func TestPageWritesAgainstModel(t *testing.T) {
	s, _ := newService(t)
	ctx := context.Background()
	ref := Ref{Account: "acct", Container: "cont", Name: "disk", Snapshot: ""}
	const size = 64 * 512
	if _, err := s.PutBlob(ctx, PutBlobRequest{Ref: ref, Type: PageBlob, PageSize: size}); err != nil {
		t.Fatal(err)
	}
	model := make([]byte, size)
	written := make([]bool, size/512)
	seed := uint32(7)
	rnd := func(n int) int {
		seed = seed*1664525 + 1013904223
		return int(seed>>8) % n
	}
	var first []byte
	for step := 0; step < 300; step++ {
		start := rnd(64)
		n := 1 + rnd(8)
		if start+n > 64 {
			n = 64 - start
		}
		req := PutPageRequest{Start: int64(start * 512), End: int64((start+n)*512 - 1)}
		if rnd(4) == 0 {
			req.Clear = true
			for i := start; i < start+n; i++ {
				written[i] = false
				clear(model[i*512 : (i+1)*512])
			}
		} else {
			data := bytes.Repeat([]byte{byte('a' + step%26)}, n*512)
			in, err := s.Ingest(ctx, bytes.NewReader(data), false, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Data = in
			copy(model[start*512:], data)
			for i := start; i < start+n; i++ {
				written[i] = true
			}
		}
		if _, err := s.PutPage(ctx, ref, req); err != nil {
			t.Fatal(err)
		}
		if step == 0 {
			v, _ := storage.GetValue(ctx, s.eng, blobKey("acct", "cont", "disk", ""))
			first = v
		}
	}
	if v, _ := storage.GetValue(ctx, s.eng, blobKey("acct", "cont", "disk", "")); len(v) > len(first)+8 {
		t.Fatalf("record grew from %d to %d bytes", len(first), len(v))
	}
	check := func(size int) {
		t.Helper()
		b, err := s.GetBlob(ctx, ref, Cond{}, "")
		if err != nil {
			t.Fatal(err)
		}
		rc := s.Open(ctx, b, 0, b.Size)
		got, _ := io.ReadAll(rc)
		rc.Close()
		if !bytes.Equal(got, model[:size]) {
			t.Fatal("content differs from the model")
		}
		pr, err := s.GetPageRanges(ctx, ref, 0, -1, "", Cond{})
		if err != nil {
			t.Fatal(err)
		}
		var want []PageRange
		for i := 0; i < size/512; i++ {
			if !written[i] {
				continue
			}
			if n := len(want); n > 0 && want[n-1].End+1 == int64(i*512) {
				want[n-1].End += 512
				continue
			}
			want = append(want, PageRange{Start: int64(i * 512), End: int64(i*512 + 511)})
		}
		if fmt.Sprint(pr.Pages) != fmt.Sprint(want) && !(len(pr.Pages) == 0 && len(want) == 0) {
			t.Fatalf("ranges %v, want %v", pr.Pages, want)
		}
	}
	check(size)
	// Shrink to an odd page boundary, then grow back: the cut part is zero.
	shrink := int64(21 * 512)
	if _, err := s.SetBlobProperties(ctx, ref, SetPropsRequest{NewSize: &shrink}); err != nil {
		t.Fatal(err)
	}
	check(int(shrink))
	grow := int64(size)
	if _, err := s.SetBlobProperties(ctx, ref, SetPropsRequest{NewSize: &grow}); err != nil {
		t.Fatal(err)
	}
	clear(model[shrink:])
	for i := int(shrink / 512); i < 64; i++ {
		written[i] = false
	}
	check(size)
}

func TestLongBlockListsLiveOutsideTheRecord(t *testing.T) {
	s, _ := newService(t)
	ctx := context.Background()
	ref := Ref{Account: "acct", Container: "cont", Name: "many", Snapshot: ""}
	var items []BlockListItem
	var want []byte
	for i := 0; i < 40; i++ {
		id := base64.StdEncoding.EncodeToString([]byte(fmt.Sprintf("%04d", i)))
		part := []byte(fmt.Sprintf("<%02d>", i))
		in, err := s.Ingest(ctx, bytes.NewReader(part), false, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.PutBlock(ctx, ref, id, in, Cond{}); err != nil {
			t.Fatal(err)
		}
		items = append(items, BlockListItem{ID: id, Kind: "Latest"})
		want = append(want, part...)
	}
	if _, err := s.PutBlockList(ctx, PutBlockListRequest{Ref: ref, Blocks: items}); err != nil {
		t.Fatal(err)
	}
	v, _ := storage.GetValue(ctx, s.eng, blobKey("acct", "cont", "many", ""))
	if len(v) > 1000 {
		t.Fatalf("record of %d bytes holds the block list", len(v))
	}
	read := func(r Ref) []byte {
		b, err := s.GetBlob(ctx, r, Cond{}, "")
		if err != nil {
			t.Fatal(err)
		}
		rc := s.Open(ctx, b, 0, b.Size)
		defer rc.Close()
		data, _ := io.ReadAll(rc)
		return data
	}
	if got := read(ref); !bytes.Equal(got, want) {
		t.Fatalf("content %q", got)
	}
	// Metadata writes keep the external list; a snapshot gets its own.
	if _, err := s.SetBlobMetadata(ctx, ref, []KV{{"a", "b"}}, Cond{}); err != nil {
		t.Fatal(err)
	}
	snap, err := s.SnapshotBlob(ctx, ref, nil, Cond{})
	if err != nil {
		t.Fatal(err)
	}
	// Recommit a short list: the record takes it back.
	if _, err := s.PutBlockList(ctx, PutBlockListRequest{Ref: ref, Blocks: []BlockListItem{{ID: items[0].ID, Kind: "Committed"}, {ID: items[1].ID, Kind: "Committed"}}}); err != nil {
		t.Fatal(err)
	}
	if got := read(ref); string(got) != "<00><01>" {
		t.Fatalf("short list %q", got)
	}
	if got := read(Ref{Account: "acct", Container: "cont", Name: "many", Snapshot: snap.Snapshot}); !bytes.Equal(got, want) {
		t.Fatalf("snapshot %q", got)
	}
	bl, err := s.GetBlockList(ctx, Ref{Account: "acct", Container: "cont", Name: "many", Snapshot: snap.Snapshot}, "committed", Cond{})
	if err != nil || len(bl.Committed) != 40 {
		t.Fatalf("snapshot block list %d %v", len(bl.Committed), err)
	}
	marked := map[storage.ChunkRef]bool{}
	MarkChunks(ctx, s.eng, func(r storage.ChunkRef) { marked[r] = true })
	if len(marked) != 40 {
		t.Fatalf("marked %d", len(marked))
	}
	if err := s.DeleteBlob(ctx, ref, "include", Cond{}); err != nil {
		t.Fatal(err)
	}
	marked = map[storage.ChunkRef]bool{}
	MarkChunks(ctx, s.eng, func(r storage.ChunkRef) { marked[r] = true })
	if len(marked) != 0 {
		t.Fatalf("block lists outlived their blobs: %d", len(marked))
	}
}

func TestFindBlobsIndexMatchesScan(t *testing.T) {
	s, _ := newService(t)
	ctx := context.Background()
	if _, err := s.CreateContainer(ctx, "acct", "cont2", nil, ""); err != nil {
		t.Fatal(err)
	}
	tagged := func(c, name string, tags []KV) {
		in, _ := s.Ingest(ctx, bytes.NewReader([]byte("x")), true, nil)
		if _, err := s.PutBlob(ctx, PutBlobRequest{Ref: Ref{Account: "acct", Container: c, Name: name}, Type: BlockBlob, Data: in, Tags: tags}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 30; i++ {
		c := "cont"
		if i%3 == 0 {
			c = "cont2"
		}
		tagged(c, fmt.Sprintf("b%02d", i), []KV{{"team", fmt.Sprint("t", i%4)}, {"n", fmt.Sprint(i)}})
	}
	// Changes that must leave no stale entries: retag, overwrite, delete,
	// snapshot (snapshots are not found), container delete.
	if err := s.SetTags(ctx, Ref{Account: "acct", Container: "cont", Name: "b01", Snapshot: ""}, []KV{{"team", "t0"}}, Cond{}); err != nil {
		t.Fatal(err)
	}
	tagged("cont", "b02", nil)
	if err := s.DeleteBlob(ctx, Ref{Account: "acct", Container: "cont", Name: "b04", Snapshot: ""}, "", Cond{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SnapshotBlob(ctx, Ref{Account: "acct", Container: "cont", Name: "b05", Snapshot: ""}, nil, Cond{}); err != nil {
		t.Fatal(err)
	}
	find := func(expr, container string, max int) []string {
		var out []string
		marker := ""
		for {
			res, next, err := s.FindBlobs(ctx, "acct", container, expr, marker, max)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range res {
				out = append(out, f.Container+"/"+f.Name)
			}
			if next == "" {
				return out
			}
			marker = next
		}
	}
	for _, team := range []string{"t0", "t1", "t2", "t3"} {
		for _, c := range []string{"", "cont"} {
			for _, max := range []int{1, 3, 100} {
				indexed := find(fmt.Sprintf("team = '%s'", team), c, max)
				scanned := find(fmt.Sprintf("team >= '%s' AND team <= '%s'", team, team), c, max)
				if fmt.Sprint(indexed) != fmt.Sprint(scanned) || len(indexed) == 0 {
					t.Fatalf("team %s container %q max %d: index %v, scan %v", team, c, max, indexed, scanned)
				}
			}
		}
	}
	if got := find("team = 't0' AND n = '0'", "", 10); fmt.Sprint(got) != "[cont2/b00]" {
		t.Fatalf("and %v", got)
	}
	if got := find("n = '8' AND team = 't0'", "", 10); fmt.Sprint(got) != "[cont/b08]" {
		t.Fatalf("and %v", got)
	}
	if err := s.DeleteContainer(ctx, "acct", "cont2", Cond{}); err != nil {
		t.Fatal(err)
	}
	for _, team := range []string{"t0", "t1"} {
		if got := find(fmt.Sprintf("team = '%s'", team), "", 100); len(got) == 0 || strings.Contains(fmt.Sprint(got), "cont2") {
			t.Fatalf("after container delete: %v", got)
		}
	}
	// No index entries are left for deleted or retagged blobs.
	n := 0
	s.eng.View(ctx, func(tx storage.Tx) error {
		it := tx.Scan([]byte{kindTagIndex}, []byte{kindTagIndex + 1}, false)
		defer it.Close()
		for it.Next() {
			n++
		}
		return nil
	})
	// Remaining base blobs in cont: 20 minus b04 deleted; b01 has 1 tag, b02 none.
	if want := (20-1-2)*2 + 1; n != want {
		t.Fatalf("%d index entries, want %d", n, want)
	}
}

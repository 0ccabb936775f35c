package file

import (
	"bytes"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/lazuli-storage/lazuli/internal/content"
)

// TestRangesAgainstModel writes, clears and resizes files with random
// ranges and checks every read and range list against a byte model. The
// files start with their extents in the node record and move them to
// extent keys once they grow past the inline limits (many small writes,
// one large write, or a chunk-backed one), so both places and the move
// between them are covered; a snapshot taken midway must read as it was.
func TestRangesAgainstModel(t *testing.T) {
	svc, ctx := newSvc(t)
	setup(t, svc, ctx)
	r := rand.New(rand.NewPCG(3, 4))
	for round := range 12 {
		ref := Ref{Account: "a", Share: "s", Path: "d/m" + string(rune('a'+round))}
		size := int64(1 + r.IntN(40<<10))
		_, err := svc.Create(ctx, CreateRequest{Ref: ref, Size: size})
		mustNil(t, err)
		model := make([]byte, size)
		written := make([]bool, size)
		check := func(what string, ref Ref, model []byte, written []bool) {
			t.Helper()
			res, err := svc.Read(ctx, ref, 0, -1, false, "")
			mustNil(t, err)
			got, err := io.ReadAll(svc.Stream(ctx, res.Segs))
			mustNil(t, err)
			if !bytes.Equal(got, model) {
				t.Fatalf("round %d, %s: content differs from the model", round, what)
			}
			rl, err := svc.ListRanges(ctx, ref, 0, -1, "", false, "")
			mustNil(t, err)
			var want []Range
			for i := int64(0); i < int64(len(written)); i++ {
				if !written[i] {
					continue
				}
				if n := len(want); n > 0 && want[n-1].End == i-1 {
					want[n-1].End = i
				} else {
					want = append(want, Range{Start: i, End: i})
				}
			}
			if len(rl.Ranges) != len(want) {
				t.Fatalf("round %d, %s: ranges %v, want %v", round, what, rl.Ranges, want)
			}
			for i := range want {
				if rl.Ranges[i] != want[i] {
					t.Fatalf("round %d, %s: ranges %v, want %v", round, what, rl.Ranges, want)
				}
			}
		}
		var snap string
		var snapModel []byte
		var snapWritten []bool
		for step := range 40 {
			if size == 0 {
				break
			}
			start := r.Int64N(size)
			n := 1 + r.Int64N(min(size-start, []int64{600, 3000, 20 << 10}[r.IntN(3)]))
			end := start + n - 1
			switch k := r.IntN(10); {
			case k < 6:
				body := make([]byte, n)
				for i := range body {
					body[i] = byte(r.IntN(255) + 1)
				}
				data, err := svc.Ingest(ctx, bytes.NewReader(body), n, nil)
				mustNil(t, err)
				if k == 0 && n > 1 {
					// A chunk-backed range: bodies over the inline size go
					// to the chunk store.
					big := make([]byte, content.InlineMax+1)
					copy(big, body)
					data, err = svc.Ingest(ctx, bytes.NewReader(big), int64(len(big)), nil)
					mustNil(t, err)
					data.Segs = []content.Segment{content.CutSegment(data.Segs[0], 0, n)}
					data.Size = n
				}
				_, err = svc.PutRange(ctx, PutRangeRequest{Ref: ref, Start: start, End: end, Data: data})
				mustNil(t, err)
				copy(model[start:], body)
				for i := start; i <= end; i++ {
					written[i] = true
				}
			case k < 8:
				_, err := svc.PutRange(ctx, PutRangeRequest{Ref: ref, Start: start, End: end, Clear: true})
				mustNil(t, err)
				lo := (start + PageSize - 1) / PageSize * PageSize
				hi := (end + 1) / PageSize * PageSize
				for i := start; i <= end; i++ {
					model[i] = 0
					if lo < hi && i >= lo && i < hi {
						written[i] = false
					} else {
						written[i] = true
					}
				}
			default:
				ns := int64(r.IntN(40 << 10))
				_, err := svc.Set(ctx, SetRequest{Ref: ref, Size: &ns})
				mustNil(t, err)
				if ns < size {
					model, written = model[:ns], written[:ns]
				} else {
					model = append(model, make([]byte, ns-size)...)
					written = append(written, make([]bool, ns-size)...)
				}
				size = ns
			}
			check("step", ref, model, written)
			if step == 20 && round%3 == 0 {
				sh, err := svc.SnapshotShare(ctx, ShareRef{Account: "a", Name: "s"}, nil)
				mustNil(t, err)
				snap = sh.Snapshot
				snapModel, snapWritten = bytes.Clone(model), append([]bool(nil), written...)
			}
		}
		if snap != "" {
			sref := ref
			sref.Snapshot = snap
			check("snapshot", sref, snapModel, snapWritten)
		}
	}
	// Some file moved its extents to keys; a new small file keeps its one
	// extent in its record.
	keys := countKeys(t, svc, tagExtent)
	if keys == 0 {
		t.Fatal("no file moved its extents to keys")
	}
	setupSmall := Ref{Account: "a", Share: "s", Path: "d/small"}
	_, err := svc.Create(ctx, CreateRequest{Ref: setupSmall, Size: 1024})
	mustNil(t, err)
	data, err := svc.Ingest(ctx, bytes.NewReader(make([]byte, 1024)), 1024, nil)
	mustNil(t, err)
	_, err = svc.PutRange(ctx, PutRangeRequest{Ref: setupSmall, Start: 0, End: 1023, Data: data})
	mustNil(t, err)
	if n := countKeys(t, svc, tagExtent); n != keys {
		t.Fatalf("a 1 KiB Put Range wrote %d extent keys, want none", n-keys)
	}
}

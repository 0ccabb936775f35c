package content

import (
	"fmt"
	"sort"
	"testing"

	"github.com/lazuli-storage/lazuli/storage"
)

func TestDiffPages(t *testing.T) {
	seg := func(ref string, off, n int64) Segment { return Segment{Ref: storage.ChunkRef(ref), Off: off, Len: n} }
	prev := []Page{{Start: 0, Seg: seg("a", 0, 1024)}, {Start: 2048, Seg: seg("b", 0, 512)}}
	// cur: first half of a kept, second half rewritten by c, b cleared, d added.
	cur := []Page{{Start: 0, Seg: seg("a", 0, 512)}, {Start: 512, Seg: seg("c", 0, 512)}, {Start: 4096, Seg: seg("d", 0, 512)}}
	changed, cleared := DiffPages(cur, prev)
	if fmt.Sprint(changed) != "[{512 1023} {4096 4607}]" || fmt.Sprint(cleared) != "[{2048 2559}]" {
		t.Fatalf("changed %v cleared %v", changed, cleared)
	}
	// Splitting pages keeps their identity.
	pages := writePages(prev, 256, seg("e", 0, 256))
	if fmt.Sprint(MergePages(pages)) != "[{0 1023} {2048 2559}]" {
		t.Fatalf("merge %v", MergePages(pages))
	}
	ch, cl := DiffPages(pages, prev)
	if fmt.Sprint(ch) != "[{256 511}]" || len(cl) != 0 {
		t.Fatalf("diff after split %v %v", ch, cl)
	}
}

// writePages puts seg at start, replacing what was there.
func writePages(pages []Page, start int64, seg Segment) []Page {
	out := ClearPages(pages, start, start+seg.Len)
	out = append(out, Page{Start: start, Seg: seg})
	sort.Slice(out, func(i, j int) bool { return out[i].Start < out[j].Start })
	return out
}

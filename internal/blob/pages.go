package blob

import (
	"context"
	"sort"
	"time"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/storage"
)

// ClearPages removes [start, end) from a sorted page list, splitting pages
// that straddle the edges.
func ClearPages(pages []Page, start, end int64) []Page {
	var out []Page
	for _, p := range pages {
		pEnd := p.Start + p.Seg.Len
		if pEnd <= start || p.Start >= end {
			out = append(out, p)
			continue
		}
		if p.Start < start {
			out = append(out, Page{Start: p.Start, Seg: cutSeg(p.Seg, 0, start-p.Start)})
		}
		if pEnd > end {
			out = append(out, Page{Start: end, Seg: cutSeg(p.Seg, end-p.Start, pEnd-end)})
		}
	}
	return out
}

func cutSeg(sg Segment, off, n int64) Segment {
	c := Segment{Ref: sg.Ref, Off: sg.Off + off, Len: n}
	if sg.Data != nil {
		c.Data = sg.Data[off : off+n]
	}
	return c
}

// writePages puts seg at start, replacing what was there.
func writePages(pages []Page, start int64, seg Segment) []Page {
	out := ClearPages(pages, start, start+seg.Len)
	out = append(out, Page{Start: start, Seg: seg})
	sort.Slice(out, func(i, j int) bool { return out[i].Start < out[j].Start })
	return out
}

// clearStoredPages removes [start, end) from the pages stored under pp,
// splitting the pages that straddle either edge. Only the pages touched are
// read and written: one descending scan from end finds them all, since
// pages never overlap and so the first one starting at or before start is
// the last that can reach into the range.
func clearStoredPages(tx storage.Tx, pp []byte, start, end int64) error {
	var dels [][]byte
	var sets []Page
	it := tx.Scan(pp, pageKey(pp, end), true)
	for it.Next() {
		pg, err := decodePage(it.Value())
		if err != nil {
			it.Close()
			return err
		}
		pEnd := pg.Start + pg.Seg.Len
		if pEnd > start {
			dels = append(dels, append([]byte(nil), it.Key()...))
			if pg.Start < start {
				sets = append(sets, Page{Start: pg.Start, Seg: cutSeg(pg.Seg, 0, start-pg.Start)})
			}
			if pEnd > end {
				sets = append(sets, Page{Start: end, Seg: cutSeg(pg.Seg, end-pg.Start, pEnd-end)})
			}
		}
		if pg.Start <= start {
			break
		}
	}
	err := it.Err()
	it.Close()
	if err != nil {
		return err
	}
	for _, k := range dels {
		if err := tx.Delete(k); err != nil {
			return err
		}
	}
	for _, pg := range sets {
		if err := tx.Set(pageKey(pp, pg.Start), encodePage(pg)); err != nil {
			return err
		}
	}
	return nil
}

// pageBytes is the size of a page of a page blob.
const pageBytes = 512

// SeqCond holds the x-ms-if-sequence-number-* conditions of Put Page.
type SeqCond struct {
	LE, LT, EQ *int64
}

func (c SeqCond) ok(seq int64) bool {
	return (c.LE == nil || seq <= *c.LE) && (c.LT == nil || seq < *c.LT) && (c.EQ == nil || seq == *c.EQ)
}

// PutPageRequest is Put Page (update or clear).
type PutPageRequest struct {
	Start, End int64 // inclusive end, already validated for 512 alignment
	Clear      bool
	Data       Ingested // update only; Data.Size == End-Start+1
	Seq        SeqCond
	Cond       Cond
	// Source, when set, is Put Page From URL: the page bytes are bytes
	// [SourceOff, SourceOff+End-Start] of a blob on this server.
	Source    *Ref
	SourceOff int64
	SrcCond   Cond
}

// PutPage is Put Page.
func (s *Service) PutPage(ctx context.Context, ref Ref, req PutPageRequest) (*Blob, error) {
	return s.modify(ctx, ref, req.Cond, checkOpts{}, func(tx storage.Tx, b *Blob, now time.Time) (bool, error) {
		if b.Type != PageBlob {
			return false, azerr.New(azerr.InvalidBlobType)
		}
		if req.End >= b.Size {
			return false, azerr.New(azerr.InvalidPageRange)
		}
		if !req.Seq.ok(b.Seq) {
			return false, azerr.New(azerr.SequenceNumberConditionNotMet)
		}
		pp := pagesPrefix(ref.Account, ref.Container, ref.Name, "")
		if err := clearStoredPages(tx, pp, req.Start, req.End+1); err != nil {
			return false, err
		}
		if req.Clear {
			return true, nil
		}
		if req.Source != nil {
			segs, n, err := s.sourceRange(tx, *req.Source, req.SourceOff, req.End-req.Start+1, req.SrcCond, now)
			if err != nil {
				return false, err
			}
			req.Data = Ingested{Segs: segs, Size: n}
		}
		pos := req.Start
		for _, sg := range req.Data.Segs {
			if err := tx.Set(pageKey(pp, pos), encodePage(Page{Start: pos, Seg: sg})); err != nil {
				return false, err
			}
			pos += sg.Len
		}
		return true, nil
	})
}

// PageRange is an inclusive byte range.
type PageRange struct{ Start, End int64 }

// PageRanges is the result of Get Page Ranges.
type PageRanges struct {
	Blob  *Blob
	Pages []PageRange
	Clear []PageRange
}

// GetPageRanges is Get Page Ranges, optionally limited to [from, to] and
// optionally as a diff against the snapshot prev.
func (s *Service) GetPageRanges(ctx context.Context, ref Ref, from, to int64, prev string, cond Cond) (*PageRanges, error) {
	out := &PageRanges{}
	err := s.eng.View(ctx, func(tx storage.Tx) error {
		b, _, err := s.loadChecked(tx, ref, cond, checkOpts{mustExist: true, read: true}, s.now())
		if err != nil {
			return err
		}
		if b.Type != PageBlob {
			return azerr.New(azerr.InvalidBlobType)
		}
		if err := hydrate(tx, ref.Account, ref.Container, b); err != nil {
			return err
		}
		out.Blob = b
		if from >= b.Size && (from > 0 || to >= 0) {
			// A range that starts past the end of the blob.
			return azerr.New(azerr.InvalidRange)
		}
		if to < 0 || to >= b.Size {
			to = b.Size - 1
		}
		// Azure keeps pages, not bytes: a range that cuts a page reports
		// the whole page (bytes=0-255 over a written first page is 0-511).
		from, to = from/pageBytes*pageBytes, (to/pageBytes+1)*pageBytes-1
		if prev == "" {
			out.Pages = clip(merge(b.Pages), from, to)
			return nil
		}
		if ref.Snapshot != "" && prev > ref.Snapshot {
			return azerr.New(azerr.PreviousSnapshotCannotBeNewer)
		}
		pb, err := getBlob(tx, ref.Account, ref.Container, ref.Name, prev)
		if err != nil {
			return err
		}
		if pb == nil {
			return azerr.New(azerr.PreviousSnapshotNotFound)
		}
		if err := hydrate(tx, ref.Account, ref.Container, pb); err != nil {
			return err
		}
		changed, cleared := diffPages(b.Pages, pb.Pages)
		out.Pages, out.Clear = clip(changed, from, to), clip(cleared, from, to)
		return nil
	})
	return out, err
}

func merge(pages []Page) []PageRange {
	var out []PageRange
	for _, p := range pages {
		end := p.Start + p.Seg.Len - 1
		if n := len(out); n > 0 && out[n-1].End+1 == p.Start {
			out[n-1].End = end
			continue
		}
		out = append(out, PageRange{p.Start, end})
	}
	return out
}

func clip(rs []PageRange, from, to int64) []PageRange {
	out := []PageRange{}
	for _, r := range rs {
		if r.End < from || r.Start > to {
			continue
		}
		out = append(out, PageRange{max(r.Start, from), min(r.End, to)})
	}
	return out
}

// cover finds the page of a sorted list covering offset x.
func cover(pages []Page, x int64) (Page, bool) {
	i := sort.Search(len(pages), func(i int) bool { return pages[i].Start+pages[i].Seg.Len > x })
	if i < len(pages) && pages[i].Start <= x {
		return pages[i], true
	}
	return Page{}, false
}

// diffPages compares cur with prev: ranges whose bytes come from another
// write (or are written only in cur) changed; ranges written only in prev
// were cleared.
func diffPages(cur, prev []Page) (changed, cleared []PageRange) {
	var pts []int64
	for _, l := range [][]Page{cur, prev} {
		for _, p := range l {
			pts = append(pts, p.Start, p.Start+p.Seg.Len)
		}
	}
	sort.Slice(pts, func(i, j int) bool { return pts[i] < pts[j] })
	add := func(rs []PageRange, a, b int64) []PageRange {
		if n := len(rs); n > 0 && rs[n-1].End+1 == a {
			rs[n-1].End = b - 1
			return rs
		}
		return append(rs, PageRange{a, b - 1})
	}
	for i := 0; i+1 < len(pts); i++ {
		a, b := pts[i], pts[i+1]
		if a == b {
			continue
		}
		cp, inCur := cover(cur, a)
		pp, inPrev := cover(prev, a)
		switch {
		case inCur && !inPrev:
			changed = add(changed, a, b)
		case inCur && inPrev:
			if !samePageBytes(cp, pp, a, b) {
				changed = add(changed, a, b)
			}
		case !inCur && inPrev:
			cleared = add(cleared, a, b)
		}
	}
	return changed, cleared
}

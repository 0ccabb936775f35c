package content

import (
	"bytes"
	"encoding/binary"
	"errors"
	"sort"
	"strconv"

	"github.com/lazuli-storage/lazuli/internal/keyenc"
	"github.com/lazuli-storage/lazuli/storage"
)

// The page store keeps the written ranges of sparse content (page blobs,
// files) as one record per page, keyed by the page's offset under a prefix
// that names the content.

// PageKey is the key of the page starting at start under prefix.
func PageKey(prefix []byte, start int64) []byte {
	return keyenc.AppendUint64(append(make([]byte, 0, len(prefix)+8), prefix...), uint64(start))
}

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
			out = append(out, Page{Start: p.Start, Seg: CutSegment(p.Seg, 0, start-p.Start)})
		}
		if pEnd > end {
			out = append(out, Page{Start: end, Seg: CutSegment(p.Seg, end-p.Start, pEnd-end)})
		}
	}
	return out
}

// CutSegment returns n bytes of sg from off.
func CutSegment(sg Segment, off, n int64) Segment {
	c := Segment{Ref: sg.Ref, Off: sg.Off + off, Len: n}
	if sg.Data != nil {
		c.Data = sg.Data[off : off+n]
	}
	return c
}

// ClearStoredPages removes [start, end) from the pages stored under pp,
// splitting the pages that straddle either edge. Only the pages touched are
// read and written: one descending scan from end finds them all, since
// pages never overlap and so the first one starting at or before start is
// the last that can reach into the range.
func ClearStoredPages(tx storage.Tx, pp []byte, start, end int64) error {
	var dels [][]byte
	var sets []Page
	it := tx.Scan(pp, PageKey(pp, end), true)
	for it.Next() {
		pg, err := DecodePage(it.Value())
		if err != nil {
			it.Close()
			return err
		}
		pEnd := pg.Start + pg.Seg.Len
		if pEnd > start {
			dels = append(dels, append([]byte(nil), it.Key()...))
			if pg.Start < start {
				sets = append(sets, Page{Start: pg.Start, Seg: CutSegment(pg.Seg, 0, start-pg.Start)})
			}
			if pEnd > end {
				sets = append(sets, Page{Start: end, Seg: CutSegment(pg.Seg, end-pg.Start, pEnd-end)})
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
		if err := tx.Set(PageKey(pp, pg.Start), EncodePage(pg)); err != nil {
			return err
		}
	}
	return nil
}

// MergePages returns the written ranges of sorted pages, adjacent ones
// joined.
func MergePages(pages []Page) []PageRange {
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

// ClipRanges limits ranges to [from, to].
func ClipRanges(rs []PageRange, from, to int64) []PageRange {
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

// DiffPages compares cur with prev: ranges whose bytes come from another
// write (or are written only in cur) changed; ranges written only in prev
// were cleared.
func DiffPages(cur, prev []Page) (changed, cleared []PageRange) {
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

// samePageBytes reports whether pages c and p hold [a, b) from the same
// write: the same chunk bytes, or equal inline bytes (a snapshot copies a
// small page's bytes, so equal inline bytes are the same write).
func samePageBytes(c, p Page, a, b int64) bool {
	if c.Seg.Ref != "" || p.Seg.Ref != "" {
		return c.Seg.Ref == p.Seg.Ref && c.Seg.Off+(a-c.Start) == p.Seg.Off+(a-p.Start)
	}
	if c.Seg.Data == nil || p.Seg.Data == nil {
		return false
	}
	return string(c.Seg.Data[a-c.Start:b-c.Start]) == string(p.Seg.Data[a-p.Start:b-p.Start])
}

// A page record has the layout of a binary blob record (tag 0x02) that
// holds nothing but one block: the page's start in decimal as the block
// id, its length, and its one segment. Page blobs stored their pages so
// before the page store was shared; every other field is empty, so the
// record is the fixed pageHead, the block and the fixed pageTail.
const pageRecordTag = 0x02

// pageHead is the tag, the 19 empty fields before the block list (name,
// snapshot, type, two times, ETag, size, six content properties,
// metadata, five lease fields) and a block count of 1.
var pageHead = append(append([]byte{pageRecordTag}, make([]byte, 19)...), 1)

// pageTail is the 9 empty fields after the block list (pages, sequence
// number, tags, copy, tier, block id length, append count, tier change
// time, flags).
var pageTail = make([]byte, 9)

// EncodePage returns the record of p.
func EncodePage(p Page) []byte {
	dst := make([]byte, 0, 64+len(p.Seg.Data)+len(p.Seg.Ref))
	dst = append(dst, pageHead...)
	dst = AppendStr(dst, strconv.FormatInt(p.Start, 10))
	dst = binary.AppendVarint(dst, p.Seg.Len)
	dst = binary.AppendUvarint(dst, 1)
	dst = AppendSeg(dst, &p.Seg)
	return append(dst, pageTail...)
}

var errCorruptPage = errors.New("content: corrupt page record")

// DecodePage reverses EncodePage. Inline bytes alias v.
func DecodePage(v []byte) (Page, error) {
	if !bytes.HasPrefix(v, pageHead) || !bytes.HasSuffix(v, pageTail) || len(v) < len(pageHead)+len(pageTail) {
		return Page{}, errCorruptPage
	}
	r := NewReader(v[len(pageHead) : len(v)-len(pageTail)])
	start, err := strconv.ParseInt(r.Str(), 10, 64)
	r.Varint() // the block size, equal to the segment's length
	if r.Uvarint() != 1 {
		r.Fail()
	}
	seg := r.Seg()
	if r.End() != nil || err != nil {
		return Page{}, errCorruptPage
	}
	return Page{Start: start, Seg: seg}, nil
}

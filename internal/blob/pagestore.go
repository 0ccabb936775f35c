package blob

import "github.com/lazuli-storage/lazuli/storage"

// The page store (written ranges keyed by offset under a prefix) is shared
// with the File service, whose files are sparse the same way page blobs
// are; these are its exported entry points.

// PageKey is the key of the page starting at start under prefix.
func PageKey(prefix []byte, start int64) []byte { return pageKey(prefix, start) }

// EncodePage and DecodePage store one page record.
func EncodePage(p Page) []byte { return encodePage(p) }

// DecodePage reverses EncodePage.
func DecodePage(v []byte) (Page, error) { return decodePage(v) }

// ClearStoredPages removes [start, end) from the pages stored under
// prefix, splitting the pages that straddle either edge.
func ClearStoredPages(tx storage.Tx, prefix []byte, start, end int64) error {
	return clearStoredPages(tx, prefix, start, end)
}

// MergePages returns the written ranges of sorted pages, adjacent ones
// joined.
func MergePages(pages []Page) []PageRange { return merge(pages) }

// ClipRanges limits ranges to [from, to].
func ClipRanges(rs []PageRange, from, to int64) []PageRange { return clip(rs, from, to) }

// DiffPages compares cur with prev: ranges whose bytes come from another
// write (or are written only in cur) changed; ranges written only in prev
// were cleared.
func DiffPages(cur, prev []Page) (changed, cleared []PageRange) { return diffPages(cur, prev) }

// CutSegment returns n bytes of sg from off.
func CutSegment(sg Segment, off, n int64) Segment { return cutSeg(sg, off, n) }

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

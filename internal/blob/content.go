package blob

import "github.com/lazuli-storage/lazuli/internal/content"

// Blob's model is written in terms of the content shared with File; the
// names below are content's, so that a blob's fields read as blob.KV,
// blob.Props and so on.
type (
	KV        = content.KV
	Props     = content.Props
	Segment   = content.Segment
	Page      = content.Page
	PageRange = content.PageRange
	Ingested  = content.Ingested
	Checksums = content.Checksums
)

// The checksums an ingest computes (content.IngestSize).
const (
	SumMD5   = content.SumMD5
	SumCRC64 = content.SumCRC64
)

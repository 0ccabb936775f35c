package content

import (
	"strings"
	"unicode"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/storage"
)

// Limits shared by the services.
const (
	// InlineMax is the largest body kept in its record instead of chunks.
	InlineMax = 64 << 10
	// ChunkPiece is the size of the pieces bodies are written to the chunk
	// store in.
	ChunkPiece = 4 << 20
	// BytesPiece is the size of the pieces of a body held in memory
	// (IngestBytes): an 8 MiB SMB WRITE is one chunk, one file to fsync
	// and one journal commit on the disk, not two.
	BytesPiece = 8 << 20
	// MaxMetadataBytes bounds the names and values of one metadata set.
	MaxMetadataBytes = 8 << 10
)

// KV is one metadata or tag pair; order is kept as given.
type KV [2]string

// Segment is a piece of content: a range of a chunk, inline bytes, or
// (with neither) zeros.
type Segment struct {
	Ref storage.ChunkRef `json:"r,omitempty"`
	Off int64            `json:"o,omitempty"`
	Len int64            `json:"n"`
	// Data holds inline bytes, which keeps small content in its record.
	Data []byte `json:"-"`
}

// Page is a written range of sparse content (a page blob, a file);
// Seg.Len is its length.
type Page struct {
	Start int64   `json:"a"`
	Seg   Segment `json:"g"`
}

// PageRange is an inclusive byte range.
type PageRange struct{ Start, End int64 }

// Props are the HTTP content properties of a blob or file.
type Props struct {
	ContentType        string `json:"ct,omitempty"`
	ContentEncoding    string `json:"ce,omitempty"`
	ContentLanguage    string `json:"cl,omitempty"`
	ContentMD5         []byte `json:"md5,omitempty"`
	ContentDisposition string `json:"cd,omitempty"`
	CacheControl       string `json:"cc,omitempty"`
}

// ValidateMetadata checks metadata names (C# identifiers, no duplicates
// ignoring case) and the 8 KiB total.
func ValidateMetadata(m []KV) error {
	total := 0
	seen := map[string]bool{}
	for _, kv := range m {
		name := kv[0]
		if name == "" {
			return azerr.New(azerr.EmptyMetadataKey)
		}
		if !isIdentifier(name) {
			return azerr.New(azerr.InvalidMetadata).WithDetail("MetadataKey", name)
		}
		low := strings.ToLower(name)
		if seen[low] {
			return azerr.New(azerr.InvalidMetadata).WithDetail("MetadataKey", name)
		}
		seen[low] = true
		total += len(name) + len(kv[1])
	}
	if total > MaxMetadataBytes {
		return azerr.New(azerr.MetadataTooLarge)
	}
	return nil
}

func isIdentifier(s string) bool {
	for i, r := range s {
		if r == '_' || unicode.IsLetter(r) || (i > 0 && unicode.IsDigit(r)) {
			continue
		}
		return false
	}
	return true
}

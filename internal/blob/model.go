// Package blob is the Blob service domain: containers, block, page and
// append blobs, snapshots, leases, conditions, tags and copies, on top of
// storage.Engine. It knows nothing about HTTP; blobhttp decodes requests
// into the calls here and encodes the results.
//
// Every check (existence, conditional headers, leases, tags, sequence
// numbers, append positions) runs inside the same Update as the write it
// guards. Request bodies are written to the chunk store before that Update,
// which only records chunk references; small Put Blob payloads are inlined
// into the blob record.
package blob

import (
	"fmt"
	"time"

	"github.com/lazuli-storage/lazuli/internal/content"
	"github.com/lazuli-storage/lazuli/internal/keyenc"
	"github.com/lazuli-storage/lazuli/internal/lease"
)

// Blob types as Azure names them.
const (
	BlockBlob  = "BlockBlob"
	PageBlob   = "PageBlob"
	AppendBlob = "AppendBlob"
)

// Limits.
const (
	InlineMax          = content.InlineMax
	ChunkPiece         = content.ChunkPiece
	MaxCommittedBlocks = 50000
	MaxUncommitted     = 100000
	MaxBlockIDBytes    = 64
	MaxPutBlob         = 5000 << 20
	MaxBlockSize       = 4000 << 20
	MaxAppendBlock     = 100 << 20
	MaxPageWrite       = 4 << 20
	MaxPageBlobSize    = 8 << 40
	MaxMetadataBytes   = content.MaxMetadataBytes
	MaxSignedIDs       = 5
	MaxListResults     = 5000
	MaxTags            = 10
)

// PutBlobLimit is the largest single-shot Put Blob body for a service
// version: 5000 MiB from 2019-12-12, 256 MiB from 2016-05-31, else 64 MiB.
func PutBlobLimit(version string) int64 {
	switch {
	case version == "" || version >= "2019-12-12":
		return MaxPutBlob
	case version >= "2016-05-31":
		return 256 << 20
	}
	return 64 << 20
}

// BlockLimit is the largest Put Block body for a service version: 4000 MiB
// from 2019-12-12, 100 MiB from 2016-05-31, else 4 MiB.
func BlockLimit(version string) int64 {
	switch {
	case version == "" || version >= "2019-12-12":
		return MaxBlockSize
	case version >= "2016-05-31":
		return 100 << 20
	}
	return 4 << 20
}

// Container is the stored record of a container.
type Container struct {
	Name     string             `json:"n"`
	Created  time.Time          `json:"c"`
	Modified time.Time          `json:"m"`
	ETag     uint64             `json:"e"`
	Meta     []KV               `json:"md,omitempty"`
	Public   string             `json:"pa,omitempty"` // "", "blob" or "container"
	ACL      []SignedIdentifier `json:"acl,omitempty"`
	Lease    lease.State        `json:"l"`
	// DefaultScope is the encryption scope blobs written without one get
	// (x-ms-default-encryption-scope; "" is the account's own key), and
	// DenyScopeOverride refuses writes naming another scope.
	DefaultScope      string `json:"ds,omitempty"`
	DenyScopeOverride bool   `json:"dso,omitempty"`
	// ImmutableVersioning is version-level immutability support
	// (x-ms-immutable-storage-with-versioning-enabled), fixed at creation.
	ImmutableVersioning bool `json:"ivw,omitempty"`

	// AsOf is the clock reading a read was checked at; time-driven state
	// (lease expiry and break) is reported as of this instant.
	AsOf time.Time `json:"-"`
}

// SignedIdentifier is a stored access policy of a container ACL.
type SignedIdentifier struct {
	ID         string `json:"id"`
	Start      string `json:"s,omitempty"` // as sent (ISO 8601)
	Expiry     string `json:"x,omitempty"`
	Permission string `json:"p,omitempty"`
	HasPolicy  bool   `json:"h,omitempty"`
}

// Block is a committed or staged block (append blobs record each append
// as an anonymous block).
type Block struct {
	ID   string    `json:"i,omitempty"`
	Size int64     `json:"s"`
	Segs []Segment `json:"g,omitempty"`
}

// CopyInfo is the x-ms-copy-* state of a copy destination.
type CopyInfo struct {
	ID          string    `json:"id"`
	Source      string    `json:"src"`
	Status      string    `json:"st"`
	Progress    string    `json:"pr"`
	Completion  time.Time `json:"ct"`
	Description string    `json:"d,omitempty"`
}

// Blob is the stored record of a blob or snapshot.
type Blob struct {
	Name        string      `json:"n"`
	Snapshot    string      `json:"sn,omitempty"`
	Type        string      `json:"t"`
	Created     time.Time   `json:"c"`
	Modified    time.Time   `json:"m"`
	ETag        uint64      `json:"e"`
	Size        int64       `json:"z"`
	Props       Props       `json:"p"`
	Meta        []KV        `json:"md,omitempty"`
	Lease       lease.State `json:"l"`
	Blocks      []Block     `json:"b,omitempty"` // block and append blobs
	Pages       []Page      `json:"pg,omitempty"`
	Seq         int64       `json:"seq,omitempty"`
	Tags        []KV        `json:"tg,omitempty"`
	Copy        *CopyInfo   `json:"cp,omitempty"`
	AccessTier  string      `json:"at,omitempty"`
	BlockIDLen  int         `json:"bl,omitempty"` // encoded length of committed block ids
	AppendCount int         `json:"ac,omitempty"`
	// Sealed marks an append blob that takes no more appends.
	Sealed bool `json:"sl,omitempty"`
	// TierChanged is when Set Blob Tier last changed AccessTier.
	TierChanged time.Time `json:"tc,omitempty"`
	// ExtBlocks is set when the committed block list is stored under
	// blockListKey rather than in the record.
	ExtBlocks bool `json:"xb,omitempty"`
	// KeySHA256 is the SHA-256 (base64) of the customer-provided key the
	// blob was written with (x-ms-encryption-key-sha256): reads and
	// writes of its content or metadata must present the same key.
	KeySHA256 string `json:"ck,omitempty"`
	// EncryptionScope is the encryption scope the blob was written with
	// ("" is the account's own key), reported as x-ms-encryption-scope.
	EncryptionScope string `json:"es,omitempty"`
	// RehydrateTo is the tier an archived blob is being rehydrated to
	// ("" when it is not), with the priority asked for and the time the
	// rehydration completes (settleRehydration).
	RehydrateTo       string    `json:"rt,omitempty"`
	RehydratePriority string    `json:"rp,omitempty"`
	RehydrateDone     time.Time `json:"rd,omitempty"`
	// CopySnapshot is set on the destination of an incremental copy: the
	// source snapshot last copied; DestSnapshot is the snapshot of the
	// destination that copy made (x-ms-copy-destination-snapshot).
	CopySnapshot string `json:"ics,omitempty"`
	DestSnapshot string `json:"ids,omitempty"`
	// VersionID is the blob's version (x-ms-version-id) while versioning
	// is on for its account; previous versions are kept like snapshots,
	// under VersionKey(id).
	VersionID string `json:"vid,omitempty"`
	// ImmutableUntil and ImmutableMode are the version's immutability
	// policy (Set Blob Immutability Policy; mode Unlocked or Locked, ""
	// when there is none), LegalHold its legal hold (immutability.go).
	ImmutableUntil time.Time `json:"iu,omitempty"`
	ImmutableMode  string    `json:"im,omitempty"`
	LegalHold      bool      `json:"lh,omitempty"`
	// ExpiresOn is when Set Blob Expiry makes the blob go (zero: never;
	// expiry.go).
	ExpiresOn time.Time `json:"ex,omitempty"`
	// PathCreated marks a file made by the dfs API's Path - Create (until
	// a Blob write replaces it): Azure lets no Put Block or Put Block List
	// write it (hns_conflict.go).
	PathCreated bool `json:"pc,omitempty"`
	// EncryptionContext is the file's x-ms-encryption-context, set by
	// Path - Create on an account with a hierarchical namespace and
	// returned unencrypted on its reads and listings.
	EncryptionContext string `json:"ecx,omitempty"`

	// AsOf is the clock reading a read was checked at; time-driven state
	// (lease expiry and break) is reported as of this instant.
	AsOf time.Time `json:"-"`

	// storedTags are the tags the stored record had when it was loaded,
	// so that a write can update the tag index.
	storedTags []KV
	// tagsKnown says storedTags is valid for a record not loaded from the
	// store (a new record over an old one the caller already read).
	tagsKnown bool
	// replaced is the record a new record replaces (nil when there was
	// none); valid when tagsKnown is set. putBlob removes only the
	// extents that record can have.
	replaced *Blob

	// loaded is set when the record was read from the store (rather than
	// built for a new blob, snapshot or copy). Append blobs keep their
	// blocks under separate keys (one per Append Block, so an append writes
	// one small key instead of rewriting a growing list); Blocks of an
	// append blob is filled only by hydrate.
	loaded bool
	// key is the key name the records of the blob live under (see
	// pathKey): set by getBlob for a stored record and by the write that
	// makes a new one; copies (snapshots, versions) keep it.
	key pathKey
}

// pathKey is the name a path's records are keyed by. On an account
// without a hierarchical namespace it is the blob's full name, so records
// stay byte for byte what they always were; on an account with one it is
// meant to be the name index's key name (see hns_names.go). A distinct
// type so that no full name reaches a key builder unresolved.
type pathKey string

// plainKey keys a path by its full name: the layout of every account
// until the hierarchical namespace keys its paths by the name index.
// Every use of it on a path of an account with a hierarchical namespace
// is a place that switch must resolve instead.
func plainKey(name string) pathKey { return pathKey(name) }

// Staging is the per-blob record of uncommitted blocks.
type Staging struct {
	Count   int       `json:"c"`
	IDLen   int       `json:"l"` // decoded length of the staged block ids
	Touched time.Time `json:"t"`
}

// ServiceProps are the stored Blob service properties (kept as the XML
// clients sent, plus parsed CORS rules).
type ServiceProps struct {
	XML  []byte     `json:"x,omitempty"`
	Cors []CorsRule `json:"cors,omitempty"`
}

// CorsRule is one CORS rule.
type CorsRule struct {
	AllowedOrigins  []string `json:"o"`
	AllowedMethods  []string `json:"m"`
	AllowedHeaders  []string `json:"ah"`
	ExposedHeaders  []string `json:"eh"`
	MaxAgeInSeconds int      `json:"age"`
}

// replacing records that b replaces old (nil when there was none), so
// putBlob need not read the old record again for the tag index.
func (b *Blob) replacing(old *Blob) {
	b.tagsKnown = true
	b.storedTags = nil
	b.replaced = old
	if old != nil {
		b.storedTags = old.Tags
	}
}

// SnapshotTime renders a snapshot id: ISO 8601 with 7 fractional digits.
func SnapshotTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.0000000Z") }

// ValidSnapshot reports whether s parses as a snapshot id.
func ValidSnapshot(s string) bool {
	_, err := time.Parse("2006-01-02T15:04:05.9999999Z", s)
	return err == nil
}

// Keys. Every record is keyed by a one-letter kind and a keyenc tuple:
//
//	c account container                 container record
//	b account container name snapshot   blob or snapshot record ("" = base blob,
//	                                    which sorts before its snapshots)
//	k account container name snapshot   committed block list of a long block blob
//	x account container name snapshot n append block n of an append blob
//	g account container name snapshot o page starting at offset o of a page blob
//	s account container name            staging record (uncommitted block count)
//	u account container name blockid    one uncommitted block
//	p account                           service properties
//	i account tag value container name  tag index entry of a base blob
//
// Listing blobs is a scan of the b range; the per-blob extents (k, x, g)
// keep the b records small however large the blob. On an account with a
// hierarchical namespace the name is a key name and the container the
// home of its parent directory (segOf, hns_names.go).
const (
	kindContainer = 'c'
	kindBlob      = 'b'
	kindStaging   = 's'
	kindBlock     = 'u'
	kindService   = 'p'
	kindAppend    = 'x'
	kindPage      = 'g'
	kindBlockList = 'k'
	kindTagIndex  = 'i'
)

// ExtBlocksMin is the committed block count above which a block blob's
// block list is stored under its own key.
const ExtBlocksMin = 16

// tupleKey is the key of kind and the keyenc tuple of parts, built in one
// allocation (keys of names without NUL bytes are exactly this long).
func tupleKey(kind byte, parts ...string) []byte {
	n := 1
	for _, p := range parts {
		n += len(p) + 2
	}
	k := append(make([]byte, 0, n), kind)
	for _, p := range parts {
		k = keyenc.AppendString(k, p)
	}
	return k
}

func containerKey(acct, c string) []byte { return tupleKey(kindContainer, acct, c) }

func containersPrefix(acct string) []byte { return keyenc.AppendString([]byte{kindContainer}, acct) }

func blobsPrefix(acct, c string) []byte {
	return keyenc.AppendString(keyenc.AppendString([]byte{kindBlob}, acct), c)
}

func blobKey(acct, c string, k pathKey, snap string) []byte {
	return tupleKey(kindBlob, acct, segOf(c, k), string(k), snap)
}

// blobVersionsPrefix covers the base blob and all snapshots of name.
func blobVersionsPrefix(acct, c string, k pathKey) []byte {
	return keyenc.AppendString(blobsPrefix(acct, segOf(c, k)), string(k))
}

func stagingPrefix(acct, c string) []byte {
	return keyenc.AppendString(keyenc.AppendString([]byte{kindStaging}, acct), c)
}

func stagingKey(acct, c string, k pathKey) []byte {
	return tupleKey(kindStaging, acct, segOf(c, k), string(k))
}

func blocksPrefix(acct, c string, k pathKey) []byte {
	return tupleKey(kindBlock, acct, segOf(c, k), string(k))
}

func blockKey(acct, c string, k pathKey, id string) []byte {
	return keyenc.AppendString(blocksPrefix(acct, c, k), id)
}

// appendsPrefix covers the append blocks of one blob or snapshot.
func appendsPrefix(acct, c string, k pathKey, snap string) []byte {
	return tupleKey(kindAppend, acct, segOf(c, k), string(k), snap)
}

func appendKey(acct, c string, k pathKey, snap string, i int) []byte {
	return keyenc.AppendUint64(appendsPrefix(acct, c, k, snap), uint64(i))
}

// pagesPrefix covers the written pages of one page blob or snapshot,
// keyed by start offset.
func pagesPrefix(acct, c string, k pathKey, snap string) []byte {
	return tupleKey(kindPage, acct, segOf(c, k), string(k), snap)
}

// blockListKey holds the committed block list of a block blob with more
// than ExtBlocksMin blocks.
func blockListKey(acct, c string, k pathKey, snap string) []byte {
	return tupleKey(kindBlockList, acct, segOf(c, k), string(k), snap)
}

// tagIndexPrefix covers the base blobs of an account carrying tag = value.
func tagIndexPrefix(acct, tag, value string) []byte {
	return keyenc.AppendString(keyenc.AppendString(keyenc.AppendString([]byte{kindTagIndex}, acct), tag), value)
}

func tagIndexKey(acct, tag, value, c string, k pathKey) []byte {
	return keyenc.AppendString(keyenc.AppendString(tagIndexPrefix(acct, tag, value), segOf(c, k)), string(k))
}

func serviceKey(acct string) []byte { return keyenc.AppendString([]byte{kindService}, acct) }

// encodeBlob stores b in the binary layout (see blobBinaryTag).
func encodeBlob(b *Blob) []byte {
	return encodeBlobBinary(make([]byte, 0, blobRecordSize(b)), b)
}

// blobRecordSize estimates the encoded size of b, so that the record is
// usually built in one allocation.
func blobRecordSize(b *Blob) int {
	n := 256 + len(b.Name) + len(b.Meta)*32 + len(b.Tags)*32
	for i := range b.Blocks {
		n += 48 + len(b.Blocks[i].ID)
		for j := range b.Blocks[i].Segs {
			n += 48 + len(b.Blocks[i].Segs[j].Data)
		}
	}
	return n + len(b.Pages)*64
}

// decodeBlob reverses encodeBlob.
func decodeBlob(v []byte) (*Blob, error) { return decodeBlobAt(v, "", "") }

// decodeBlobAt is decodeBlob for the record stored under the key of name
// and snap, whose strings it shares instead of copying.
func decodeBlobAt(v []byte, name, snap string) (*Blob, error) {
	if len(v) == 0 || v[0] != blobBinaryTag {
		return nil, errCorruptBlob
	}
	return decodeBlobBinaryAt(v, name, snap)
}

// encodeBlock stores a staged block like a blob record holding just that
// block, so inline bytes survive too.
func encodeBlock(bl *Block) []byte { return encodeBlob(&Blob{Blocks: []Block{*bl}}) }

func decodeBlock(v []byte) (*Block, error) {
	b, err := decodeBlob(v)
	if err != nil {
		return nil, err
	}
	if len(b.Blocks) != 1 {
		return nil, fmt.Errorf("blob: corrupt block record")
	}
	return &b.Blocks[0], nil
}

func encode(v any) []byte { return content.EncodeJSON(v) }

func decode[T any](b []byte) (*T, error) { return content.DecodeJSON[T](b, "blob") }

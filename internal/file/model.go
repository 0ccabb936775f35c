package file

import (
	"math/bits"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/lazuli-storage/lazuli/internal/content"
	"github.com/lazuli-storage/lazuli/internal/keyenc"
	"github.com/lazuli-storage/lazuli/internal/lease"
)

// Limits.
const (
	MaxShareQuotaGiB  = 102400
	MinShareQuotaGiB  = 1
	DefaultQuotaGiB   = 102400
	MaxFileSize       = 4 << 40
	MaxRangeWrite     = 4 << 20
	MaxListResults    = 5000
	MaxNameLength     = 255
	MaxPathLength     = 2048
	MaxDepth          = 250
	MaxSnapshots      = 200
	MaxPermissionSize = 8 << 10
	// MaxPermissionBody is the largest SDDL Create Permission accepts in
	// its JSON body.
	MaxPermissionBody = 64 << 10
	// MaxHandlesPerFile is how many handles one file or directory may
	// have open at once.
	MaxHandlesPerFile = 2000
)

// Share is the stored record of a share or of one of its snapshots.
type Share struct {
	Name     string    `json:"n"`
	Snapshot string    `json:"sn,omitempty"`
	ID       uint64    `json:"id"`
	Created  time.Time `json:"c"`
	Modified time.Time `json:"m"`
	ETag     uint64    `json:"e"`
	// Quota is the share quota in GiB.
	Quota       int                `json:"q"`
	AccessTier  string             `json:"at,omitempty"`
	TierChanged time.Time          `json:"atc,omitzero"`
	Protocols   string             `json:"pr,omitempty"`
	RootSquash  string             `json:"rs,omitempty"`
	Meta        []content.KV       `json:"md,omitempty"`
	ACL         []SignedIdentifier `json:"acl,omitempty"`
	Lease       lease.State        `json:"l"`

	// AsOf is the clock reading a read was checked at (lease state).
	AsOf time.Time `json:"-"`
	// Written is what a Put Range just wrote: immutable chunks a caller
	// may read after the write (the CRC-64 Put Range From URL returns).
	Written []content.Segment `json:"-"`
}

// SignedIdentifier is a stored access policy of a share ACL.
type SignedIdentifier struct {
	ID         string `json:"id"`
	Start      string `json:"s,omitempty"`
	Expiry     string `json:"x,omitempty"`
	Permission string `json:"p,omitempty"`
	HasPolicy  bool   `json:"h,omitempty"`
}

// Attr is a set of SMB file attributes (the Windows FILE_ATTRIBUTE_* bits).
type Attr uint32

// The attributes Azure Files keeps.
const (
	AttrReadOnly          Attr = 0x1
	AttrHidden            Attr = 0x2
	AttrSystem            Attr = 0x4
	AttrDirectory         Attr = 0x10
	AttrArchive           Attr = 0x20
	AttrNormal            Attr = 0x80
	AttrTemporary         Attr = 0x100
	AttrOffline           Attr = 0x1000
	AttrNotContentIndexed Attr = 0x2000
	AttrNoScrubData       Attr = 0x20000
)

// attrNames lists the attributes in the order Azure renders them.
var attrNames = []struct {
	a    Attr
	name string
}{
	{AttrReadOnly, "ReadOnly"}, {AttrHidden, "Hidden"}, {AttrSystem, "System"}, {AttrDirectory, "Directory"},
	{AttrArchive, "Archive"}, {AttrTemporary, "Temporary"}, {AttrOffline, "Offline"},
	{AttrNotContentIndexed, "NotContentIndexed"}, {AttrNoScrubData, "NoScrubData"},
}

// String renders attributes as x-ms-file-attributes does ("None" when
// empty, else names joined by " | ").
func (a Attr) String() string {
	var parts []string
	for _, n := range attrNames {
		if a&n.a != 0 {
			parts = append(parts, n.name)
		}
	}
	if len(parts) == 0 {
		return "None"
	}
	return strings.Join(parts, " | ")
}

// ParseAttr parses x-ms-file-attributes ("None" or names separated by
// '|', spaces allowed). ok is false for an unknown name.
func ParseAttr(s string, dir bool) (Attr, bool) {
	var a Attr
	parts := strings.Split(s, "|")
	for _, p := range parts {
		p = strings.TrimSpace(p)
		if strings.EqualFold(p, "None") || strings.EqualFold(p, "Normal") {
			// None stands alone: "None|ReadOnly" is refused, as Azure
			// refuses it.
			if len(parts) > 1 {
				return 0, false
			}
			continue
		}
		found := false
		for _, n := range attrNames {
			if strings.EqualFold(p, n.name) {
				if n.a == AttrDirectory && !dir {
					return 0, false
				}
				a |= n.a
				found = true
			}
		}
		if !found {
			return 0, false
		}
	}
	return a, true
}

// Node is the stored record of a file or directory.
type Node struct {
	ID     uint64 `json:"id"`
	Parent uint64 `json:"pa"`
	// Name is the component as it was created (its case preserved).
	Name     string    `json:"n"`
	Dir      bool      `json:"d,omitempty"`
	Modified time.Time `json:"m"`
	ETag     uint64    `json:"e"`
	Size     int64     `json:"z,omitempty"`
	Attrs    Attr      `json:"a,omitempty"`
	// SMB times.
	CreationTime   time.Time     `json:"ct"`
	LastWriteTime  time.Time     `json:"wt"`
	ChangeTime     time.Time     `json:"cht"`
	LastAccessTime time.Time     `json:"lat"`
	PermKey        string        `json:"pk,omitempty"`
	Props          content.Props `json:"p"`
	Meta           []content.KV  `json:"md,omitempty"`
	Lease          lease.State   `json:"l"`
	Copy           *CopyInfo     `json:"cp,omitempty"`
	// Handles counts the open handles on the node, so that REST
	// operations look for handle records only when there are some.
	Handles int `json:"h,omitempty"`
	// DeletePending is set by an SMB client (delete-on-close or a
	// disposition); the node is removed when its last handle closes.
	DeletePending bool `json:"dp,omitempty"`
	// Inline says that the file's extents are Exts, kept in this record,
	// rather than under extent keys (see putExtents).
	Inline bool     `json:"-"`
	Exts   []Extent `json:"-"`

	// AsOf is the clock reading a read was checked at (lease state).
	AsOf time.Time `json:"-"`
	// Written is what a Put Range just wrote: immutable chunks a caller
	// may read after the write (the CRC-64 Put Range From URL returns).
	Written []content.Segment `json:"-"`
	// path is the node's path as addressed (set by lookups).
	path string
	// lazyRoot marks the stand-in for the root directory that lookups use
	// as a parent without reading it (see inheritedPerm).
	lazyRoot bool
}

// Path is the path the node was reached by, from the share root
// ("" for the root).
func (n *Node) Path() string { return n.path }

// CopyInfo is the x-ms-copy-* state of a copy destination.
type CopyInfo struct {
	ID          string    `json:"id"`
	Source      string    `json:"src"`
	Status      string    `json:"st"`
	Progress    string    `json:"pr"`
	Completion  time.Time `json:"ct"`
	Description string    `json:"d,omitempty"`
}

// Extent is a written range of a file: Seg.Len bytes at Start, stored as
// the page store keeps a page of a page blob.
type Extent = content.Page

// Handle is an open handle (an SMB open) on a file or directory.
type Handle struct {
	ID       uint64    `json:"id"`
	FileID   uint64    `json:"f"`
	ParentID uint64    `json:"p"`
	Session  uint64    `json:"s"`
	ClientIP string    `json:"ip,omitempty"`
	Opened   time.Time `json:"o"`
	// Owner is the cluster member (instance) that opened the handle: when
	// it dies, the others release its handles (ReleaseOrphans).
	Owner uint64 `json:"ow,omitempty"`
	// Access is the SMB desired access mask granted; ShareAccess the
	// FILE_SHARE_* bits the open allows others.
	Access      uint32 `json:"ac"`
	ShareAccess uint32 `json:"sa"`
	Dir         bool   `json:"d,omitempty"`
	// DeleteOnClose marks the file for deletion when this handle closes.
	DeleteOnClose bool `json:"doc,omitempty"`
	// Locks are the byte-range locks the handle holds.
	Locks []Lock `json:"lk,omitempty"`
	// UserSet records the times this handle set explicitly (UserSet...
	// bits): writes through the handle then leave them as set (MS-FSA
	// 2.1.5.14.2, Open.UserSetModificationTime and UserSetChangeTime).
	UserSet uint8 `json:"us,omitempty"`
	// Cache is the oplock or lease the handle's client holds.
	Cache *Caching `json:"ca,omitempty"`
}

// Bits of Handle.UserSet.
const (
	UserSetLastWrite uint8 = 1 << iota
	UserSetChange
)

// Lock is a byte-range lock.
type Lock struct {
	Off       uint64 `json:"o"`
	Len       uint64 `json:"n"`
	Exclusive bool   `json:"x,omitempty"`
}

// overlaps reports whether [off, off+n) meets the lock's range. A
// zero-length range overlaps a range that holds its offset strictly
// inside (Windows: a zero-byte lock at 102 conflicts with an exclusive
// lock of [100, 200), one at 100 does not); two zero-length ranges never
// overlap. Ranges may end at 2^64 exactly.
func (l Lock) overlaps(off, n uint64) bool {
	lEnd, lWrap := bits.Add64(l.Off, l.Len, 0)
	end, wrap := bits.Add64(off, n, 0)
	return (lWrap == 1 || off < lEnd) && (wrap == 1 || l.Off < end)
}

// ServiceProps are the stored File service properties.
type ServiceProps struct {
	XML []byte `json:"x,omitempty"`
}

// Keys. Every key starts with the element "file" so the File service owns
// one contiguous range of the shared keyspace, then a one-letter tag:
//
//	file s <account> <share> <snapshot>   share record ("" = the live share)
//	file e <sid> <parent id> <folded name> node (file or directory) record
//	file i <sid> <id>                     id index: parent id and folded name
//	file r <sid> <file id> <offset>       written extent of a file
//	file h <sid> <file id> <handle id>    open handle
//	file p <sid> <permission key>         security descriptor (SDDL)
//	file u <sid>                          bytes used (sum of file sizes)
//	file q <sid>                          quota in GiB (read by writes that grow files)
//	file n <account> <share> <snapshot>   share id (the share record's id, read by file operations)
//	file x <account> <share> <version>    soft-deleted share (with its snapshots) kept for restore
//	file t <sid>                          tombstone: keys of sid await purging
//	file v <account>                      service properties
//
// Nodes hang off an internal share id (sid), so deleting a share drops the
// share record in one small transaction and its nodes are purged in the
// background; a share snapshot is a copy of the node, index, extent and
// permission keys under a new sid, made in one transaction (chunks are
// shared, never copied). Names are keyed folded (case-insensitive) and
// keep their case in the record. The root directory is the node with id
// rootID under the parent rootParent and the empty name.
const (
	tagShare   = 's'
	tagNode    = 'e'
	tagIndex   = 'i'
	tagExtent  = 'r'
	tagHandle  = 'h'
	tagPerm    = 'p'
	tagUsage   = 'u'
	tagTomb    = 't'
	tagProps   = 'v'
	tagQuota   = 'q'
	tagShID    = 'n'
	tagDeleted = 'x'
	// tagBreak keys the SMB cache breaks an instance asks another to
	// send: owner, handle id.
	tagBreak = 'k'
	// tagLeaseKey keys the file an SMB lease key is bound to: client
	// GUID, lease key.
	tagLeaseKey = 'l'
)

const (
	rootID     uint64 = 0
	rootParent uint64 = ^uint64(0)
)

var fileRoot = keyenc.AppendString(nil, "file")

func root(tag byte, extra int) []byte {
	k := make([]byte, 0, len(fileRoot)+1+extra)
	return append(append(k, fileRoot...), tag)
}

func shareKey(acct, name, snap string) []byte {
	k := root(tagShare, len(acct)+len(name)+len(snap)+6)
	return keyenc.AppendString(keyenc.AppendString(keyenc.AppendString(k, acct), name), snap)
}

func shareIDKey(acct, name, snap string) []byte {
	k := root(tagShID, len(acct)+len(name)+len(snap)+6)
	return keyenc.AppendString(keyenc.AppendString(keyenc.AppendString(k, acct), name), snap)
}

func sharesPrefix(acct string) []byte {
	return keyenc.AppendString(root(tagShare, len(acct)+2), acct)
}

// shareVersionsPrefix covers a share and all its snapshots.
func shareVersionsPrefix(acct, name string) []byte {
	return keyenc.AppendString(sharesPrefix(acct), name)
}

func sidPrefix(tag byte, sid uint64) []byte { return keyenc.AppendUint64(root(tag, 8), sid) }

// sidKey is sidPrefix with room for extra more bytes, so that the
// elements appended after it need no second allocation.
func sidKey(tag byte, sid uint64, extra int) []byte {
	return keyenc.AppendUint64(root(tag, 8+extra), sid)
}

func nodeKey(sid, parent uint64, folded string) []byte {
	return keyenc.AppendString(keyenc.AppendUint64(sidKey(tagNode, sid, 8+len(folded)+2), parent), folded)
}

func childrenPrefix(sid, parent uint64) []byte {
	return keyenc.AppendUint64(sidKey(tagNode, sid, 8), parent)
}

func indexKey(sid, id uint64) []byte { return keyenc.AppendUint64(sidKey(tagIndex, sid, 8), id) }

func extentsPrefix(sid, fid uint64) []byte {
	return keyenc.AppendUint64(sidKey(tagExtent, sid, 8), fid)
}

func handlesPrefix(sid, fid uint64) []byte {
	return keyenc.AppendUint64(sidKey(tagHandle, sid, 16), fid)
}

func handleKey(sid, fid, hid uint64) []byte { return keyenc.AppendUint64(handlesPrefix(sid, fid), hid) }

func permKey(sid uint64, key string) []byte {
	return keyenc.AppendString(sidKey(tagPerm, sid, len(key)+2), key)
}

func usageKey(sid uint64) []byte { return sidPrefix(tagUsage, sid) }

func quotaKey(sid uint64) []byte { return sidPrefix(tagQuota, sid) }

func tombKey(sid uint64) []byte { return sidPrefix(tagTomb, sid) }

func propsKey(acct string) []byte { return keyenc.AppendString(root(tagProps, len(acct)+2), acct) }

// sidTags are the tags whose keys hang off a share id (copied by a
// snapshot, purged after a delete); handles are neither.
var sidTags = []byte{tagNode, tagIndex, tagExtent, tagPerm, tagUsage}

// purgeTags are the tags whose keys a deleted share leaves behind.
var purgeTags = []byte{tagNode, tagIndex, tagExtent, tagPerm, tagUsage, tagHandle, tagQuota}

// newID returns a random 63-bit id (ids are never reused in practice and
// random ids need no shared counter that every create would contend on).
func newID() uint64 {
	for {
		if v := rand.Uint64() >> 1; v != rootID {
			return v
		}
	}
}

// Fold is the case-insensitive form of a name component used in keys.
func Fold(name string) string { return strings.ToUpper(name) }

func encode(v any) []byte { return content.EncodeJSON(v) }

func decode[T any](b []byte) (*T, error) { return content.DecodeJSON[T](b, "file") }

// ETagString renders an ETag as Azure does: quoted hex.
func ETagString(e uint64) string { return content.ETagString(e) }

// TimeFormat renders SMB times and snapshot ids: ISO 8601 with 7 digits.
const TimeFormat = "2006-01-02T15:04:05.0000000Z"

// FormatTime renders t in TimeFormat (UTC). Every file response carries
// three or four of these, so years 0 to 9999 are written digit by digit
// into one buffer (time.Format parses its layout on every call); other
// years take time.Format.
func FormatTime(t time.Time) string {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return t.Format(TimeFormat)
	}
	hour, minute, sec := t.Clock()
	b := []byte("0000-00-00T00:00:00.0000000Z")
	digits := func(at, n, v int) {
		for i := at + n - 1; i >= at; i-- {
			b[i] = byte('0' + v%10)
			v /= 10
		}
	}
	digits(0, 4, year)
	digits(5, 2, int(month))
	digits(8, 2, day)
	digits(11, 2, hour)
	digits(14, 2, minute)
	digits(17, 2, sec)
	digits(20, 7, t.Nanosecond()/100)
	return string(b)
}

// ParseTime reads an ISO 8601 time with up to 7 fraction digits.
func ParseTime(s string) (time.Time, bool) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, false
	}
	return t.UTC().Truncate(100 * time.Nanosecond), true
}

// ValidSnapshot reports whether s parses as a share snapshot id.
func ValidSnapshot(s string) bool {
	_, err := time.Parse("2006-01-02T15:04:05.9999999Z", s)
	return err == nil
}

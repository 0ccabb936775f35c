package smb

import (
	"context"
	"io"
	"time"
)

// Backend is the File service as SMB needs it. Every method runs in the
// storage transactions of the service, so SMB and REST see one truth:
// share access, delete-pending state and byte-range locks live in the
// Backend's handle table, not in this package.
type Backend interface {
	// Shares lists the shares of an account.
	Shares(ctx context.Context, account string) ([]string, error)
	// ShareExists answers ErrShareNotFound for a share the account does
	// not have.
	ShareExists(ctx context.Context, account, share string) error
	// ShareSize returns a share's quota and the bytes its files use, in
	// bytes, for the file-system size information classes.
	ShareSize(ctx context.Context, account, share string) (quota, used int64, err error)
	// Open opens (or creates, per the disposition) the file or directory
	// at req.Path and records the open in the handle table, checking
	// share access against the other opens and REST leases, and returns
	// the handle with the file's Stat as the open left it. It answers
	// ErrNotFound, ErrPathNotFound, ErrExists, ErrSharingViolation,
	// ErrDeletePending, ErrIsDirectory, ErrNotDirectory, ErrInvalidName,
	// ErrAccessDenied or ErrTooManyHandles.
	Open(ctx context.Context, req *OpenRequest) (Handle, Stat, error)
}

// SnapshotChangeRights are the rights no open of a share snapshot gets.
const SnapshotChangeRights = FileWriteData | FileAppendData | FileWriteEA | FileWriteAttributes | FileDeleteChild |
	Delete | WriteDAC | WriteOwner

// Create dispositions (MS-SMB2 §2.2.13).
const (
	FileSupersede   uint32 = 0
	FileOpen        uint32 = 1
	FileCreate      uint32 = 2
	FileOpenIf      uint32 = 3
	FileOverwrite   uint32 = 4
	FileOverwriteIf uint32 = 5
)

// Create options.
const (
	FileDirectoryFile    uint32 = 0x00000001
	FileNonDirectoryFile uint32 = 0x00000040
	FileDeleteOnClose    uint32 = 0x00001000
	FileOpenReparsePoint uint32 = 0x00200000
)

// Create actions.
const (
	FileSuperseded  uint32 = 0
	FileOpened      uint32 = 1
	FileCreated     uint32 = 2
	FileOverwritten uint32 = 3
)

// Access rights (MS-SMB2 §2.2.13.1).
const (
	FileReadData        uint32 = 0x00000001
	FileWriteData       uint32 = 0x00000002
	FileAppendData      uint32 = 0x00000004
	FileReadEA          uint32 = 0x00000008
	FileWriteEA         uint32 = 0x00000010
	FileExecute         uint32 = 0x00000020
	FileDeleteChild     uint32 = 0x00000040
	FileReadAttributes  uint32 = 0x00000080
	FileWriteAttributes uint32 = 0x00000100
	Delete              uint32 = 0x00010000
	ReadControl         uint32 = 0x00020000
	WriteDAC            uint32 = 0x00040000
	WriteOwner          uint32 = 0x00080000
	Synchronize         uint32 = 0x00100000
	MaximumAllowed      uint32 = 0x02000000
	GenericAll          uint32 = 0x10000000
	GenericExecute      uint32 = 0x20000000
	GenericWrite        uint32 = 0x40000000
	GenericRead         uint32 = 0x80000000
	// FileAllAccess is every specific right of a file.
	FileAllAccess uint32 = 0x001F01FF
)

// Share access.
const (
	FileShareRead   uint32 = 1
	FileShareWrite  uint32 = 2
	FileShareDelete uint32 = 4
)

// File attributes (MS-FSCC §2.6).
const (
	AttrReadOnly          uint32 = 0x00000001
	AttrHidden            uint32 = 0x00000002
	AttrSystem            uint32 = 0x00000004
	AttrDirectory         uint32 = 0x00000010
	AttrArchive           uint32 = 0x00000020
	AttrNormal            uint32 = 0x00000080
	AttrTemporary         uint32 = 0x00000100
	AttrOffline           uint32 = 0x00001000
	AttrNotContentIndexed uint32 = 0x00002000
	AttrNoScrubData       uint32 = 0x00020000
)

// OpenRequest is what a CREATE asks of the Backend. Access is already
// mapped from generic rights to specific ones.
type OpenRequest struct {
	Account, Share string
	// Path is the path inside the share with '/' separators and no
	// leading slash; "" is the share root.
	Path          string
	DesiredAccess uint32
	ShareAccess   uint32
	Disposition   uint32
	CreateOptions uint32
	// Attributes of a file or directory the open creates.
	Attributes uint32
	// Snapshot, when set, names the share snapshot taken at that time
	// ("previous versions"): ErrNotFound when there is no such snapshot,
	// else ErrAccessDenied for an open asking for any of
	// SnapshotChangeRights.
	Snapshot time.Time
	// SessionID and ClientIP are shown by List Handles.
	SessionID uint64
	ClientIP  string
	// Cache is the oplock or lease asked for (nil for none); the Handle
	// of a Backend that grants them is a Cacher. OnBreak sends a break
	// of what the open was granted to its client; Waiting is called
	// when the open starts waiting for other clients' breaks.
	Cache   *CacheRequest
	OnBreak func(Break)
	Waiting func()
}

// Stat describes a file or directory.
type Stat struct {
	Name                                    string
	IsDir                                   bool
	Size                                    int64
	FileID, ParentID                        uint64
	Attributes                              uint32
	Creation, LastAccess, LastWrite, Change time.Time
	DeletePending                           bool
	// alloc is the allocation size the open asked for at create ("AlSi"),
	// reported while it exceeds what the file's size needs.
	alloc uint64
}

// SetBasic changes times and attributes; a zero time or attribute value
// leaves that one unchanged (MS-FSCC FileBasicInformation).
type SetBasic struct {
	Creation, LastAccess, LastWrite, Change time.Time
	Attributes                              uint32
}

// Handle is one open recorded in the handle table. Methods answer
// ErrFileClosed once the handle was closed, also when REST's Force Close
// Handles closed it.
type Handle interface {
	// ID is the handle id List Handles shows.
	ID() uint64
	// Action is how Open got the file (FileCreated, FileOpened, ...).
	Action() uint32
	Stat(ctx context.Context) (Stat, error)
	// ReadAt returns how many bytes there are at off, up to n (fewer
	// only at the end of the file, none past it), and what writes exactly
	// those bytes, as of this call, to a writer; that WriteTo may run once
	// ReadAt returned, while ctx lasts. Ranges another open locked
	// exclusively answer ErrLockConflict.
	ReadAt(ctx context.Context, off, n int64) (int64, io.WriterTo, error)
	// WriteAt writes p at off, extending the file as needed, and changes
	// its ETag and last-modified time.
	WriteAt(ctx context.Context, p []byte, off int64) error
	// Truncate sets the file size.
	Truncate(ctx context.Context, size int64) error
	SetBasic(ctx context.Context, b SetBasic) error
	// SetDeletePending sets or clears the disposition (delete on last
	// close). Answers ErrNotEmpty for a directory with entries.
	SetDeletePending(ctx context.Context, pending bool) error
	// Rename moves the file to path newPath of the same share.
	Rename(ctx context.Context, newPath string, replace bool) error
	// Lock takes a byte-range lock for this open; ErrLockConflict when
	// another lock overlaps incompatibly.
	Lock(ctx context.Context, off, n uint64, exclusive bool) error
	// Unlock releases a lock this open holds; ErrRangeNotLocked if none
	// matches exactly.
	Unlock(ctx context.Context, off, n uint64) error
	// ReadDir lists at most max of a directory's entries, in the
	// backend's name order, from the first that sorts after the name
	// after ("" for the start). Files pending deletion are listed until
	// their last handle closes, as Windows lists them.
	ReadDir(ctx context.Context, after string, max int) ([]Stat, error)
	// SDDL is the file's security descriptor in SDDL form.
	SDDL(ctx context.Context) (string, error)
	// SetSDDL replaces the file's security descriptor.
	SetSDDL(ctx context.Context, sddl string) error
	// Close ends the open, releasing its locks; the file is deleted if
	// it is delete-pending and this was its last open.
	Close(ctx context.Context) error
}

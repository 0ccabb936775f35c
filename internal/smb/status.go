package smb

import (
	"context"
	"errors"
)

// NTSTATUS values this server answers (MS-ERREF §2.3).
const (
	statusSuccess                uint32 = 0x00000000
	statusPending                uint32 = 0x00000103
	statusBufferOverflow         uint32 = 0x80000005
	statusNoMoreFiles            uint32 = 0x80000006
	statusMoreProcessingRequired uint32 = 0xC0000016
	statusNotImplemented         uint32 = 0xC0000002
	statusInvalidInfoClass       uint32 = 0xC0000003
	statusInfoLengthMismatch     uint32 = 0xC0000004
	statusInvalidHandle          uint32 = 0xC0000008
	statusInvalidParameter       uint32 = 0xC000000D
	statusNoSuchFile             uint32 = 0xC000000F
	statusInvalidDeviceRequest   uint32 = 0xC0000010
	statusEndOfFile              uint32 = 0xC0000011
	statusAccessDenied           uint32 = 0xC0000022
	statusBufferTooSmall         uint32 = 0xC0000023
	statusObjectNameInvalid      uint32 = 0xC0000033
	statusObjectNameNotFound     uint32 = 0xC0000034
	statusObjectNameCollision    uint32 = 0xC0000035
	statusObjectPathNotFound     uint32 = 0xC000003A
	statusObjectPathSyntaxBad    uint32 = 0xC000003B
	statusSharingViolation       uint32 = 0xC0000043
	statusDeletePending          uint32 = 0xC0000056
	statusFileLockConflict       uint32 = 0xC0000054
	statusLockNotGranted         uint32 = 0xC0000055
	statusLogonFailure           uint32 = 0xC000006D
	statusRangeNotLocked         uint32 = 0xC000007E
	statusDiskFull               uint32 = 0xC000007F
	statusInsufficientResources  uint32 = 0xC000009A
	statusFileIsADirectory       uint32 = 0xC00000BA
	statusNotSupported           uint32 = 0xC00000BB
	statusNetworkNameDeleted     uint32 = 0xC00000C9
	statusBadNetworkName         uint32 = 0xC00000CC
	statusRequestNotAccepted     uint32 = 0xC00000D0
	statusRequestOutOfSequence   uint32 = 0xC000042A
	statusInternalError          uint32 = 0xC00000E5
	statusDirectoryNotEmpty      uint32 = 0xC0000101
	statusNotADirectory          uint32 = 0xC0000103
	statusCancelled              uint32 = 0xC0000120
	statusCannotDelete           uint32 = 0xC0000121
	statusFileClosed             uint32 = 0xC0000128
	statusUserSessionDeleted     uint32 = 0xC0000203
	statusNetworkSessionExpired  uint32 = 0xC000035C
	statusFsDriverRequired       uint32 = 0xC000019C
	statusInvalidDeviceState     uint32 = 0xC0000184
	statusPipeDisconnected       uint32 = 0xC00000B0
	statusPipeEmpty              uint32 = 0xC00000D9
	statusObjectNameExists       uint32 = 0x40000000
	statusTooManyOpenedFiles     uint32 = 0xC000011F
	statusFileNotAvailable       uint32 = 0xC0000467
	statusNoSuchDevice           uint32 = 0xC000000E
	statusMediaWriteProtected    uint32 = 0xC00000A2
	statusIOTimeout              uint32 = 0xC00000B5
	statusInvalidNetworkResponse uint32 = 0xC00000C3
	statusStoppedOnSymlink       uint32 = 0x8000002D
	statusNotFound               uint32 = 0xC0000225
	statusIllegalCharacter       uint32 = 0xC0000161
	statusNameTooLong            uint32 = 0xC0000106
	statusEAsNotSupported        uint32 = 0xC000004F
	statusUnsuccessful           uint32 = 0xC0000001
	statusInvalidSecurityDescr   uint32 = 0xC0000079
	statusNotSameDevice          uint32 = 0xC00000D4
	statusInvalidLockSequence    uint32 = 0xC000001E
	statusFileRenamed            uint32 = 0xC00000D5
	statusInvalidOwner           uint32 = 0xC000005A
	statusNoEAsOnFile            uint32 = 0xC0000052
)

// Errors a Backend returns; the SMB layer turns each into its NTSTATUS.
// Backends may wrap them.
var (
	ErrNotFound         = errors.New("smb: no such file")        // STATUS_OBJECT_NAME_NOT_FOUND
	ErrPathNotFound     = errors.New("smb: parent not found")    // STATUS_OBJECT_PATH_NOT_FOUND
	ErrExists           = errors.New("smb: name exists")         // STATUS_OBJECT_NAME_COLLISION
	ErrSharingViolation = errors.New("smb: sharing violation")   // STATUS_SHARING_VIOLATION
	ErrDeletePending    = errors.New("smb: delete pending")      // STATUS_DELETE_PENDING
	ErrLockConflict     = errors.New("smb: lock conflict")       // STATUS_LOCK_NOT_GRANTED / FILE_LOCK_CONFLICT
	ErrRangeNotLocked   = errors.New("smb: range not locked")    // STATUS_RANGE_NOT_LOCKED
	ErrNotEmpty         = errors.New("smb: directory not empty") // STATUS_DIRECTORY_NOT_EMPTY
	ErrIsDirectory      = errors.New("smb: is a directory")      // STATUS_FILE_IS_A_DIRECTORY
	ErrNotDirectory     = errors.New("smb: not a directory")     // STATUS_NOT_A_DIRECTORY
	ErrAccessDenied     = errors.New("smb: access denied")       // STATUS_ACCESS_DENIED
	ErrFileClosed       = errors.New("smb: handle closed")       // STATUS_FILE_CLOSED
	ErrInvalidName      = errors.New("smb: invalid name")        // STATUS_OBJECT_NAME_INVALID
	ErrShareNotFound    = errors.New("smb: no such share")       // STATUS_BAD_NETWORK_NAME
	ErrDiskFull         = errors.New("smb: share quota reached") // STATUS_DISK_FULL
	ErrCannotDelete     = errors.New("smb: cannot delete")       // STATUS_CANNOT_DELETE
	ErrTooManyHandles   = errors.New("smb: too many handles")    // STATUS_INSUFFICIENT_RESOURCES
	// ErrUnavailable: the server cannot serve the request for now (its
	// membership among the instances sharing the storage lapsed, or the
	// storage is busy or out of reach); the client may retry.
	ErrUnavailable      = errors.New("smb: opens unavailable") // STATUS_INSUFFICIENT_RESOURCES
	ErrInvalidParameter = errors.New("smb: invalid parameter") // STATUS_INVALID_PARAMETER
	ErrNotSupported     = errors.New("smb: not supported")     // STATUS_NOT_SUPPORTED
)

// statusOf maps an error from a Backend to its NTSTATUS.
func statusOf(err error) uint32 {
	switch {
	case err == nil:
		return statusSuccess
	case errors.Is(err, context.Canceled):
		// The client cancelled the request while it waited.
		return statusCancelled
	case errors.Is(err, ErrNotFound):
		return statusObjectNameNotFound
	case errors.Is(err, ErrPathNotFound):
		return statusObjectPathNotFound
	case errors.Is(err, ErrExists):
		return statusObjectNameCollision
	case errors.Is(err, ErrSharingViolation):
		return statusSharingViolation
	case errors.Is(err, ErrDeletePending):
		return statusDeletePending
	case errors.Is(err, ErrLockConflict):
		return statusFileLockConflict
	case errors.Is(err, ErrRangeNotLocked):
		return statusRangeNotLocked
	case errors.Is(err, ErrNotEmpty):
		return statusDirectoryNotEmpty
	case errors.Is(err, ErrIsDirectory):
		return statusFileIsADirectory
	case errors.Is(err, ErrNotDirectory):
		return statusNotADirectory
	case errors.Is(err, ErrAccessDenied):
		return statusAccessDenied
	case errors.Is(err, ErrFileClosed):
		return statusFileClosed
	case errors.Is(err, ErrInvalidName):
		return statusObjectNameInvalid
	case errors.Is(err, ErrShareNotFound):
		return statusBadNetworkName
	case errors.Is(err, ErrDiskFull):
		return statusDiskFull
	case errors.Is(err, ErrCannotDelete):
		return statusCannotDelete
	case errors.Is(err, ErrTooManyHandles), errors.Is(err, ErrUnavailable):
		return statusInsufficientResources
	case errors.Is(err, ErrInvalidParameter):
		return statusInvalidParameter
	case errors.Is(err, ErrNotSupported):
		return statusNotSupported
	}
	return statusInternalError
}

package file

import "github.com/lazuli-storage/lazuli/internal/azerr"

// The request values the File domain refuses by what they mean
// (azerr.InvalidValue); filehttp names the header of each.
const (
	// InputFileSize is the size of a created or resized file.
	InputFileSize azerr.Input = "file size"
	// InputShareQuota is a share's quota in GiB.
	InputShareQuota azerr.Input = "share quota"
	// InputHandleID is the id of a handle to close.
	InputHandleID azerr.Input = "handle id"
)

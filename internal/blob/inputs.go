package blob

import "github.com/lazuli-storage/lazuli/internal/azerr"

// The request values the Blob domain refuses by what they mean
// (azerr.InvalidValue); blobhttp names the header of each (the dfs API's
// JSON error body names none).
const (
	// InputUmask is the umask of a Data Lake path create.
	InputUmask azerr.Input = "umask"
	// InputPageBlobSize is the new size of a page blob.
	InputPageBlobSize azerr.Input = "page blob size"
	// InputDeleteSnapshots is Delete Blob's choice of snapshots to delete.
	InputDeleteSnapshots azerr.Input = "delete snapshots"
	// InputTagCondition is a condition on a blob's tags.
	InputTagCondition azerr.Input = "tag condition"
	// InputExpiryOption and InputExpiryTime are a blob's expiry (Set Blob
	// Expiry, Path - Create).
	InputExpiryOption azerr.Input = "expiry option"
	InputExpiryTime   azerr.Input = "expiry time"
)

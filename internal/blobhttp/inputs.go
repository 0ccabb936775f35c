package blobhttp

import (
	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/blob"
)

// inputHeaders names the header that carries each value the Blob domain
// refuses by what it means, for the HeaderName of the error body.
var inputHeaders = map[azerr.Input]string{
	blob.InputUmask:           "x-ms-umask",
	blob.InputPageBlobSize:    "x-ms-blob-content-length",
	blob.InputDeleteSnapshots: "x-ms-delete-snapshots",
	blob.InputTagCondition:    "x-ms-if-tags",
	blob.InputExpiryOption:    "x-ms-expiry-option",
	blob.InputExpiryTime:      "x-ms-expiry-time",
}

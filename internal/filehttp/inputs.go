package filehttp

import (
	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/file"
)

// inputHeaders names the header that carries each value the File domain
// refuses by what it means, for the HeaderName of the error body.
var inputHeaders = map[azerr.Input]string{
	file.InputFileSize:   "x-ms-content-length",
	file.InputShareQuota: "x-ms-share-quota",
	file.InputHandleID:   "x-ms-handle-id",
}

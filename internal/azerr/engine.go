package azerr

import (
	"errors"

	"github.com/lazuli-storage/lazuli/storage"
)

// FromEngine is the one mapping of the engine's sentinels to a domain
// error. Contention that outlasted the engine's retries (ErrConflict), an
// engine shutting down (ErrClosed) and a database out of reach
// (ErrUnavailable) all mean "try again later", so they become ServerBusy,
// which REST answers as 503 and SMB as its own retryable status. Azure
// errors and every other error pass through unchanged.
func FromEngine(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := As(err); ok {
		return err
	}
	if Transient(err) {
		return New(ServerBusy)
	}
	return err
}

// Transient reports whether err is an engine failure a client may retry.
func Transient(err error) bool {
	return errors.Is(err, storage.ErrConflict) || errors.Is(err, storage.ErrClosed) || errors.Is(err, storage.ErrUnavailable)
}

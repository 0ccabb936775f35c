package azerr

import (
	"errors"
	"fmt"
	"testing"

	"github.com/lazuli-storage/lazuli/storage"
)

func TestFromEngine(t *testing.T) {
	for _, sentinel := range []error{storage.ErrConflict, storage.ErrClosed, storage.ErrUnavailable} {
		e, ok := As(FromEngine(fmt.Errorf("commit: %w", sentinel)))
		if !ok || e.Code != ServerBusy || e.Status != 503 {
			t.Errorf("%v: got %v, want 503 ServerBusy", sentinel, e)
		}
	}
	// Azure errors and other failures pass through.
	nf := New(BlobNotFound)
	if got := FromEngine(nf); got != nf {
		t.Errorf("azure error: got %v", got)
	}
	other := errors.New("disk on fire")
	if got := FromEngine(other); got != other {
		t.Errorf("other error: got %v", got)
	}
	if FromEngine(storage.ErrNotFound) != storage.ErrNotFound || FromEngine(nil) != nil {
		t.Error("not found and nil must pass through")
	}
}

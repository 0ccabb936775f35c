package smbfile

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/lazuli-storage/lazuli/internal/engine/memstore"
	"github.com/lazuli-storage/lazuli/internal/smb"
	"github.com/lazuli-storage/lazuli/internal/smb/smbtest"
	"github.com/lazuli-storage/lazuli/storage"
)

// flakyEngine fails every transaction with failure while it is set, as a
// PostgreSQL engine does when contention outlasts its retries.
type flakyEngine struct {
	storage.Engine
	failure atomic.Pointer[error]
}

func (e *flakyEngine) fail() error {
	if p := e.failure.Load(); p != nil {
		return fmt.Errorf("commit: %w", *p)
	}
	return nil
}

func (e *flakyEngine) View(ctx context.Context, fn func(storage.Tx) error) error {
	if err := e.fail(); err != nil {
		return err
	}
	return e.Engine.View(ctx, fn)
}

func (e *flakyEngine) Update(ctx context.Context, fn func(storage.Tx) error) error {
	if err := e.fail(); err != nil {
		return err
	}
	return e.Engine.Update(ctx, fn)
}

// An engine failure a client may retry reaches an SMB client as
// STATUS_INSUFFICIENT_RESOURCES (which Windows' redirector retries), as REST
// answers it 503 ServerBusy, never as STATUS_INTERNAL_ERROR.
func TestTransientEngineErrorIsRetryableOverSMB(t *testing.T) {
	const statusInsufficientResources = 0xC000009A
	eng := &flakyEngine{Engine: memstore.New()}
	addr, _ := serveShare(t, eng)
	c, err := smbtest.Dial(addr, "acct", "key")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.TreeConnect("share"); err != nil {
		t.Fatal(err)
	}
	for _, sentinel := range []error{storage.ErrConflict, storage.ErrUnavailable, storage.ErrClosed} {
		eng.failure.Store(&sentinel)
		if _, st := c.Create("f", smb.FileReadData|smb.FileWriteData, 7, smb.FileOpenIf, 0); st != statusInsufficientResources {
			t.Errorf("%v: create answered %#x, want STATUS_INSUFFICIENT_RESOURCES", sentinel, st)
		}
	}
	eng.failure.Store(nil)
	if _, st := c.Create("f", smb.FileReadData|smb.FileWriteData, 7, smb.FileOpenIf, 0); st != 0 {
		t.Errorf("create after the engine recovered: %#x", st)
	}
}

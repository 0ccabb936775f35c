package smbfile

import (
	"context"
	"fmt"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/cluster"
	"github.com/lazuli-storage/lazuli/internal/engine/memstore"
	"github.com/lazuli-storage/lazuli/internal/file"
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
	t.Cleanup(func() { eng.Close() })
	svc := file.New(eng, time.Now, func() string { return fmt.Sprint(time.Now().UnixNano()) })
	ctx := context.Background()
	if _, err := svc.CreateShare(ctx, file.CreateShareRequest{Ref: file.ShareRef{Account: "acct", Name: "share"}}); err != nil {
		t.Fatal(err)
	}
	mem := cluster.New(eng, cluster.Config{Holder: svc})
	if err := mem.Join(ctx, true); err != nil {
		t.Fatal(err)
	}
	srv := smb.New(smb.Config{Backend: New(svc, mem), Passwords: func(string) ([]string, bool) { return []string{"key"}, true }})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	c, err := smbtest.Dial(ln.Addr().String(), "acct", "key")
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

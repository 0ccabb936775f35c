package file

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/engine/logstore"
)

// A small file put over SMB (create, write, close) costs two fsyncs on the
// durable log engine: the close commits what a restart undoes anyway and
// waits for none, unless it deletes. REST sees the handle gone at once, and
// the file and its bytes survive a restart.
func TestSMBCloseCostsNoFsync(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	eng, err := logstore.Open(logstore.Options{Dir: dir, Sync: true})
	mustNil(t, err)
	svc := New(eng, time.Now, func() string { return "id" })
	_, err = svc.CreateShare(ctx, CreateShareRequest{Ref: ShareRef{Account: "a", Name: "s"}})
	mustNil(t, err)
	sr := ShareRef{Account: "a", Name: "s"}
	fsyncs := func() uint64 { return eng.SyncStats().Fsyncs }

	for i, name := range []string{"one.txt", "two.txt"} {
		start := fsyncs()
		res, err := svc.Open(ctx, OpenRequest{Share: sr, Path: name, Disposition: OpenIf,
			DesiredAccess: FileReadData | FileWriteData, ShareAccess: FileShareRead})
		mustNil(t, err)
		data, err := svc.Ingest(ctx, bytes.NewReader([]byte("small")), 5, nil)
		mustNil(t, err)
		_, err = svc.WriteAt(ctx, res.Handle, 0, data)
		mustNil(t, err)
		_, err = svc.Close(ctx, res.Handle)
		mustNil(t, err)
		if n := fsyncs() - start; n != 2 {
			t.Fatalf("file %d: create, write and close made %d fsyncs, want 2", i, n)
		}
		// The handle is gone for REST at once: a write is no sharing violation.
		_, err = svc.PutRange(ctx, PutRangeRequest{Ref: Ref{Account: "a", Share: "s", Path: name}, Start: 0, End: 4, Data: data})
		mustNil(t, err)
	}

	// A close that deletes waits for its fsync.
	res, err := svc.Open(ctx, OpenRequest{Share: sr, Path: "gone.txt", Disposition: OpenIf,
		DesiredAccess: FileReadData | Delete, ShareAccess: FileShareRead, DeleteOnClose: true})
	mustNil(t, err)
	start := fsyncs()
	_, err = svc.Close(ctx, res.Handle)
	mustNil(t, err)
	if n := fsyncs() - start; n != 1 {
		t.Fatalf("a deleting close made %d fsyncs, want 1", n)
	}
	mustNil(t, eng.Close())

	eng, err = logstore.Open(logstore.Options{Dir: dir, Sync: true})
	mustNil(t, err)
	defer eng.Close()
	svc = New(eng, time.Now, func() string { return "id" })
	for _, name := range []string{"one.txt", "two.txt"} {
		p, err := svc.Get(ctx, Ref{Account: "a", Share: "s", Path: name}, false, "")
		mustNil(t, err)
		if p.Size != 5 || p.Handles != 0 {
			t.Fatalf("%s after restart: size %d, handles %d", name, p.Size, p.Handles)
		}
	}
	_, err = svc.Get(ctx, Ref{Account: "a", Share: "s", Path: "gone.txt"}, false, "")
	if err == nil {
		t.Fatal("gone.txt survived its delete-on-close")
	}
}

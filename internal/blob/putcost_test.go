package blob

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/engine/logstore"
	"github.com/lazuli-storage/lazuli/storage"
)

// policyReads counts the reads of one account's delete retention policy
// made through it.
type policyReads struct {
	storage.Engine
	key []byte
	n   *int
}

func (e policyReads) Update(ctx context.Context, fn func(storage.Tx) error) error {
	return e.Engine.Update(ctx, func(tx storage.Tx) error { return fn(policyTx{tx, e.key, e.n}) })
}

// policyTx hides the engine's MultiGetter, so that storage.GetMany reads
// key by key through Get.
type policyTx struct {
	storage.Tx
	key []byte
	n   *int
}

func (t policyTx) Get(k []byte) ([]byte, error) {
	if bytes.Equal(k, t.key) {
		*t.n++
	}
	return t.Tx.Get(k)
}

// TestPutBlobPolicyReads pins that Put Blob over an existing blob reads
// the account's delete retention policy once (with the blob), whether
// the policy is off or on: keepOverwritten uses what was read.
func TestPutBlobPolicyReads(t *testing.T) {
	ctx := context.Background()
	e, err := logstore.Open(logstore.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var n int
	s := New(policyReads{e, policyKey("acct"), &n}, time.Now, func() string { return "00000000-0000-0000-0000-000000000001" })
	if _, err := s.CreateContainer(ctx, "acct", "cont", nil, ""); err != nil {
		t.Fatal(err)
	}
	put := func() {
		t.Helper()
		in, err := s.Ingest(ctx, bytes.NewReader([]byte("data")), true, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.PutBlob(ctx, PutBlobRequest{Ref: Ref{Account: "acct", Container: "cont", Name: "b", Snapshot: ""}, Type: BlockBlob, Data: in}); err != nil {
			t.Fatal(err)
		}
	}
	put()
	for _, on := range []bool{false, true} {
		if on {
			doc := []byte("<StorageServiceProperties><DeleteRetentionPolicy><Enabled>true</Enabled><Days>1</Days></DeleteRetentionPolicy></StorageServiceProperties>")
			if err := e.Update(ctx, func(tx storage.Tx) error { return storePolicy(tx, "acct", doc) }); err != nil {
				t.Fatal(err)
			}
		}
		n = 0
		put()
		if n != 1 {
			t.Errorf("policy on %v: Put Blob over a blob read the policy %d times, want 1", on, n)
		}
	}
}

package blob_test

import (
	"fmt"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"

	"github.com/lazuli-storage/lazuli/conformance/harness"
)

func TestBatch(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		for i := 0; i < 4; i++ {
			_, err := e.cc.NewBlockBlobClient(fmt.Sprint("dir/b", i)).Upload(ctx, body([]byte("x")), nil)
			must(t, err)
		}
		// One blob is leased: its delete fails inside the batch only.
		lc, err := lease.NewBlobClient(e.cc.NewBlockBlobClient("dir/b3"), nil)
		must(t, err)
		_, err = lc.AcquireLease(ctx, -1, nil)
		must(t, err)
		svc := e.c.ServiceClient()
		bb, err := svc.NewBatchBuilder()
		must(t, err)
		for i := 0; i < 4; i++ {
			must(t, bb.Delete(e.name, fmt.Sprint("dir/b", i), nil))
		}
		must(t, bb.Delete(e.name, "missing", nil))
		resp, err := svc.SubmitBatch(ctx, bb, nil)
		must(t, err)
		if len(resp.Responses) != 5 {
			t.Fatalf("%d responses", len(resp.Responses))
		}
		for i, r := range resp.Responses {
			switch i {
			case 3:
				if r.Error == nil || !isCode(r.Error, 412, "LeaseIdMissing") {
					t.Fatalf("leased delete: %v", r.Error)
				}
			case 4:
				if r.Error == nil || !isCode(r.Error, 404, "BlobNotFound") {
					t.Fatalf("missing delete: %v", r.Error)
				}
			default:
				if r.Error != nil {
					t.Fatalf("delete %d: %v", i, r.Error)
				}
			}
		}
		_, err = e.cc.NewBlobClient("dir/b0").GetProperties(ctx, nil)
		mustCode(t, err, 404, "BlobNotFound")
		_, err = e.cc.NewBlobClient("dir/b3").GetProperties(ctx, nil)
		must(t, err)
		// Container-level batch of Set Blob Tier.
		cb, err := e.cc.NewBatchBuilder()
		must(t, err)
		must(t, cb.SetTier("dir/b3", blob.AccessTierCool, &container.BatchSetTierOptions{SetTierOptions: blob.SetTierOptions{AccessConditions: &blob.AccessConditions{LeaseAccessConditions: &blob.LeaseAccessConditions{LeaseID: lc.LeaseID()}}}}))
		cr, err := e.cc.SubmitBatch(ctx, cb, nil)
		must(t, err)
		if len(cr.Responses) != 1 || cr.Responses[0].Error != nil {
			t.Fatalf("set tier batch: %+v", cr.Responses)
		}
		p, err := e.cc.NewBlobClient("dir/b3").GetProperties(ctx, nil)
		must(t, err)
		if *p.AccessTier != "Cool" {
			t.Fatalf("tier %s", *p.AccessTier)
		}
	})
}

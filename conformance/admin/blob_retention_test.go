package admin

import (
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/service"
)

// TestBlobRetentionFollowsTheClock: a blob deleted under a one-day delete
// retention is listed and restorable until the clock has moved a day, and
// gone after.
func TestBlobRetentionFollowsTheClock(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			emu := startTCP(t, e.opts(t))
			ctx := t.Context()
			c, _ := blobClient(t, emu, 0)
			if _, err := c.ServiceClient().SetProperties(ctx, &service.SetPropertiesOptions{
				DeleteRetentionPolicy: &service.RetentionPolicy{Enabled: to.Ptr(true), Days: to.Ptr[int32](1)}}); err != nil {
				t.Fatal(err)
			}
			if _, err := c.CreateContainer(ctx, "kept", nil); err != nil {
				t.Fatal(err)
			}
			if _, err := c.UploadBuffer(ctx, "kept", "b", []byte("data"), nil); err != nil {
				t.Fatal(err)
			}
			if _, err := c.DeleteBlob(ctx, "kept", "b", nil); err != nil {
				t.Fatal(err)
			}
			cc := c.ServiceClient().NewContainerClient("kept")
			deleted := func() []*container.BlobItem {
				pg, err := cc.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Include: container.ListBlobsInclude{Deleted: true}}).NextPage(ctx)
				if err != nil {
					t.Fatal(err)
				}
				return pg.Segment.BlobItems
			}
			advance(t, emu, "23h")
			if ds := deleted(); len(ds) != 1 || *ds[0].Properties.RemainingRetentionDays != 1 {
				t.Fatalf("23 hours on: %+v", ds)
			}
			advance(t, emu, "2h")
			if ds := deleted(); len(ds) != 0 {
				t.Errorf("a day and an hour on, still listed: %d", len(ds))
			}
			_, err := cc.NewBlobClient("b").Undelete(ctx, nil)
			if !bloberror.HasCode(err, bloberror.BlobNotFound) {
				t.Errorf("undelete after the retention: %v", err)
			}
		})
	}
}

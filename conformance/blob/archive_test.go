package blob_test

import (
	"net/http"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/lazuli-storage/lazuli/conformance/harness"
)

// TestArchiveTier pins the archive tier: an archived blob's properties
// stay readable but its content is not (409 BlobArchived on Get Blob and
// as a copy source); leaving the archive tier is a rehydration Azure
// accepts with 202 and reports as pending (x-ms-archive-status,
// x-ms-rehydrate-priority) until it completes; the tier change time is
// reported in properties and listings.
func TestArchiveTier(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		bb := e.cc.NewBlockBlobClient("cold")
		_, err := bb.Upload(ctx, body([]byte("frozen")), nil)
		must(t, err)
		_, err = bb.SetTier(ctx, blob.AccessTierArchive, nil)
		must(t, err)
		p, err := bb.GetProperties(ctx, nil)
		must(t, err)
		if *p.AccessTier != string(blob.AccessTierArchive) || p.AccessTierChangeTime == nil || p.AccessTierInferred != nil {
			t.Fatalf("archived properties: tier %v change %v inferred %v", *p.AccessTier, p.AccessTierChangeTime, p.AccessTierInferred)
		}
		_, err = bb.DownloadStream(ctx, nil)
		mustCode(t, err, 409, "BlobArchived")
		_, err = e.cc.NewBlobClient("copy").StartCopyFromURL(ctx, bb.URL(), nil)
		mustCode(t, err, 409, "BlobArchived")
		pager := e.cc.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{})
		page, err := pager.NextPage(ctx)
		must(t, err)
		item := page.Segment.BlobItems[0].Properties
		if *item.AccessTier != blob.AccessTierArchive || item.AccessTierChangeTime == nil {
			t.Fatalf("listing tier %v change %v", *item.AccessTier, item.AccessTierChangeTime)
		}
		// Rehydrate: 202, and the blob stays archived while the
		// rehydration is pending (TestRehydrationCompletes moves the clock
		// to its end).
		resp := raw(t, tg, http.MethodPut, e.name+"/cold?comp=tier", map[string]string{"x-ms-access-tier": "Hot", "x-ms-rehydrate-priority": "High"}, nil)
		if resp.StatusCode != 202 {
			t.Fatalf("rehydrate: %d %s", resp.StatusCode, resp.Header.Get("x-ms-error-code"))
		}
		p, err = bb.GetProperties(ctx, nil)
		must(t, err)
		if *p.AccessTier != "Archive" || p.ArchiveStatus == nil || *p.ArchiveStatus != "rehydrate-pending-to-hot" ||
			p.RehydratePriority == nil || *p.RehydratePriority != string(blob.RehydratePriorityHigh) {
			t.Fatalf("pending rehydration: tier %v archive status %v priority %v", *p.AccessTier, p.ArchiveStatus, p.RehydratePriority)
		}
		_, err = bb.DownloadStream(ctx, nil)
		mustCode(t, err, 409, "BlobArchived")
		page, err = e.cc.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{}).NextPage(ctx)
		must(t, err)
		if st := page.Segment.BlobItems[0].Properties.ArchiveStatus; st == nil || *st != blob.ArchiveStatusRehydratePendingToHot {
			t.Fatalf("listing archive status %v", st)
		}
		// Another tier while pending: 409 BlobBeingRehydrated.
		expectStatus(t, raw(t, tg, http.MethodPut, e.name+"/cold?comp=tier", map[string]string{"x-ms-access-tier": "Cool"}, nil), 409, "BlobBeingRehydrated")
		// Hot to cool is a plain tier change: 200.
		_, err = e.cc.NewBlockBlobClient("warm").Upload(ctx, body([]byte("x")), nil)
		must(t, err)
		resp = raw(t, tg, http.MethodPut, e.name+"/warm?comp=tier", map[string]string{"x-ms-access-tier": "Cool"}, nil)
		if resp.StatusCode != 200 {
			t.Fatalf("hot to cool: %d", resp.StatusCode)
		}
		expectStatus(t, raw(t, tg, http.MethodPut, e.name+"/cold?comp=tier", map[string]string{"x-ms-access-tier": "Hot", "x-ms-rehydrate-priority": "Urgent"}, nil), 400, "InvalidHeaderValue")
	})
}

package blob_test

import (
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/service"

	"github.com/lazuli-storage/lazuli/conformance/harness"
	"github.com/lazuli-storage/lazuli/emulator"
)

// softDeleteClient starts an in-process lazuli whose clock the test moves
// (soft delete is an account-wide setting, so it gets an account of its
// own) and turns blob soft delete on through the SDK.
func softDeleteClient(t *testing.T, days int32) (*azblob.Client, *fakeClock) {
	t.Helper()
	clk := &fakeClock{t: time.Now()}
	emu, err := emulator.Start(emulator.Options{InMemory: true, NoListen: true, Now: clk.Now})
	must(t, err)
	t.Cleanup(func() { emu.Close() })
	cred, err := azblob.NewSharedKeyCredential(emulator.Account, emulator.Key)
	must(t, err)
	c, err := azblob.NewClientWithSharedKeyCredential("http://127.0.0.1:10000/"+emulator.Account+"/", cred,
		&azblob.ClientOptions{ClientOptions: azcore.ClientOptions{Transport: emu.Transport(), Retry: policy.RetryOptions{MaxRetries: -1}}})
	must(t, err)
	_, err = c.ServiceClient().SetProperties(harness.Ctx(t), &service.SetPropertiesOptions{
		DeleteRetentionPolicy: &service.RetentionPolicy{Enabled: ptr(true), Days: ptr(days), AllowPermanentDelete: ptr(true)}})
	must(t, err)
	return c, clk
}

func listWith(t *testing.T, cc *container.Client, inc container.ListBlobsInclude) []*container.BlobItem {
	t.Helper()
	pg, err := cc.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Include: inc}).NextPage(harness.Ctx(t))
	must(t, err)
	return pg.Segment.BlobItems
}

// TestBlobSoftDelete drives blob soft delete through azblob: the policy
// reads back, a deleted blob and its snapshot are listed with
// include=deleted and restored whole by Undelete, an overwrite keeps the
// old state as a soft-deleted snapshot, and deletetype=permanent removes
// one (the end of retention is in the admin clock tests).
func TestBlobSoftDelete(t *testing.T) {
	c, clk := softDeleteClient(t, 2)
	ctx := harness.Ctx(t)
	p, err := c.ServiceClient().GetProperties(ctx, nil)
	must(t, err)
	if r := p.DeleteRetentionPolicy; r == nil || !*r.Enabled || *r.Days != 2 {
		t.Fatalf("DeleteRetentionPolicy reads back as %+v", r)
	}
	_, err = c.CreateContainer(ctx, "soft", nil)
	must(t, err)
	cc := c.ServiceClient().NewContainerClient("soft")
	bb := cc.NewBlockBlobClient("b")
	_, err = bb.Upload(ctx, body([]byte("first")), &blockblob.UploadOptions{Metadata: map[string]*string{"Kept": ptr("yes")}})
	must(t, err)
	snap, err := bb.CreateSnapshot(ctx, nil)
	must(t, err)
	clk.Add(time.Minute)
	// An overwrite keeps "first" as a soft-deleted snapshot.
	_, err = bb.Upload(ctx, body([]byte("second")), &blockblob.UploadOptions{Metadata: map[string]*string{"Kept": ptr("yes")}})
	must(t, err)
	_, err = bb.Delete(ctx, nil)
	mustCode(t, err, 409, "SnapshotsPresent")
	_, err = bb.Delete(ctx, &blob.DeleteOptions{DeleteSnapshots: ptr(blob.DeleteSnapshotsOptionTypeInclude)})
	must(t, err)
	_, err = bb.GetProperties(ctx, nil)
	mustCode(t, err, 404, "BlobNotFound")
	if items := listWith(t, cc, container.ListBlobsInclude{Snapshots: true}); len(items) != 0 {
		t.Fatalf("%d items listed without include=deleted", len(items))
	}
	items := listWith(t, cc, container.ListBlobsInclude{Snapshots: true, Deleted: true, Metadata: true})
	if len(items) != 3 {
		t.Fatalf("listed %d items, want the snapshot, the overwritten state and the blob", len(items))
	}
	for _, it := range items {
		if it.Deleted == nil || !*it.Deleted || it.Properties.DeletedTime == nil || it.Properties.RemainingRetentionDays == nil ||
			*it.Properties.RemainingRetentionDays != 2 || it.Metadata["kept"] == nil {
			t.Fatalf("deleted item %s@%v: deleted %v, time %v, days %v, metadata %v", *it.Name, it.Snapshot, it.Deleted,
				it.Properties.DeletedTime, it.Properties.RemainingRetentionDays, it.Metadata)
		}
	}
	if items[0].Snapshot == nil || *items[0].Snapshot != *snap.Snapshot || items[2].Snapshot != nil {
		t.Fatalf("order: %v, %v, %v", items[0].Snapshot, items[1].Snapshot, items[2].Snapshot)
	}
	overwritten := *items[1].Snapshot
	// deletetype=permanent removes the overwritten state for good.
	ow, err := bb.WithSnapshot(overwritten)
	must(t, err)
	_, err = ow.Delete(ctx, &blob.DeleteOptions{BlobDeleteType: ptr(blob.DeleteTypePermanent)})
	must(t, err)
	_, err = bb.Undelete(ctx, nil)
	must(t, err)
	if got := download(t, bb.BlobClient()); got != "second" {
		t.Fatalf("restored blob reads %q", got)
	}
	sc, err := bb.WithSnapshot(*snap.Snapshot)
	must(t, err)
	if got := download(t, sc.BlobClient()); got != "first" {
		t.Fatalf("restored snapshot reads %q", got)
	}
	if items := listWith(t, cc, container.ListBlobsInclude{Snapshots: true, Deleted: true}); len(items) != 2 {
		t.Fatalf("after undelete %d items listed, want 2", len(items))
	}
}

// TestBlobSoftDeleteWire pins what the SDK hides: Delete Blob answers
// x-ms-delete-type-permanent false while soft delete keeps the blob, and
// deletetype takes only "permanent".
func TestBlobSoftDeleteWire(t *testing.T) {
	c, _ := softDeleteClient(t, 1)
	ctx := harness.Ctx(t)
	_, err := c.CreateContainer(ctx, "wire", nil)
	must(t, err)
	bb := c.ServiceClient().NewContainerClient("wire").NewBlockBlobClient("b")
	_, err = bb.Upload(ctx, body([]byte("x")), nil)
	must(t, err)
	var resp *http.Response
	_, err = bb.Delete(runtime.WithCaptureResponse(ctx, &resp), nil)
	must(t, err)
	if v := resp.Header.Get("x-ms-delete-type-permanent"); v != "false" {
		t.Fatalf("x-ms-delete-type-permanent %q, want false", v)
	}
	_, err = bb.Undelete(ctx, nil)
	must(t, err)
	snap, err := bb.CreateSnapshot(ctx, nil)
	must(t, err)
	sc, err := bb.WithSnapshot(*snap.Snapshot)
	must(t, err)
	_, err = sc.Delete(ctx, &blob.DeleteOptions{BlobDeleteType: ptr(blob.DeleteType("soft"))})
	mustCode(t, err, 400, "InvalidQueryParameterValue")
	_, err = sc.Delete(ctx, &blob.DeleteOptions{BlobDeleteType: ptr(blob.DeleteTypePermanent)})
	mustCode(t, err, 404, "BlobNotFound")
	_, err = bb.Delete(ctx, &blob.DeleteOptions{BlobDeleteType: ptr(blob.DeleteTypePermanent)})
	mustCode(t, err, 400, "InvalidQueryParameterValue")
}

func download(t *testing.T, bc *blob.Client) string {
	t.Helper()
	r, err := bc.DownloadStream(harness.Ctx(t), nil)
	must(t, err)
	data, err := io.ReadAll(r.Body)
	must(t, err)
	return string(data)
}

// TestContainerSoftDelete drives container soft delete through azblob on
// every engine (lazuli started with --containerDeleteRetentionDays 3): a
// deleted container is listed with include=deleted and its version, and
// Restore Container brings it back with its blobs.
func TestContainerSoftDelete(t *testing.T) {
	harness.ForEachWith(t, func(o *emulator.Options) { o.ContainerDeleteRetentionDays = 3 }, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		c := client(t, tg)
		name := harness.UniqueName("c")
		_, err := c.CreateContainer(ctx, name, nil)
		must(t, err)
		_, err = c.UploadBuffer(ctx, name, "kept", []byte("kept data"), nil)
		must(t, err)
		_, err = c.DeleteContainer(ctx, name, nil)
		must(t, err)
		svc := c.ServiceClient()
		_, err = svc.NewContainerClient(name).GetProperties(ctx, nil)
		mustCode(t, err, 404, "ContainerNotFound")
		pg, err := svc.NewListContainersPager(&service.ListContainersOptions{Prefix: ptr(name)}).NextPage(ctx)
		must(t, err)
		if len(pg.ContainerItems) != 0 {
			t.Fatal("deleted container listed without include=deleted")
		}
		pg, err = svc.NewListContainersPager(&service.ListContainersOptions{Prefix: ptr(name), Include: service.ListContainersInclude{Deleted: true}}).NextPage(ctx)
		must(t, err)
		if len(pg.ContainerItems) != 1 {
			t.Fatalf("listed %d containers with include=deleted", len(pg.ContainerItems))
		}
		it := pg.ContainerItems[0]
		if it.Deleted == nil || !*it.Deleted || it.Version == nil || it.Properties.DeletedTime == nil ||
			it.Properties.RemainingRetentionDays == nil || *it.Properties.RemainingRetentionDays != 3 {
			t.Fatalf("deleted container: deleted %v, version %v, %+v", it.Deleted, it.Version, it.Properties)
		}
		_, err = svc.RestoreContainer(ctx, name, "0000000000000000", nil)
		mustCode(t, err, 404, "ContainerNotFound")
		_, err = svc.RestoreContainer(ctx, name, *it.Version, nil)
		must(t, err)
		if got := download(t, svc.NewContainerClient(name).NewBlobClient("kept")); got != "kept data" {
			t.Fatalf("restored blob reads %q", got)
		}
		// A restored version is no longer a deleted container.
		_, err = svc.RestoreContainer(ctx, name, *it.Version, nil)
		mustCode(t, err, 404, "ContainerNotFound")
	})
}

package blob_test

import (
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"

	"github.com/lazuli-storage/lazuli/conformance/harness"
	"github.com/lazuli-storage/lazuli/emulator"
)

// fakeClock starts at the real time (Shared Key checks request age) and
// moves only when told.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// TestLeaseTimeDriven drives the time-driven lease cells (fixed lease
// expiry, end of a break period) through the SDK against an in-process
// lazuli whose clock the test moves.
func TestLeaseTimeDriven(t *testing.T) {
	clk := &fakeClock{t: time.Now()}
	emu, err := emulator.Start(emulator.Options{InMemory: true, NoListen: true, Now: clk.Now})
	must(t, err)
	t.Cleanup(func() { emu.Close() })
	tr := emu.Transport()
	cred, err := azblob.NewSharedKeyCredential(emulator.Account, emulator.Key)
	must(t, err)
	c, err := azblob.NewClientWithSharedKeyCredential("http://127.0.0.1:10000/"+emulator.Account+"/", cred,
		&azblob.ClientOptions{ClientOptions: azcore.ClientOptions{Transport: tr, Retry: policy.RetryOptions{MaxRetries: -1}}})
	must(t, err)
	ctx := harness.Ctx(t)
	_, err = c.CreateContainer(ctx, "clock", nil)
	must(t, err)
	bb := c.ServiceClient().NewContainerClient("clock").NewBlockBlobClient("b")
	_, err = bb.Upload(ctx, body([]byte("x")), nil)
	must(t, err)
	lc, err := lease.NewBlobClient(bb, &lease.BlobClientOptions{LeaseID: ptr(idA)})
	must(t, err)
	state := func() string {
		p, err := bb.GetProperties(ctx, nil)
		must(t, err)
		return string(*p.LeaseState) + "/" + string(*p.LeaseStatus)
	}
	_, err = lc.AcquireLease(ctx, 15, nil)
	must(t, err)
	clk.Add(14 * time.Second)
	if s := state(); s != "leased/locked" {
		t.Fatalf("before expiry: %s", s)
	}
	clk.Add(time.Second)
	if s := state(); s != "expired/unlocked" {
		t.Fatalf("after expiry: %s", s)
	}
	// Expired: a write without the id is fine; acquire by anyone works.
	_, err = bb.SetMetadata(ctx, nil, &blob.SetMetadataOptions{AccessConditions: &blob.AccessConditions{LeaseAccessConditions: &blob.LeaseAccessConditions{LeaseID: ptr(idA)}}})
	mustCode(t, err, 412, "LeaseNotPresentWithBlobOperation")
	// Renew of the expired lease (no write in between) brings it back.
	_, err = lc.RenewLease(ctx, nil)
	must(t, err)
	if s := state(); s != "leased/locked" {
		t.Fatalf("after renew: %s", s)
	}
	// Break with a period: breaking until the period ends, then broken.
	_, err = lc.ReleaseLease(ctx, nil)
	must(t, err)
	_, err = lc.AcquireLease(ctx, -1, nil)
	must(t, err)
	br, err := lc.BreakLease(ctx, &lease.BlobBreakOptions{BreakPeriod: ptr(int32(10))})
	must(t, err)
	if *br.LeaseTime != 10 {
		t.Fatalf("lease time %d", *br.LeaseTime)
	}
	clk.Add(9 * time.Second)
	if s := state(); s != "breaking/locked" {
		t.Fatalf("during break: %s", s)
	}
	_, err = bb.SetMetadata(ctx, nil, nil)
	mustCode(t, err, 412, "LeaseIdMissing")
	clk.Add(time.Second)
	if s := state(); s != "broken/unlocked" {
		t.Fatalf("after break period: %s", s)
	}
	_, err = bb.SetMetadata(ctx, nil, nil)
	must(t, err)
	if s := state(); s != "available/unlocked" {
		t.Fatalf("after write through broken lease: %s", s)
	}
	// Fixed lease broken without a period breaks at its expiry.
	_, err = lc.AcquireLease(ctx, 30, nil)
	must(t, err)
	clk.Add(10 * time.Second)
	br, err = lc.BreakLease(ctx, nil)
	must(t, err)
	if *br.LeaseTime != 20 {
		t.Fatalf("lease time %d", *br.LeaseTime)
	}
}

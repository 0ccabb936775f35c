package blob_test

import (
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/lazuli-storage/lazuli/conformance/harness"
	"github.com/lazuli-storage/lazuli/emulator"
)

// TestEncryptionScopes runs a lazuli whose accounts have the encryption
// scopes "scope1" and "scope2" (--encryptionScopes): a blob written with a
// scope reports it on the write, on reads and in listings; a container's
// default scope applies to blobs written without one, and with deny
// override another scope is refused; a scope the account lacks is 400
// InvalidHeaderValue. Without a scope nothing reports one, and containers
// report the account key as their default.
func TestEncryptionScopes(t *testing.T) {
	emu, err := emulator.Start(emulator.Options{InMemory: true, NoListen: true, EncryptionScopes: []string{"scope1", "scope2"}})
	must(t, err)
	t.Cleanup(func() { emu.Close() })
	cred, err := azblob.NewSharedKeyCredential(emulator.Account, emulator.Key)
	must(t, err)
	opts := &azblob.ClientOptions{}
	opts.Transport = emu.Transport()
	opts.Retry.MaxRetries = -1
	c, err := azblob.NewClientWithSharedKeyCredential(emu.Endpoint(emulator.Blob)+"/", cred, opts)
	must(t, err)
	ctx := harness.Ctx(t)
	_, err = c.CreateContainer(ctx, "plain", nil)
	must(t, err)
	plain := c.ServiceClient().NewContainerClient("plain")
	p, err := plain.GetProperties(ctx, nil)
	must(t, err)
	if *p.DefaultEncryptionScope != "$account-encryption-key" || *p.DenyEncryptionScopeOverride {
		t.Fatalf("plain container %v %v", *p.DefaultEncryptionScope, *p.DenyEncryptionScopeOverride)
	}
	up, err := plain.NewBlockBlobClient("scoped").Upload(ctx, body([]byte("x")), &blockblob.UploadOptions{CPKScopeInfo: &blob.CPKScopeInfo{EncryptionScope: ptr("scope1")}})
	must(t, err)
	if up.EncryptionScope == nil || *up.EncryptionScope != "scope1" {
		t.Fatalf("upload echo %v", up.EncryptionScope)
	}
	bp, err := plain.NewBlobClient("scoped").GetProperties(ctx, nil)
	must(t, err)
	if bp.EncryptionScope == nil || *bp.EncryptionScope != "scope1" {
		t.Fatalf("properties %v", bp.EncryptionScope)
	}
	up, err = plain.NewBlockBlobClient("unscoped").Upload(ctx, body([]byte("x")), nil)
	must(t, err)
	if up.EncryptionScope != nil {
		t.Fatalf("unscoped upload reports %v", *up.EncryptionScope)
	}
	_, err = plain.NewBlockBlobClient("bad").Upload(ctx, body([]byte("x")), &blockblob.UploadOptions{CPKScopeInfo: &blob.CPKScopeInfo{EncryptionScope: ptr("nope")}})
	mustCode(t, err, 400, "InvalidHeaderValue")
	page, err := plain.NewListBlobsFlatPager(nil).NextPage(ctx)
	must(t, err)
	for _, it := range page.Segment.BlobItems {
		if got := it.Properties.EncryptionScope; (*it.Name == "scoped") != (got != nil && *got == "scope1") {
			t.Fatalf("listing %s: %v", *it.Name, got)
		}
	}

	// A container default scope, with deny override.
	_, err = c.CreateContainer(ctx, "locked", &container.CreateOptions{CPKScopeInfo: &container.CPKScopeInfo{
		DefaultEncryptionScope: ptr("scope2"), PreventEncryptionScopeOverride: ptr(true)}})
	must(t, err)
	locked := c.ServiceClient().NewContainerClient("locked")
	p, err = locked.GetProperties(ctx, nil)
	must(t, err)
	if *p.DefaultEncryptionScope != "scope2" || !*p.DenyEncryptionScopeOverride {
		t.Fatalf("locked container %v %v", *p.DefaultEncryptionScope, *p.DenyEncryptionScopeOverride)
	}
	up, err = locked.NewBlockBlobClient("b").Upload(ctx, body([]byte("x")), nil)
	must(t, err)
	if up.EncryptionScope == nil || *up.EncryptionScope != "scope2" {
		t.Fatalf("default scope echo %v", up.EncryptionScope)
	}
	_, err = locked.NewBlockBlobClient("b").Upload(ctx, body([]byte("x")), &blockblob.UploadOptions{CPKScopeInfo: &blob.CPKScopeInfo{EncryptionScope: ptr("scope1")}})
	mustCode(t, err, 400, "InvalidHeaderValue")
	_, err = c.CreateContainer(ctx, "unknown", &container.CreateOptions{CPKScopeInfo: &container.CPKScopeInfo{DefaultEncryptionScope: ptr("nope")}})
	mustCode(t, err, 400, "InvalidHeaderValue")
	lp, err := c.NewListContainersPager(nil).NextPage(ctx)
	must(t, err)
	for _, it := range lp.ContainerItems {
		if *it.Name == "locked" && (*it.Properties.DefaultEncryptionScope != "scope2" || !*it.Properties.PreventEncryptionScopeOverride) {
			t.Fatalf("list containers %v", *it.Properties.DefaultEncryptionScope)
		}
	}
}

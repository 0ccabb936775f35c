package blob_test

import (
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/appendblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/pageblob"

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

// TestEncryptionScopeOnLaterWrites: writes to a blob that has an
// encryption scope (Append Block, Put Page, Set Blob Metadata) report it,
// as Azure answers every write to such a blob with x-ms-encryption-scope.
func TestEncryptionScopeOnLaterWrites(t *testing.T) {
	emu, err := emulator.Start(emulator.Options{InMemory: true, NoListen: true, EncryptionScopes: []string{"scope1"}})
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
	_, err = c.CreateContainer(ctx, "later", nil)
	must(t, err)
	ctr := c.ServiceClient().NewContainerClient("later")
	scope := &blob.CPKScopeInfo{EncryptionScope: ptr("scope1")}
	want := func(what string, got *string) {
		t.Helper()
		if got == nil || *got != "scope1" {
			t.Fatalf("%s reports encryption scope %v, want scope1", what, got)
		}
	}

	ab := ctr.NewAppendBlobClient("log")
	_, err = ab.Create(ctx, &appendblob.CreateOptions{CPKScopeInfo: scope})
	must(t, err)
	ar, err := ab.AppendBlock(ctx, body([]byte("line\n")), &appendblob.AppendBlockOptions{CPKScopeInfo: scope})
	must(t, err)
	want("Append Block", ar.EncryptionScope)

	pb := ctr.NewPageBlobClient("disk")
	_, err = pb.Create(ctx, 1024, &pageblob.CreateOptions{CPKScopeInfo: scope})
	must(t, err)
	pr, err := pb.UploadPages(ctx, body(make([]byte, 512)), blob.HTTPRange{Offset: 0, Count: 512}, &pageblob.UploadPagesOptions{CPKScopeInfo: scope})
	must(t, err)
	want("Put Page", pr.EncryptionScope)

	mr, err := ctr.NewBlobClient("log").SetMetadata(ctx, map[string]*string{"k": ptr("v")}, &blob.SetMetadataOptions{CPKScopeInfo: scope})
	must(t, err)
	want("Set Blob Metadata", mr.EncryptionScope)

	// A blob without a scope reports none.
	plain := ctr.NewAppendBlobClient("plain")
	_, err = plain.Create(ctx, nil)
	must(t, err)
	ar, err = plain.AppendBlock(ctx, body([]byte("x")), nil)
	must(t, err)
	if ar.EncryptionScope != nil {
		t.Fatalf("Append Block to an unscoped blob reports %v", *ar.EncryptionScope)
	}
}

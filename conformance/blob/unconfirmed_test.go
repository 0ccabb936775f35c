package blob_test

// Behaviours the protocol digest marks UNCONFIRMED, settled against the
// reference emulator where it answered consistently, else chosen; each test
// is named after the decision it pins.

import (
	"net/http"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"

	"github.com/lazuli-storage/lazuli/conformance/harness"
)

// Reference emulator: Set Blob Metadata with If-Match: * on a missing blob
// answers 404 BlobNotFound; existence is checked before conditions.
func TestUnconfirmedIfMatchOnMissingBlobIs404(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		resp := raw(t, tg, http.MethodPut, e.name+"/missing?comp=metadata", map[string]string{"If-Match": "*"}, nil)
		expectStatus(t, resp, 404, "BlobNotFound")
	})
}

// Reference emulator: If-None-Match: * on Get Blob / Get Blob Properties is
// 400 UnsatisfiableCondition.
func TestUnconfirmedIfNoneMatchStarOnReadIsUnsatisfiable(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		_, err := e.cc.NewBlockBlobClient("b").Upload(harness.Ctx(t), body([]byte("x")), nil)
		must(t, err)
		resp := raw(t, tg, http.MethodGet, e.name+"/b", map[string]string{"If-None-Match": "*"}, nil)
		expectStatus(t, resp, 400, "UnsatisfiableCondition")
	})
}

// Chosen: If-None-Match: * on a write that is not a create fails with 412
// ConditionNotMet when the blob exists (HTTP semantics; creates answer 409).
func TestUnconfirmedIfNoneMatchStarOnExistingBlobWriteIs412(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		bb := e.cc.NewBlockBlobClient("b")
		_, err := bb.Upload(harness.Ctx(t), body([]byte("x")), nil)
		must(t, err)
		_, err = bb.SetMetadata(harness.Ctx(t), nil, &blob.SetMetadataOptions{AccessConditions: ifNoneMatch(azcore.ETagAny)})
		mustCode(t, err, 412, "ConditionNotMet")
	})
}

// Chosen: conditional headers are evaluated before the lease, so a write
// that fails both reports the condition.
func TestUnconfirmedConditionCheckedBeforeLease(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		bb := e.cc.NewBlockBlobClient("b")
		_, err := bb.Upload(ctx, body([]byte("x")), nil)
		must(t, err)
		lc, err := lease.NewBlobClient(bb, nil)
		must(t, err)
		_, err = lc.AcquireLease(ctx, -1, nil)
		must(t, err)
		_, err = bb.SetMetadata(ctx, nil, &blob.SetMetadataOptions{AccessConditions: ifMatch(`"0x1"`)})
		mustCode(t, err, 412, "ConditionNotMet")
	})
}

// Reference emulator: an operation naming the id of a broken (or expired)
// lease answers 412 LeaseNotPresentWithBlobOperation (not LeaseLost).
func TestUnconfirmedStaleLeaseIdIsLeaseNotPresent(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		ab := e.cc.NewAppendBlobClient("a")
		_, err := ab.Create(ctx, nil)
		must(t, err)
		lc, err := lease.NewBlobClient(ab, &lease.BlobClientOptions{LeaseID: ptr(idA)})
		must(t, err)
		_, err = lc.AcquireLease(ctx, -1, nil)
		must(t, err)
		_, err = lc.BreakLease(ctx, &lease.BlobBreakOptions{BreakPeriod: ptr(int32(0))})
		must(t, err)
		resp := raw(t, tg, http.MethodPut, e.name+"/a?comp=appendblock", map[string]string{"x-ms-lease-id": idA}, []byte("x"))
		expectStatus(t, resp, 412, "LeaseNotPresentWithBlobOperation")
		resp = raw(t, tg, http.MethodGet, e.name+"/a", map[string]string{"x-ms-lease-id": idA}, nil)
		expectStatus(t, resp, 412, "LeaseNotPresentWithBlobOperation")
	})
}

// Reference emulator: Put Block on a page or append blob is 409
// InvalidBlobType.
func TestUnconfirmedPutBlockOnPageBlobIsInvalidBlobType(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		_, err := e.cc.NewPageBlobClient("p").Create(harness.Ctx(t), 1024, nil)
		must(t, err)
		_, err = e.cc.NewBlockBlobClient("p").StageBlock(harness.Ctx(t), blockID(1), body([]byte("x")), nil)
		mustCode(t, err, 409, "InvalidBlobType")
	})
}

// Chosen (as the reference emulator): a deleted container's name can be
// used again at once; lazuli does not emulate ContainerBeingDeleted.
func TestUnconfirmedContainerNameReusableImmediately(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		c := client(t, tg)
		ctx := harness.Ctx(t)
		name := harness.UniqueName("re")
		_, err := c.CreateContainer(ctx, name, nil)
		must(t, err)
		_, err = c.DeleteContainer(ctx, name, nil)
		must(t, err)
		_, err = c.CreateContainer(ctx, name, nil)
		must(t, err)
	})
}

// Chosen: a conditional date header that is not an HTTP date is ignored
// (RFC 7232); two values of one date header are 400.
func TestUnconfirmedUnparsableConditionDateIgnored(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		_, err := e.cc.NewBlockBlobClient("b").Upload(harness.Ctx(t), body([]byte("x")), nil)
		must(t, err)
		resp := raw(t, tg, http.MethodGet, e.name+"/b", map[string]string{"If-Unmodified-Since": "yesterday"}, nil)
		expectStatus(t, resp, 200, "")
	})
}

// Chosen: include=snapshots with a delimiter is accepted; snapshots are
// listed oldest first, each base blob after its snapshots.
func TestUnconfirmedSnapshotsWithDelimiterListedBeforeBase(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		bb := e.cc.NewBlockBlobClient("d/b")
		_, err := bb.Upload(ctx, body([]byte("x")), nil)
		must(t, err)
		s1, err := bb.CreateSnapshot(ctx, nil)
		must(t, err)
		p := e.cc.NewListBlobsHierarchyPager("/", &container.ListBlobsHierarchyOptions{Prefix: ptr("d/"), Include: container.ListBlobsInclude{Snapshots: true}})
		page, err := p.NextPage(ctx)
		must(t, err)
		items := page.Segment.BlobItems
		if len(items) != 2 || items[0].Snapshot == nil || *items[0].Snapshot != *s1.Snapshot || (items[1].Snapshot != nil && *items[1].Snapshot != "") {
			t.Fatalf("listing %d items", len(items))
		}
	})
}

// Chosen: Set Blob Tier is a write for lease purposes (needs the id of an
// active lease) and changes neither ETag nor Last-Modified.
func TestUnconfirmedSetTierNeedsLeaseId(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		bb := e.cc.NewBlockBlobClient("b")
		up, err := bb.Upload(ctx, body([]byte("x")), nil)
		must(t, err)
		_, err = bb.SetTier(ctx, blob.AccessTierCool, nil)
		must(t, err)
		p, err := bb.GetProperties(ctx, nil)
		must(t, err)
		if *p.ETag != *up.ETag || *p.AccessTier != "Cool" {
			t.Fatalf("tier %v etag changed %v", *p.AccessTier, *p.ETag != *up.ETag)
		}
		lc, err := lease.NewBlobClient(bb, nil)
		must(t, err)
		_, err = lc.AcquireLease(ctx, -1, nil)
		must(t, err)
		_, err = bb.SetTier(ctx, blob.AccessTierHot, nil)
		mustCode(t, err, 412, "LeaseIdMissing")
	})
}

// Chosen (Set Blob Tags docs): at most 10 tags, keys 1..128 and values
// 0..256 characters; more is 400 InvalidTag.
func TestUnconfirmedTagLimits(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		bb := e.cc.NewBlockBlobClient("b")
		_, err := bb.Upload(ctx, body([]byte("x")), nil)
		must(t, err)
		ten := map[string]string{}
		for i := 0; i < 10; i++ {
			ten[string(rune('a'+i))] = strings.Repeat("v", 256)
		}
		_, err = bb.SetTags(ctx, ten, nil)
		must(t, err)
		ten["k"] = "v"
		_, err = bb.SetTags(ctx, ten, nil)
		mustCode(t, err, 400, "InvalidTag")
		_, err = bb.SetTags(ctx, map[string]string{strings.Repeat("k", 129): "v"}, nil)
		mustCode(t, err, 400, "InvalidTag")
		_, err = bb.SetTags(ctx, map[string]string{"k": strings.Repeat("v", 257)}, nil)
		mustCode(t, err, 400, "InvalidTag")
	})
}

// Chosen: an unmet x-ms-source-if-tags on a copy is 412
// SourceConditionNotMet, like the other source conditions.
func TestUnconfirmedSourceIfTagsIsSourceConditionNotMet(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		src := e.cc.NewBlockBlobClient("src")
		_, err := src.Upload(ctx, body([]byte("x")), nil)
		must(t, err)
		resp := raw(t, tg, http.MethodPut, e.name+"/dst", map[string]string{"x-ms-copy-source": src.URL(), "x-ms-source-if-tags": `a = 'b'`}, nil)
		expectStatus(t, resp, 412, "SourceConditionNotMet")
	})
}

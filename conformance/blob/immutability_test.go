package blob_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/pageblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/service"
	dlfile "github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/file"

	"github.com/lazuli-storage/lazuli/conformance/harness"
	"github.com/lazuli-storage/lazuli/emulator"
)

// versionedAdmin is versioned with the admin listener, whose test clock
// the immutability tests move.
func versionedAdmin(o *emulator.Options) { versioned(o); o.Admin = true }

// clockState is the admin listener's /clock answer.
type clockState struct {
	OffsetMs int64 `json:"offsetMs"`
}

// advanceClock moves the target's clock forward by d (admin /clock) and
// waits until every instance of the target sees it (instances sharing a
// database read the offset back periodically).
func advanceClock(t *testing.T, tg *harness.Target, d time.Duration) {
	t.Helper()
	call := func(method, url, payload string) clockState {
		t.Helper()
		req, err := http.NewRequestWithContext(harness.Ctx(t), method, url, strings.NewReader(payload))
		must(t, err)
		resp, err := http.DefaultClient.Do(req)
		must(t, err)
		defer resp.Body.Close()
		var st clockState
		if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&st) != nil {
			t.Fatalf("%s %s: %d", method, url, resp.StatusCode)
		}
		return st
	}
	payload, _ := json.Marshal(map[string]string{"advance": d.String()})
	want := call(http.MethodPost, tg.Emulator.AdminURL()+"/clock", string(payload)).OffsetMs
	instances := []*emulator.Emulator{tg.Emulator}
	if rr, ok := tg.Transport.(*harness.RoundRobin); ok {
		instances = rr.Instances
	}
	for _, emu := range instances {
		deadline := time.Now().Add(10 * time.Second)
		for call(http.MethodGet, emu.AdminURL()+"/clock", "").OffsetMs != want {
			if time.Now().After(deadline) {
				t.Fatalf("instance %s does not see the clock moved", emu.AdminURL())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// immutableContainer creates a container with version-level immutability
// support (raw: the SDK's Create Container has no option for it) and
// returns its client.
func immutableContainer(t *testing.T, tg *harness.Target) *container.Client {
	t.Helper()
	name := harness.UniqueName("worm")
	resp := raw(t, tg, http.MethodPut, name+"?restype=container", map[string]string{"x-ms-immutable-storage-with-versioning-enabled": "true"}, nil)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create immutable container: %d %s", resp.StatusCode, resp.Header.Get("x-ms-error-code"))
	}
	return client(t, tg).ServiceClient().NewContainerClient(name)
}

// TestImmutableStorageWithVersioningContainer: Create Container with
// x-ms-immutable-storage-with-versioning-enabled keeps the setting, which
// Get Container Properties and List Containers return; a container
// without it says nothing of it.
func TestImmutableStorageWithVersioningContainer(t *testing.T) {
	harness.ForEachWith(t, versioned, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		cc := immutableContainer(t, tg)
		p, err := cc.GetProperties(ctx, nil)
		must(t, err)
		if p.IsImmutableStorageWithVersioningEnabled == nil || !*p.IsImmutableStorageWithVersioningEnabled {
			t.Fatalf("properties: %v", p.IsImmutableStorageWithVersioningEnabled)
		}
		name := strings.TrimPrefix(cc.URL()[strings.LastIndex(cc.URL(), "/"):], "/")
		pg, err := client(t, tg).NewListContainersPager(&service.ListContainersOptions{Prefix: &name}).NextPage(ctx)
		must(t, err)
		if len(pg.ContainerItems) != 1 || pg.ContainerItems[0].Properties.IsImmutableStorageWithVersioningEnabled == nil ||
			!*pg.ContainerItems[0].Properties.IsImmutableStorageWithVersioningEnabled {
			t.Fatalf("listed: %+v", pg.ContainerItems)
		}
		e := newEnv(t, tg)
		pp, err := e.cc.GetProperties(ctx, nil)
		must(t, err)
		if pp.IsImmutableStorageWithVersioningEnabled != nil && *pp.IsImmutableStorageWithVersioningEnabled {
			t.Fatal("a plain container says it has immutable storage")
		}
	})
}

// TestImmutableContainerNeedsVersioning pins lazuli's answer to a
// container asking for version-level immutability in an account without
// versioning (Azure's prerequisite): 400 InvalidHeaderValue.
func TestImmutableContainerNeedsVersioning(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		resp := raw(t, tg, http.MethodPut, harness.UniqueName("worm")+"?restype=container",
			map[string]string{"x-ms-immutable-storage-with-versioning-enabled": "true"}, nil)
		if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("x-ms-error-code") != "InvalidHeaderValue" {
			t.Fatalf("got %d %s", resp.StatusCode, resp.Header.Get("x-ms-error-code"))
		}
	})
}

// TestBlobImmutabilityPolicy drives Set and Delete Blob Immutability
// Policy through azblob on every engine: the policy shows in Get Blob
// Properties and List Blobs, refuses delete and metadata writes while its
// date is ahead (by the service clock), moves with the version an
// overwrite keeps, can be shortened and deleted while unlocked, only
// extended once locked.
func TestBlobImmutabilityPolicy(t *testing.T) {
	harness.ForEachWith(t, versionedAdmin, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		cc := immutableContainer(t, tg)
		bb := cc.NewBlockBlobClient("p")
		up, err := bb.Upload(ctx, body([]byte("one")), nil)
		must(t, err)
		until := time.Now().Add(24 * time.Hour).UTC().Truncate(time.Second)
		sr, err := bb.SetImmutabilityPolicy(ctx, until, nil)
		must(t, err)
		if sr.ImmutabilityPolicyExpiry == nil || !sr.ImmutabilityPolicyExpiry.Equal(until) ||
			sr.ImmutabilityPolicyMode == nil || *sr.ImmutabilityPolicyMode != blob.ImmutabilityPolicyModeUnlocked {
			t.Fatalf("set: %v %v", sr.ImmutabilityPolicyExpiry, sr.ImmutabilityPolicyMode)
		}
		p, err := bb.GetProperties(ctx, nil)
		must(t, err)
		if p.ImmutabilityPolicyExpiresOn == nil || !p.ImmutabilityPolicyExpiresOn.Equal(until) ||
			p.ImmutabilityPolicyMode == nil || *p.ImmutabilityPolicyMode != blob.ImmutabilityPolicyModeUnlocked {
			t.Fatalf("properties: %v %v", p.ImmutabilityPolicyExpiresOn, p.ImmutabilityPolicyMode)
		}
		if *p.ETag != *up.ETag {
			t.Fatal("setting a policy changed the ETag")
		}
		pg, err := cc.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Include: container.ListBlobsInclude{ImmutabilityPolicy: true, LegalHold: true}}).NextPage(ctx)
		must(t, err)
		if len(pg.Segment.BlobItems) != 1 {
			t.Fatalf("listed %d", len(pg.Segment.BlobItems))
		}
		lp := pg.Segment.BlobItems[0].Properties
		if lp.ImmutabilityPolicyExpiresOn == nil || !lp.ImmutabilityPolicyExpiresOn.Equal(until) || lp.LegalHold == nil || *lp.LegalHold {
			t.Fatalf("listed: %v %v", lp.ImmutabilityPolicyExpiresOn, lp.LegalHold)
		}

		_, err = bb.Delete(ctx, nil)
		mustCode(t, err, 409, "BlobImmutableDueToPolicy")
		_, err = bb.SetMetadata(ctx, map[string]*string{"m": ptr("x")}, nil)
		mustCode(t, err, 409, "BlobImmutableDueToPolicy")

		// An overwrite makes a new version; the protected one stays.
		_, err = bb.Upload(ctx, body([]byte("two")), nil)
		must(t, err)
		v1, err := bb.BlobClient().WithVersionID(*up.VersionID)
		must(t, err)
		vp, err := v1.GetProperties(ctx, nil)
		must(t, err)
		if vp.ImmutabilityPolicyExpiresOn == nil || !vp.ImmutabilityPolicyExpiresOn.Equal(until) {
			t.Fatalf("previous version lost its policy: %v", vp.ImmutabilityPolicyExpiresOn)
		}
		if got := download(t, v1); got != "one" {
			t.Fatalf("protected version reads %q", got)
		}
		cur, err := bb.GetProperties(ctx, nil)
		must(t, err)
		if cur.ImmutabilityPolicyMode != nil {
			t.Fatal("the new version inherited the policy")
		}
		_, err = v1.Delete(ctx, nil)
		mustCode(t, err, 409, "BlobImmutableDueToPolicy")

		// Unlocked: shortened, then locked, then only extended.
		shorter := until.Add(-time.Hour)
		_, err = v1.SetImmutabilityPolicy(ctx, shorter, nil)
		must(t, err)
		_, err = v1.SetImmutabilityPolicy(ctx, shorter, &blob.SetImmutabilityPolicyOptions{Mode: ptr(blob.ImmutabilityPolicySettingLocked)})
		must(t, err)
		_, err = v1.SetImmutabilityPolicy(ctx, shorter.Add(-time.Hour), &blob.SetImmutabilityPolicyOptions{Mode: ptr(blob.ImmutabilityPolicySettingLocked)})
		mustCode(t, err, 409, "BlobImmutableDueToPolicy")
		_, err = v1.SetImmutabilityPolicy(ctx, shorter.Add(time.Hour), nil)
		mustCode(t, err, 409, "BlobImmutableDueToPolicy")
		_, err = v1.DeleteImmutabilityPolicy(ctx, nil)
		mustCode(t, err, 409, "BlobImmutableDueToPolicy")
		_, err = v1.SetImmutabilityPolicy(ctx, until, &blob.SetImmutabilityPolicyOptions{Mode: ptr(blob.ImmutabilityPolicySettingLocked)})
		must(t, err)
		vp, err = v1.GetProperties(ctx, nil)
		must(t, err)
		if vp.ImmutabilityPolicyMode == nil || *vp.ImmutabilityPolicyMode != blob.ImmutabilityPolicyModeLocked || !vp.ImmutabilityPolicyExpiresOn.Equal(until) {
			t.Fatalf("locked policy: %v %v", vp.ImmutabilityPolicyMode, vp.ImmutabilityPolicyExpiresOn)
		}

		// A date in the past is refused; If-Unmodified-Since applies.
		_, err = bb.SetImmutabilityPolicy(ctx, time.Now().Add(-time.Hour), nil)
		mustCode(t, err, 400, "InvalidHeaderValue")
		_, err = bb.SetImmutabilityPolicy(ctx, until, &blob.SetImmutabilityPolicyOptions{
			ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfUnmodifiedSince: ptr(time.Now().Add(-48 * time.Hour))}})
		mustCode(t, err, 412, "ConditionNotMet")

		// An unlocked policy can be deleted; the blob can go then.
		_, err = bb.SetImmutabilityPolicy(ctx, until, nil)
		must(t, err)
		_, err = bb.DeleteImmutabilityPolicy(ctx, nil)
		must(t, err)
		cur, err = bb.GetProperties(ctx, nil)
		must(t, err)
		if cur.ImmutabilityPolicyMode != nil || cur.ImmutabilityPolicyExpiresOn != nil {
			t.Fatal("the policy is still there")
		}

		// Deleting the container is refused while it holds blobs.
		_, err = cc.Delete(ctx, nil)
		mustCode(t, err, 409, "ContainerImmutableStorageWithVersioningEnabled")

		// Once the service clock passes the date, even a locked version goes.
		advanceClock(t, tg, 25*time.Hour)
		_, err = v1.Delete(ctx, nil)
		must(t, err)

		// Missing blob.
		_, err = cc.NewBlobClient("none").SetImmutabilityPolicy(ctx, until.Add(48*time.Hour), nil)
		mustCode(t, err, 404, "BlobNotFound")
	})
}

// TestBlobLegalHold drives Set Blob Legal Hold through azblob on every
// engine, and the policy and hold given on Put Blob, Put Block List and
// Create Page Blob.
func TestBlobLegalHold(t *testing.T) {
	harness.ForEachWith(t, versioned, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		cc := immutableContainer(t, tg)
		bb := cc.NewBlockBlobClient("h")
		_, err := bb.Upload(ctx, body([]byte("x")), nil)
		must(t, err)
		lr, err := bb.SetLegalHold(ctx, true, nil)
		must(t, err)
		if lr.LegalHold == nil || !*lr.LegalHold {
			t.Fatalf("set: %v", lr.LegalHold)
		}
		p, err := bb.GetProperties(ctx, nil)
		must(t, err)
		if p.LegalHold == nil || !*p.LegalHold {
			t.Fatalf("properties: %v", p.LegalHold)
		}
		pg, err := cc.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Include: container.ListBlobsInclude{LegalHold: true}}).NextPage(ctx)
		must(t, err)
		if lh := pg.Segment.BlobItems[0].Properties.LegalHold; lh == nil || !*lh {
			t.Fatalf("listed: %v", lh)
		}
		_, err = bb.Delete(ctx, nil)
		mustCode(t, err, 409, "BlobImmutableDueToLegalHold")
		_, err = bb.SetMetadata(ctx, map[string]*string{"m": ptr("x")}, nil)
		mustCode(t, err, 409, "BlobImmutableDueToLegalHold")
		lr, err = bb.SetLegalHold(ctx, false, nil)
		must(t, err)
		if lr.LegalHold == nil || *lr.LegalHold {
			t.Fatalf("cleared: %v", lr.LegalHold)
		}
		_, err = bb.Delete(ctx, nil)
		must(t, err)

		// Policy and hold on the writes that make a version.
		until := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
		_, err = bb.Upload(ctx, body([]byte("y")), &blockblob.UploadOptions{LegalHold: ptr(true),
			ImmutabilityPolicyExpiryTime: &until, ImmutabilityPolicyMode: ptr(blob.ImmutabilityPolicySettingUnlocked)})
		must(t, err)
		p, err = bb.GetProperties(ctx, nil)
		must(t, err)
		if p.LegalHold == nil || !*p.LegalHold || p.ImmutabilityPolicyExpiresOn == nil || !p.ImmutabilityPolicyExpiresOn.Equal(until) {
			t.Fatalf("put blob: %v %v", p.LegalHold, p.ImmutabilityPolicyExpiresOn)
		}
		cl := cc.NewBlockBlobClient("list")
		_, err = cl.CommitBlockList(ctx, nil, &blockblob.CommitBlockListOptions{LegalHold: ptr(true)})
		must(t, err)
		p, err = cl.GetProperties(ctx, nil)
		must(t, err)
		if p.LegalHold == nil || !*p.LegalHold {
			t.Fatal("put block list: no legal hold")
		}
		pb := cc.NewPageBlobClient("pages")
		_, err = pb.Create(ctx, 512, &pageblob.CreateOptions{LegalHold: ptr(true)})
		must(t, err)
		_, err = pb.UploadPages(ctx, body(make([]byte, 512)), blob.HTTPRange{Count: 512}, nil)
		mustCode(t, err, 409, "BlobImmutableDueToLegalHold")

		// A container without version-level immutability takes neither
		// (lazuli's pinned answer: 400 InvalidOperation).
		e := newEnv(t, tg)
		plain := e.cc.NewBlockBlobClient("plain")
		_, err = plain.Upload(ctx, body([]byte("z")), nil)
		must(t, err)
		_, err = plain.SetLegalHold(ctx, true, nil)
		mustCode(t, err, 400, "InvalidOperation")
		_, err = plain.SetImmutabilityPolicy(ctx, until, nil)
		mustCode(t, err, 400, "InvalidOperation")
		_, err = plain.Upload(ctx, body([]byte("z")), &blockblob.UploadOptions{LegalHold: ptr(true)})
		mustCode(t, err, 400, "InvalidOperation")
	})
}

// TestSnapshotHoldStopsDeleteSnapshots: a snapshot under a legal hold or
// a policy keeps Delete Blob with x-ms-delete-snapshots (include or only)
// from removing it, as a delete of the snapshot alone is refused.
func TestSnapshotHoldStopsDeleteSnapshots(t *testing.T) {
	harness.ForEachWith(t, versioned, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		cc := immutableContainer(t, tg)
		bb := cc.NewBlockBlobClient("snapped")
		_, err := bb.Upload(ctx, body([]byte("x")), nil)
		must(t, err)
		sr, err := bb.CreateSnapshot(ctx, nil)
		must(t, err)
		snap, err := bb.WithSnapshot(*sr.Snapshot)
		must(t, err)
		_, err = snap.SetLegalHold(ctx, true, nil)
		must(t, err)
		for _, opt := range []blob.DeleteSnapshotsOptionType{blob.DeleteSnapshotsOptionTypeInclude, blob.DeleteSnapshotsOptionTypeOnly} {
			_, err = bb.Delete(ctx, &blob.DeleteOptions{DeleteSnapshots: &opt})
			mustCode(t, err, 409, "BlobImmutableDueToLegalHold")
		}
		_, err = snap.GetProperties(ctx, nil)
		must(t, err)
		_, err = snap.SetLegalHold(ctx, false, nil)
		must(t, err)
		until := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
		_, err = snap.SetImmutabilityPolicy(ctx, until, nil)
		must(t, err)
		opt := blob.DeleteSnapshotsOptionTypeInclude
		_, err = bb.Delete(ctx, &blob.DeleteOptions{DeleteSnapshots: &opt})
		mustCode(t, err, 409, "BlobImmutableDueToPolicy")
		_, err = snap.DeleteImmutabilityPolicy(ctx, nil)
		must(t, err)
		_, err = bb.Delete(ctx, &blob.DeleteOptions{DeleteSnapshots: &opt})
		must(t, err)
	})
}

// TestLegalHoldRace: writers set the metadata of a blob and delete it
// while a legal hold is set on it; no write or delete sent after Set Blob
// Legal Hold has answered lands, on every engine.
func TestLegalHoldRace(t *testing.T) {
	harness.ForEachWith(t, versioned, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		cc := immutableContainer(t, tg)
		bb := cc.NewBlockBlobClient("race")
		var held atomic.Bool
		var late atomic.Int64
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for w := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					after := held.Load()
					var err error
					if w%4 == 3 {
						_, err = bb.Delete(ctx, nil)
						if err == nil && !after {
							// Leave the next upload time to get its
							// hold set: two deleters in a loop can
							// otherwise remove every upload first.
							time.Sleep(10 * time.Millisecond)
						}
					} else {
						_, err = bb.SetMetadata(ctx, map[string]*string{"w": ptr(fmt.Sprint(w, "-", i))}, nil)
					}
					if err == nil && after {
						late.Add(1)
					}
				}
			}()
		}
		// Set the hold while the writers run; a delete may win first, so
		// upload again until the hold is set on a live blob.
		var etag string
		for try := 0; ; try++ {
			if try == 200 {
				t.Fatal("no hold set in 200 tries")
			}
			if _, err := bb.Upload(ctx, body([]byte("held")), nil); err != nil {
				t.Fatal(err)
			}
			if _, err := bb.SetLegalHold(ctx, true, nil); err != nil {
				if isCode(err, 404, "BlobNotFound") {
					continue
				}
				t.Fatal(err)
			}
			held.Store(true)
			p, err := bb.GetProperties(ctx, nil)
			must(t, err)
			etag = string(*p.ETag)
			break
		}
		time.Sleep(100 * time.Millisecond)
		close(stop)
		wg.Wait()
		if n := late.Load(); n > 0 {
			t.Fatalf("%d writes landed after the legal hold was acknowledged", n)
		}
		p, err := bb.GetProperties(ctx, nil)
		must(t, err)
		if string(*p.ETag) != etag || p.LegalHold == nil || !*p.LegalHold {
			t.Fatalf("the held blob changed: etag %s, was %s; hold %v", *p.ETag, etag, p.LegalHold)
		}
	})
}

// TestSetBlobExpiry drives Set Blob Expiry through azblob on every engine
// with a hierarchical namespace: each option sets (or clears) the expiry
// time Get Blob Properties and List Blobs show, and once the service
// clock passes it the blob reads as absent and its name is free.
func TestSetBlobExpiry(t *testing.T) {
	harness.ForEachWith(t, func(o *emulator.Options) { o.HierarchicalNamespace = true; o.Admin = true }, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		e := newEnv(t, tg)
		bb := e.cc.NewBlockBlobClient("exp")
		up, err := bb.Upload(ctx, body([]byte("x")), nil)
		must(t, err)
		expiry := func() *time.Time {
			t.Helper()
			p, err := bb.GetProperties(ctx, nil)
			must(t, err)
			return p.ExpiresOn
		}
		sr, err := bb.SetExpiry(ctx, blockblob.ExpiryTypeRelativeToNow(2*time.Hour), nil)
		must(t, err)
		if sr.ETag == nil || *sr.ETag != *up.ETag {
			t.Fatal("Set Blob Expiry changed the ETag")
		}
		if at := expiry(); at == nil || at.Before(time.Now().Add(119*time.Minute)) || at.After(time.Now().Add(121*time.Minute)) {
			t.Fatalf("relative to now: %v", at)
		}
		abs := time.Now().Add(3 * time.Hour).UTC().Truncate(time.Second)
		_, err = bb.SetExpiry(ctx, blockblob.ExpiryTypeAbsolute(abs), nil)
		must(t, err)
		if at := expiry(); at == nil || !at.Equal(abs) {
			t.Fatalf("absolute: %v, want %v", at, abs)
		}
		pg, err := e.cc.NewListBlobsFlatPager(nil).NextPage(ctx)
		must(t, err)
		if len(pg.Segment.BlobItems) != 1 || pg.Segment.BlobItems[0].Properties.ExpiresOn == nil || !pg.Segment.BlobItems[0].Properties.ExpiresOn.Equal(abs) {
			t.Fatalf("listed: %+v", pg.Segment.BlobItems)
		}
		_, err = bb.SetExpiry(ctx, blockblob.ExpiryTypeNever{}, nil)
		must(t, err)
		if at := expiry(); at != nil {
			t.Fatalf("never expire: %v", at)
		}
		_, err = bb.SetExpiry(ctx, blockblob.ExpiryTypeAbsolute(time.Now().Add(-time.Hour)), nil)
		mustCode(t, err, 400, "InvalidHeaderValue")
		_, err = e.cc.NewBlockBlobClient("none").SetExpiry(ctx, blockblob.ExpiryTypeRelativeToNow(time.Hour), nil)
		mustCode(t, err, 404, "BlobNotFound")

		_, err = bb.SetExpiry(ctx, blockblob.ExpiryTypeRelativeToCreation(time.Hour), nil)
		must(t, err)
		if at := expiry(); at == nil || at.After(time.Now().Add(61*time.Minute)) {
			t.Fatalf("relative to creation: %v", at)
		}
		advanceClock(t, tg, 2*time.Hour)
		_, err = bb.GetProperties(ctx, nil)
		mustCode(t, err, 404, "BlobNotFound")
		_, err = bb.DownloadStream(ctx, nil)
		mustCode(t, err, 404, "BlobNotFound")
		pg, err = e.cc.NewListBlobsFlatPager(nil).NextPage(ctx)
		must(t, err)
		if len(pg.Segment.BlobItems) != 0 {
			t.Fatalf("an expired blob is listed: %d", len(pg.Segment.BlobItems))
		}
		_, err = bb.SetMetadata(ctx, map[string]*string{"m": ptr("x")}, nil)
		mustCode(t, err, 404, "BlobNotFound")
		_, err = bb.GetBlockList(ctx, blockblob.BlockListTypeAll, nil)
		mustCode(t, err, 404, "BlobNotFound")
		_, err = bb.GetTags(ctx, nil)
		mustCode(t, err, 404, "BlobNotFound")
		_, err = e.cc.NewBlobClient("copy").StartCopyFromURL(ctx, bb.URL(), nil)
		mustCode(t, err, 404, "BlobNotFound")
		_, err = bb.Upload(ctx, body([]byte("new")), nil)
		must(t, err)
		if at := expiry(); at != nil {
			t.Fatalf("the new blob has the old expiry: %v", at)
		}
		if got := download(t, bb.BlobClient()); got != "new" {
			t.Fatalf("new blob reads %q", got)
		}
	})
}

// TestSetBlobExpiryNeedsNamespace pins lazuli's answer to Set Blob Expiry
// on an account without a hierarchical namespace, where Azure does not
// offer it: 400 InvalidQueryParameterValue.
func TestSetBlobExpiryNeedsNamespace(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		bb := e.cc.NewBlockBlobClient("exp")
		_, err := bb.Upload(harness.Ctx(t), body([]byte("x")), nil)
		must(t, err)
		_, err = bb.SetExpiry(harness.Ctx(t), blockblob.ExpiryTypeRelativeToNow(time.Hour), nil)
		mustCode(t, err, 400, "InvalidQueryParameterValue")
	})
}

// TestContainerDeleteRetentionPerAccount: --containerDeleteRetentionAccounts
// gives an account its own container delete retention, or turns the
// server-wide one off for it.
func TestContainerDeleteRetentionPerAccount(t *testing.T) {
	for _, c := range []struct {
		name string
		set  func(*emulator.Options)
		days int32 // 0: not kept
	}{
		{"own", func(o *emulator.Options) { o.ContainerDeleteRetentionAccounts = map[string]int{emulator.Account: 2} }, 2},
		{"off", func(o *emulator.Options) {
			o.ContainerDeleteRetentionDays = 3
			o.ContainerDeleteRetentionAccounts = map[string]int{emulator.Account: 0}
		}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			harness.ForEachWith(t, c.set, func(t *testing.T, tg *harness.Target) {
				ctx := harness.Ctx(t)
				e := newEnv(t, tg)
				_, err := e.cc.Delete(ctx, nil)
				must(t, err)
				pg, err := e.c.ServiceClient().NewListContainersPager(&service.ListContainersOptions{Prefix: ptr(e.name),
					Include: service.ListContainersInclude{Deleted: true}}).NextPage(ctx)
				must(t, err)
				if c.days == 0 {
					if len(pg.ContainerItems) != 0 {
						t.Fatal("a deleted container was kept")
					}
					return
				}
				if len(pg.ContainerItems) != 1 || *pg.ContainerItems[0].Properties.RemainingRetentionDays != c.days {
					t.Fatalf("deleted containers: %+v", pg.ContainerItems)
				}
			})
		})
	}
}

// TestListDeletedWithVersions: include=deletedwithversions lists a blob
// whose current version was deleted and which keeps previous versions,
// once, marked HasVersionsOnly; without it the blob is not listed.
func TestListDeletedWithVersions(t *testing.T) {
	harness.ForEachWith(t, versioned, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		e := newEnv(t, tg)
		bb := e.cc.NewBlockBlobClient("dv")
		_, err := bb.Upload(ctx, body([]byte("one")), nil)
		must(t, err)
		_, err = bb.Upload(ctx, body([]byte("two")), nil)
		must(t, err)
		_, err = e.cc.NewBlockBlobClient("live").Upload(ctx, body([]byte("x")), nil)
		must(t, err)
		_, err = bb.Delete(ctx, nil)
		must(t, err)
		list := func(inc container.ListBlobsInclude) []*container.BlobItem {
			pg, err := e.cc.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Include: inc}).NextPage(ctx)
			must(t, err)
			return pg.Segment.BlobItems
		}
		if items := list(container.ListBlobsInclude{}); len(items) != 1 || *items[0].Name != "live" {
			t.Fatalf("plain listing: %d items", len(items))
		}
		items := list(container.ListBlobsInclude{DeletedWithVersions: true})
		if len(items) != 2 || *items[0].Name != "dv" || items[0].HasVersionsOnly == nil || !*items[0].HasVersionsOnly ||
			*items[0].Properties.ContentLength != 3 || items[1].HasVersionsOnly != nil {
			t.Fatalf("deletedwithversions: %+v", items)
		}
	})
}

// TestSetExpiryDataLake: the Data Lake SDK's file Set Expiry (sent to the
// Blob endpoint) on a file made through the dfs API.
func TestSetExpiryDataLake(t *testing.T) {
	harness.ForEachWith(t, func(o *emulator.Options) { o.HierarchicalNamespace = true }, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		fs := tg.DataLake(t).NewFileSystemClient(harness.UniqueName("lake"))
		_, err := fs.Create(ctx, nil)
		must(t, err)
		fc := fs.NewFileClient("dir/f")
		_, err = fc.Create(ctx, nil)
		must(t, err)
		abs := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
		_, err = fc.SetExpiry(ctx, dlfile.SetExpiryValues{ExpiryType: dlfile.SetExpiryTypeAbsolute, ExpiresOn: abs.Format(http.TimeFormat)}, nil)
		must(t, err)
		p, err := fc.GetProperties(ctx, nil)
		must(t, err)
		if p.ExpiresOn == nil || !p.ExpiresOn.Equal(abs) {
			t.Fatalf("expiry: %v, want %v", p.ExpiresOn, abs)
		}
	})
}

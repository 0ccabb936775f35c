package blob_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/lazuli-storage/lazuli/conformance/harness"
	"github.com/lazuli-storage/lazuli/emulator"
)

// versioned starts lazuli with blob versioning on for its account.
func versioned(o *emulator.Options) { o.BlobVersioningAccounts = []string{emulator.Account} }

// listVersions lists every version of the container's blobs.
func listVersions(t *testing.T, cc *container.Client) []*container.BlobItem {
	t.Helper()
	var out []*container.BlobItem
	pager := cc.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Include: container.ListBlobsInclude{Versions: true}})
	for pager.More() {
		pg, err := pager.NextPage(harness.Ctx(t))
		must(t, err)
		out = append(out, pg.Segment.BlobItems...)
	}
	return out
}

// TestBlobVersions drives blob versions through azblob on every engine:
// each write answers its x-ms-version-id, versionid= reads, tags and sets
// the tier of one version, include=versions lists them with
// IsCurrentVersion, deleting the blob keeps them, copying a version over
// the blob promotes it, and writes to a version are refused.
func TestBlobVersions(t *testing.T) {
	harness.ForEachWith(t, versioned, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		bb := e.cc.NewBlockBlobClient("v")
		r1, err := bb.Upload(ctx, body([]byte("one")), nil)
		must(t, err)
		r2, err := bb.Upload(ctx, body([]byte("two")), nil)
		must(t, err)
		r3, err := bb.SetMetadata(ctx, map[string]*string{"m": ptr("3")}, nil)
		must(t, err)
		if r1.VersionID == nil || r2.VersionID == nil || r3.VersionID == nil || !(*r1.VersionID < *r2.VersionID && *r2.VersionID < *r3.VersionID) {
			t.Fatalf("version ids %v %v %v", r1.VersionID, r2.VersionID, r3.VersionID)
		}
		p, err := bb.GetProperties(ctx, nil)
		must(t, err)
		if p.VersionID == nil || *p.VersionID != *r3.VersionID || p.IsCurrentVersion == nil || !*p.IsCurrentVersion {
			t.Fatalf("properties: version %v, current %v", p.VersionID, p.IsCurrentVersion)
		}
		v1, err := bb.BlobClient().WithVersionID(*r1.VersionID)
		must(t, err)
		if got := download(t, v1); got != "one" {
			t.Fatalf("version 1 reads %q", got)
		}
		vp, err := v1.GetProperties(ctx, nil)
		must(t, err)
		if vp.IsCurrentVersion != nil && *vp.IsCurrentVersion {
			t.Fatal("a previous version says it is current")
		}
		items := listVersions(t, e.cc)
		if len(items) != 3 {
			t.Fatalf("listed %d versions, want 3", len(items))
		}
		for i, it := range items {
			current := it.IsCurrentVersion != nil && *it.IsCurrentVersion
			if it.VersionID == nil || current != (i == 2) {
				t.Fatalf("item %d: version %v, current %v", i, it.VersionID, it.IsCurrentVersion)
			}
		}
		// Tags and tier of one version.
		_, err = v1.SetTags(ctx, map[string]string{"k": "v1"}, nil)
		must(t, err)
		tags, err := bb.GetTags(ctx, &blob.GetTagsOptions{VersionID: r1.VersionID})
		must(t, err)
		if len(tags.BlobTagSet) != 1 || *tags.BlobTagSet[0].Value != "v1" {
			t.Fatalf("version tags %+v", tags.BlobTagSet)
		}
		if cur, err := bb.GetTags(ctx, nil); err != nil || len(cur.BlobTagSet) != 0 {
			t.Fatalf("current version tags %+v, %v", cur.BlobTagSet, err)
		}
		_, err = v1.SetTier(ctx, blob.AccessTierCool, nil)
		must(t, err)
		// Writes to a version are refused.
		bv1, err := bb.WithVersionID(*r1.VersionID)
		must(t, err)
		_, err = bv1.Upload(ctx, body([]byte("x")), nil)
		mustCode(t, err, 400, "InvalidOperation")
		_, err = v1.SetMetadata(ctx, nil, nil)
		mustCode(t, err, 400, "InvalidOperation")
		// Deleting the blob keeps every version.
		_, err = bb.Delete(ctx, nil)
		must(t, err)
		_, err = bb.GetProperties(ctx, nil)
		mustCode(t, err, 404, "BlobNotFound")
		items = listVersions(t, e.cc)
		if len(items) != 3 {
			t.Fatalf("after delete %d versions listed, want 3", len(items))
		}
		for _, it := range items {
			if it.IsCurrentVersion != nil && *it.IsCurrentVersion {
				t.Fatal("a version is current after the blob was deleted")
			}
		}
		// Promote version 1: copy it over the blob.
		_, err = bb.BlobClient().StartCopyFromURL(ctx, v1.URL(), nil)
		must(t, err)
		if got := download(t, bb.BlobClient()); got != "one" {
			t.Fatalf("promoted blob reads %q", got)
		}
		// Delete one version.
		v2, err := bb.BlobClient().WithVersionID(*r2.VersionID)
		must(t, err)
		_, err = v2.Delete(ctx, nil)
		must(t, err)
		_, err = v2.GetProperties(ctx, nil)
		mustCode(t, err, 404, "BlobNotFound")
		if items := listVersions(t, e.cc); len(items) != 3 {
			t.Fatalf("after deleting a version %d listed, want 3", len(items))
		}
	})
}

// TestBlobVersionsConcurrentWriters: many goroutines upload to one blob at
// once; each is answered its own version id, every version is listed and
// holds that writer's bytes, and exactly one is current.
func TestBlobVersionsConcurrentWriters(t *testing.T) {
	harness.ForEachWith(t, versioned, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		const writers = 16
		ids := make([]string, writers)
		var wg sync.WaitGroup
		errs := make(chan error, writers)
		for i := range writers {
			wg.Go(func() {
				r, err := e.cc.NewBlockBlobClient("hot").Upload(ctx, body([]byte(fmt.Sprintf("writer %02d", i))), nil)
				if err == nil {
					ids[i] = *r.VersionID
				}
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			must(t, err)
		}
		items := listVersions(t, e.cc)
		if len(items) != writers {
			t.Fatalf("%d versions listed for %d writes", len(items), writers)
		}
		content := map[string]string{}
		current := 0
		for _, it := range items {
			if it.IsCurrentVersion != nil && *it.IsCurrentVersion {
				current++
			}
			vc, err := e.cc.NewBlobClient("hot").WithVersionID(*it.VersionID)
			must(t, err)
			content[*it.VersionID] = download(t, vc)
		}
		if current != 1 {
			t.Fatalf("%d current versions", current)
		}
		for i, id := range ids {
			if content[id] != fmt.Sprintf("writer %02d", i) {
				t.Fatalf("writer %d's version %s holds %q", i, id, content[id])
			}
		}
	})
}

package dfs

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/service"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/filesystem"

	"github.com/lazuli-storage/lazuli/conformance/harness"
)

// deletedPaths lists the deleted paths of fs through NewListDeletedPathsPager.
func deletedPaths(t *testing.T, fs *filesystem.Client, o *filesystem.ListDeletedPathsOptions) (names, ids []string) {
	t.Helper()
	p := fs.NewListDeletedPathsPager(o)
	for p.More() {
		page, err := p.NextPage(harness.Ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Segment.PathItems {
			if it.Deleted == nil || !*it.Deleted || it.DeletionID == nil || it.Properties.DeletedTime == nil ||
				it.Properties.RemainingRetentionDays == nil || *it.Properties.RemainingRetentionDays != 7 {
				t.Fatalf("deleted path %s lacks its deletion fields", *it.Name)
			}
			names, ids = append(names, *it.Name), append(ids, *it.DeletionID)
		}
	}
	return names, ids
}

// retainDeleted turns the target's blob delete retention on (7 days) and
// returns its Blob service client.
func retainDeleted(t *testing.T, tg *harness.Target) *service.Client {
	t.Helper()
	svc := tg.Blob(t).ServiceClient()
	if _, err := svc.SetProperties(harness.Ctx(t), &service.SetPropertiesOptions{
		DeleteRetentionPolicy: &service.RetentionPolicy{Enabled: to.Ptr(true), Days: to.Ptr[int32](7)}}); err != nil {
		t.Fatal(err)
	}
	return svc
}

type sourceKey struct{}

func withSource(ctx context.Context, src string) context.Context {
	return context.WithValue(ctx, sourceKey{}, src)
}

// undeleteSource sets x-ms-undelete-source from the context before the
// request is signed (azblob's Undelete Blob has no option for it).
type undeleteSource struct{}

func (undeleteSource) Do(req *policy.Request) (*http.Response, error) {
	if src, ok := req.Raw().Context().Value(sourceKey{}).(string); ok {
		req.Raw().Header.Set("x-ms-undelete-source", src)
	}
	return req.Next()
}

// undeleteClient is a container client of the target whose Undelete
// Blob sends the x-ms-undelete-source of its context.
func undeleteClient(t *testing.T, tg *harness.Target, name string) *container.Client {
	t.Helper()
	cred, err := azblob.NewSharedKeyCredential(tg.Account, tg.Key)
	if err != nil {
		t.Fatal(err)
	}
	o := tg.ClientOptions()
	o.PerCallPolicies = append(o.PerCallPolicies, undeleteSource{})
	c, err := container.NewClientWithSharedKeyCredential(tg.BlobURL+"/"+name, cred, &container.ClientOptions{ClientOptions: o})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A directory deleted recursively with soft delete on is one deleted
// path (List Deleted Paths through azdatalake, one entry a page); Undelete
// Path of its id (azdatalake has no call for it: Undelete Blob with
// x-ms-undelete-source) brings the tree back, and of N concurrent
// undeletes of one id exactly one wins.
func TestSDKDeletedPaths(t *testing.T) {
	harness.ForEachHNS(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		retainDeleted(t, tg)
		fs := newFS(t, tg)
		for _, n := range []string{"logs/a/1.txt", "logs/a/2.txt", "logs/b.txt", "other.txt"} {
			f := fs.NewFileClient(n)
			if _, err := f.Create(ctx, nil); err != nil {
				t.Fatal(err)
			}
		}
		before := listAll(t, fs)
		if _, err := fs.NewDirectoryClient("logs").Delete(ctx, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := fs.NewFileClient("other.txt").Delete(ctx, nil); err != nil {
			t.Fatal(err)
		}
		names, ids := deletedPaths(t, fs, &filesystem.ListDeletedPathsOptions{MaxResults: to.Ptr[int32](1)})
		if len(names) != 2 || names[0] != "logs" || names[1] != "other.txt" {
			t.Fatalf("deleted paths %q", names)
		}
		if names, _ := deletedPaths(t, fs, &filesystem.ListDeletedPathsOptions{Prefix: to.Ptr("oth")}); len(names) != 1 {
			t.Fatalf("with a prefix: %q", names)
		}
		cc := undeleteClient(t, tg, fsName(fs))
		const n = 6
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = cc.NewBlobClient("logs").Undelete(withSource(ctx, "logs?deletionid="+ids[0]), nil)
			}()
		}
		wg.Wait()
		wins := 0
		for _, err := range errs {
			if err == nil {
				wins++
			}
		}
		if wins != 1 {
			t.Fatalf("%d undeletes won: %v", wins, errs)
		}
		if _, err := cc.NewBlobClient("other.txt").Undelete(withSource(ctx, "?deletionid="+ids[1]), nil); err != nil {
			t.Fatal(err)
		}
		if got := listAll(t, fs); len(got) != len(before) {
			t.Fatalf("after the undeletes %q, want %q", got, before)
		}
		if names, _ := deletedPaths(t, fs, nil); len(names) != 0 {
			t.Fatalf("left: %q", names)
		}
	})
}

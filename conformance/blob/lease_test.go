package blob_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"

	"github.com/lazuli-storage/lazuli/conformance/harness"
)

const (
	idA = "aaaaaaaa-1111-2222-3333-444444444444"
	idB = "bbbbbbbb-1111-2222-3333-444444444444"
	idC = "cccccccc-1111-2222-3333-444444444444"
)

// leaseReq sends a raw Lease Blob (or Lease Container when blobName is "").
func leaseReq(t *testing.T, tg *harness.Target, cname, blobName string, h map[string]string) *http.Response {
	t.Helper()
	path := cname + "/" + blobName + "?comp=lease"
	if blobName == "" {
		path = cname + "?restype=container&comp=lease"
	}
	return raw(t, tg, http.MethodPut, path, h, nil)
}

func leaseState(t *testing.T, tg *harness.Target, cname, blobName string) (state, id string) {
	t.Helper()
	path := cname + "/" + blobName
	if blobName == "" {
		path = cname + "?restype=container"
	}
	resp := raw(t, tg, http.MethodHead, path, nil, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("HEAD %s: %d", path, resp.StatusCode)
	}
	return resp.Header.Get("x-ms-lease-state"), ""
}

func expectStatus(t *testing.T, resp *http.Response, status int, code string) {
	t.Helper()
	if resp.StatusCode != status || resp.Header.Get("x-ms-error-code") != code {
		t.Fatalf("got %d %q, want %d %q", resp.StatusCode, resp.Header.Get("x-ms-error-code"), status, code)
	}
}

// TestLeaseTransitions drives every cell of the lease transition table that
// does not need the clock to move (Expired is covered by the domain tests),
// for blobs and containers, with raw requests so that "no proposed id" can
// be sent.
func TestLeaseTransitions(t *testing.T) {
	type setup func(t *testing.T, tg *harness.Target, c, b string)
	acquire := func(id string) setup {
		return func(t *testing.T, tg *harness.Target, c, b string) {
			expectStatus(t, leaseReq(t, tg, c, b, map[string]string{"x-ms-lease-action": "acquire", "x-ms-lease-duration": "-1", "x-ms-proposed-lease-id": id}), 201, "")
		}
	}
	states := map[string]setup{
		"available": func(*testing.T, *harness.Target, string, string) {},
		"leased":    acquire(idA),
		"breaking": func(t *testing.T, tg *harness.Target, c, b string) {
			acquire(idA)(t, tg, c, b)
			expectStatus(t, leaseReq(t, tg, c, b, map[string]string{"x-ms-lease-action": "break", "x-ms-lease-break-period": "60"}), 202, "")
		},
		"broken": func(t *testing.T, tg *harness.Target, c, b string) {
			acquire(idA)(t, tg, c, b)
			expectStatus(t, leaseReq(t, tg, c, b, map[string]string{"x-ms-lease-action": "break", "x-ms-lease-break-period": "0"}), 202, "")
		},
		"released": func(t *testing.T, tg *harness.Target, c, b string) {
			acquire(idA)(t, tg, c, b)
			expectStatus(t, leaseReq(t, tg, c, b, map[string]string{"x-ms-lease-action": "release", "x-ms-lease-id": idA}), 200, "")
		},
	}
	type cell struct {
		status int
		code   string
		state  string // lease state after success
	}
	ok := func(status int, state string) cell { return cell{status: status, state: state} }
	fail := func(code string) cell { return cell{status: 409, code: code} }
	const (
		present  = "LeaseAlreadyPresent"
		mismatch = "LeaseIdMismatchWithLeaseOperation"
		notPres  = "LeaseNotPresentWithLeaseOperation"
	)
	rows := []struct {
		name  string
		h     map[string]string
		cells map[string]cell
	}{
		{"acquire no proposed id", map[string]string{"x-ms-lease-action": "acquire", "x-ms-lease-duration": "-1"}, map[string]cell{
			"available": ok(201, "leased"), "leased": fail(present), "breaking": fail(present), "broken": ok(201, "leased"), "released": ok(201, "leased")}},
		{"acquire proposed A", map[string]string{"x-ms-lease-action": "acquire", "x-ms-lease-duration": "30", "x-ms-proposed-lease-id": idA}, map[string]cell{
			"available": ok(201, "leased"), "leased": ok(201, "leased"), "breaking": fail("LeaseIsBreakingAndCannotBeAcquired"), "broken": ok(201, "leased"), "released": ok(201, "leased")}},
		{"acquire proposed B", map[string]string{"x-ms-lease-action": "acquire", "x-ms-lease-duration": "-1", "x-ms-proposed-lease-id": idB}, map[string]cell{
			"available": ok(201, "leased"), "leased": fail(present), "breaking": fail(present), "broken": ok(201, "leased"), "released": ok(201, "leased")}},
		{"renew A", map[string]string{"x-ms-lease-action": "renew", "x-ms-lease-id": idA}, map[string]cell{
			"available": fail(mismatch), "leased": ok(200, "leased"), "breaking": fail("LeaseIsBrokenAndCannotBeRenewed"), "broken": fail("LeaseIsBrokenAndCannotBeRenewed"), "released": fail(mismatch)}},
		{"renew B", map[string]string{"x-ms-lease-action": "renew", "x-ms-lease-id": idB}, map[string]cell{
			"available": fail(mismatch), "leased": fail(mismatch), "breaking": fail(mismatch), "broken": fail(mismatch), "released": fail(mismatch)}},
		{"change A to B", map[string]string{"x-ms-lease-action": "change", "x-ms-lease-id": idA, "x-ms-proposed-lease-id": idB}, map[string]cell{
			"available": fail(notPres), "leased": ok(200, "leased"), "breaking": fail("LeaseIsBreakingAndCannotBeChanged"), "broken": fail(notPres), "released": fail(notPres)}},
		{"change B to A", map[string]string{"x-ms-lease-action": "change", "x-ms-lease-id": idB, "x-ms-proposed-lease-id": idA}, map[string]cell{
			"available": fail(notPres), "leased": ok(200, "leased"), "breaking": fail(mismatch), "broken": fail(notPres), "released": fail(notPres)}},
		{"change B to C", map[string]string{"x-ms-lease-action": "change", "x-ms-lease-id": idB, "x-ms-proposed-lease-id": idC}, map[string]cell{
			"available": fail(notPres), "leased": fail(mismatch), "breaking": fail(mismatch), "broken": fail(notPres), "released": fail(notPres)}},
		{"release A", map[string]string{"x-ms-lease-action": "release", "x-ms-lease-id": idA}, map[string]cell{
			"available": fail(mismatch), "leased": ok(200, "available"), "breaking": ok(200, "available"), "broken": ok(200, "available"), "released": fail(mismatch)}},
		{"release B", map[string]string{"x-ms-lease-action": "release", "x-ms-lease-id": idB}, map[string]cell{
			"available": fail(mismatch), "leased": fail(mismatch), "breaking": fail(mismatch), "broken": fail(mismatch), "released": fail(mismatch)}},
		{"break 0", map[string]string{"x-ms-lease-action": "break", "x-ms-lease-break-period": "0"}, map[string]cell{
			"available": fail(notPres), "leased": ok(202, "broken"), "breaking": ok(202, "broken"), "broken": ok(202, "broken"), "released": fail(notPres)}},
		{"break 30", map[string]string{"x-ms-lease-action": "break", "x-ms-lease-break-period": "30"}, map[string]cell{
			"available": fail(notPres), "leased": ok(202, "breaking"), "breaking": ok(202, "breaking"), "broken": ok(202, "broken"), "released": fail(notPres)}},
		{"break no period", map[string]string{"x-ms-lease-action": "break"}, map[string]cell{
			"available": fail(notPres), "leased": ok(202, "broken"), "breaking": ok(202, "breaking"), "broken": ok(202, "broken"), "released": fail(notPres)}},
	}
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		for _, kind := range []string{"blob", "container"} {
			n := 0
			for _, row := range rows {
				for stName, st := range states {
					want := row.cells[stName]
					t.Run(fmt.Sprintf("%s/%s/%s", kind, row.name, stName), func(t *testing.T) {
						n++
						cname, bname := e.name, fmt.Sprintf("b%d", n)
						if kind == "container" {
							cname, bname = harness.UniqueName("l")+fmt.Sprint(n), ""
							_, err := e.c.CreateContainer(ctx, cname, nil)
							must(t, err)
						} else {
							_, err := e.cc.NewBlockBlobClient(bname).Upload(ctx, body([]byte("x")), nil)
							must(t, err)
						}
						st(t, tg, cname, bname)
						before := raw(t, tg, http.MethodHead, headPath(cname, bname), nil, nil)
						resp := leaseReq(t, tg, cname, bname, row.h)
						expectStatus(t, resp, want.status, want.code)
						if want.code != "" {
							return
						}
						if resp.Header.Get("ETag") != before.Header.Get("ETag") || resp.Header.Get("Last-Modified") != before.Header.Get("Last-Modified") {
							t.Fatalf("lease changed ETag/Last-Modified")
						}
						if got, _ := leaseState(t, tg, cname, bname); got != want.state {
							t.Fatalf("state %q, want %q", got, want.state)
						}
						switch row.h["x-ms-lease-action"] {
						case "acquire", "renew", "change":
							if resp.Header.Get("x-ms-lease-id") == "" {
								t.Fatal("no x-ms-lease-id")
							}
						case "break":
							if resp.Header.Get("x-ms-lease-time") == "" {
								t.Fatal("no x-ms-lease-time")
							}
						}
					})
				}
			}
		}
	})
}

func headPath(c, b string) string {
	if b == "" {
		return c + "?restype=container"
	}
	return c + "/" + b
}

func TestLeaseHeaderValidation(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		_, err := e.cc.NewBlockBlobClient("b").Upload(ctx, body([]byte("x")), nil)
		must(t, err)
		for _, tc := range []struct {
			h      map[string]string
			status int
			code   string
		}{
			{map[string]string{}, 400, "MissingRequiredHeader"},
			{map[string]string{"x-ms-lease-action": "steal"}, 400, "InvalidHeaderValue"},
			{map[string]string{"x-ms-lease-action": "acquire"}, 400, "MissingRequiredHeader"},
			{map[string]string{"x-ms-lease-action": "acquire", "x-ms-lease-duration": "14"}, 400, "InvalidHeaderValue"},
			{map[string]string{"x-ms-lease-action": "acquire", "x-ms-lease-duration": "61"}, 400, "InvalidHeaderValue"},
			{map[string]string{"x-ms-lease-action": "acquire", "x-ms-lease-duration": "-1", "x-ms-proposed-lease-id": "not-a-guid"}, 400, "InvalidHeaderValue"},
			{map[string]string{"x-ms-lease-action": "renew"}, 400, "MissingRequiredHeader"},
			{map[string]string{"x-ms-lease-action": "release"}, 400, "MissingRequiredHeader"},
			{map[string]string{"x-ms-lease-action": "change", "x-ms-lease-id": idA}, 400, "MissingRequiredHeader"},
			{map[string]string{"x-ms-lease-action": "break", "x-ms-lease-break-period": "61"}, 400, "InvalidHeaderValue"},
		} {
			expectStatus(t, leaseReq(t, tg, e.name, "b", tc.h), tc.status, tc.code)
		}
		// Lease on a missing blob, container, and on a snapshot.
		expectStatus(t, leaseReq(t, tg, e.name, "missing", map[string]string{"x-ms-lease-action": "acquire", "x-ms-lease-duration": "-1"}), 404, "BlobNotFound")
		expectStatus(t, leaseReq(t, tg, "nocontainer", "", map[string]string{"x-ms-lease-action": "acquire", "x-ms-lease-duration": "-1"}), 404, "ContainerNotFound")
		snap, err := e.cc.NewBlobClient("b").CreateSnapshot(ctx, nil)
		must(t, err)
		resp := raw(t, tg, http.MethodPut, e.name+"/b?comp=lease&snapshot="+*snap.Snapshot, map[string]string{"x-ms-lease-action": "acquire", "x-ms-lease-duration": "-1"}, nil)
		if resp.StatusCode != 400 {
			t.Fatalf("lease on snapshot: %d", resp.StatusCode)
		}
		// Fixed duration is reported as such.
		expectStatus(t, leaseReq(t, tg, e.name, "b", map[string]string{"x-ms-lease-action": "acquire", "x-ms-lease-duration": "15", "x-ms-proposed-lease-id": idA}), 201, "")
		h := raw(t, tg, http.MethodHead, e.name+"/b", nil, nil)
		if h.Header.Get("x-ms-lease-duration") != "fixed" || h.Header.Get("x-ms-lease-status") != "locked" {
			t.Fatalf("lease headers %v", h.Header)
		}
	})
}

// TestLeaseEnforcement checks §3.4: which operations need the lease id and
// the codes for missing, wrong and stale ids.
func TestLeaseEnforcement(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		bb := e.cc.NewBlockBlobClient("leased")
		_, err := bb.Upload(ctx, body([]byte("v1")), nil)
		must(t, err)
		lc, err := lease.NewBlobClient(bb, &lease.BlobClientOptions{LeaseID: ptr(idA)})
		must(t, err)
		_, err = lc.AcquireLease(ctx, -1, nil)
		must(t, err)
		withID := func(id string) *blob.AccessConditions {
			return &blob.AccessConditions{LeaseAccessConditions: &blob.LeaseAccessConditions{LeaseID: ptr(id)}}
		}
		// Writes without the id.
		_, err = bb.Upload(ctx, body([]byte("v2")), nil)
		mustCode(t, err, 412, "LeaseIdMissing")
		_, err = bb.SetMetadata(ctx, map[string]*string{"a": ptr("b")}, nil)
		mustCode(t, err, 412, "LeaseIdMissing")
		_, err = bb.SetHTTPHeaders(ctx, blob.HTTPHeaders{}, nil)
		mustCode(t, err, 412, "LeaseIdMissing")
		_, err = bb.Delete(ctx, nil)
		mustCode(t, err, 412, "LeaseIdMissing")
		_, err = bb.StageBlock(ctx, "YmxvY2sx", body([]byte("x")), nil)
		mustCode(t, err, 412, "LeaseIdMissing")
		_, err = bb.CommitBlockList(ctx, nil, nil)
		mustCode(t, err, 412, "LeaseIdMissing")
		// Writes with the wrong id.
		_, err = bb.Upload(ctx, body([]byte("v2")), &blockblob.UploadOptions{AccessConditions: withID(idB)})
		mustCode(t, err, 412, "LeaseIdMismatchWithBlobOperation")
		// Reads: no id is fine, the wrong id is not.
		_, err = bb.GetProperties(ctx, nil)
		must(t, err)
		_, err = bb.GetProperties(ctx, &blob.GetPropertiesOptions{AccessConditions: withID(idB)})
		mustCode(t, err, 412, "LeaseIdMismatchWithBlobOperation")
		_, err = bb.DownloadStream(ctx, &blob.DownloadStreamOptions{AccessConditions: withID(idA)})
		must(t, err)
		// Snapshot without the id is allowed and the lease is not copied.
		snap, err := bb.CreateSnapshot(ctx, nil)
		must(t, err)
		sc, _ := bb.WithSnapshot(*snap.Snapshot)
		sp, err := sc.GetProperties(ctx, nil)
		must(t, err)
		if *sp.LeaseState != "available" {
			t.Fatalf("snapshot lease state %s", *sp.LeaseState)
		}
		// Writes with the id keep the lease on the new content.
		_, err = bb.Upload(ctx, body([]byte("v3")), &blockblob.UploadOptions{AccessConditions: withID(idA)})
		must(t, err)
		p, err := bb.GetProperties(ctx, nil)
		must(t, err)
		if *p.LeaseState != "leased" {
			t.Fatalf("lease lost by Put Blob with id: %s", *p.LeaseState)
		}
		// Broken lease: a write without id goes through and clears it.
		_, err = lc.BreakLease(ctx, &lease.BlobBreakOptions{BreakPeriod: ptr(int32(0))})
		must(t, err)
		_, err = bb.SetMetadata(ctx, nil, &blob.SetMetadataOptions{AccessConditions: withID(idA)})
		mustCode(t, err, 412, "LeaseNotPresentWithBlobOperation")
		_, err = bb.SetMetadata(ctx, nil, nil)
		must(t, err)
		p, err = bb.GetProperties(ctx, nil)
		must(t, err)
		if *p.LeaseState != "available" {
			t.Fatalf("after write through broken lease: %s", *p.LeaseState)
		}
		_, err = lc.RenewLease(ctx, nil)
		mustCode(t, err, 409, "LeaseIdMismatchWithLeaseOperation")
		// Id on an unleased blob.
		_, err = bb.SetMetadata(ctx, nil, &blob.SetMetadataOptions{AccessConditions: withID(idA)})
		mustCode(t, err, 412, "LeaseNotPresentWithBlobOperation")
		// Copy onto a leased destination needs the id of an infinite lease.
		fixed := e.cc.NewBlockBlobClient("fixed")
		_, err = fixed.Upload(ctx, body([]byte("f")), nil)
		must(t, err)
		flc, err := lease.NewBlobClient(fixed, &lease.BlobClientOptions{LeaseID: ptr(idB)})
		must(t, err)
		_, err = flc.AcquireLease(ctx, 60, nil)
		must(t, err)
		_, err = fixed.StartCopyFromURL(ctx, bb.URL(), &blob.StartCopyFromURLOptions{AccessConditions: withID(idB)})
		mustCode(t, err, 412, "InfiniteLeaseDurationRequired")
		_, err = flc.AcquireLease(ctx, -1, nil)
		must(t, err)
		_, err = fixed.StartCopyFromURL(ctx, bb.URL(), &blob.StartCopyFromURLOptions{AccessConditions: withID(idB)})
		must(t, err)
		// Lease id on a create.
		_, err = e.cc.NewBlockBlobClient("new").Upload(ctx, body([]byte("x")), &blockblob.UploadOptions{AccessConditions: withID(idA)})
		mustCode(t, err, 412, "LeaseNotPresentWithBlobOperation")
	})
}

func TestContainerLeaseEnforcement(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		lc, err := lease.NewContainerClient(e.cc, &lease.ContainerClientOptions{LeaseID: ptr(idA)})
		must(t, err)
		acq, err := lc.AcquireLease(ctx, -1, nil)
		must(t, err)
		if *acq.LeaseID != idA {
			t.Fatalf("lease id %s", *acq.LeaseID)
		}
		// Only Delete Container needs the id; blobs inside are unaffected.
		_, err = e.cc.NewBlockBlobClient("b").Upload(ctx, body([]byte("x")), nil)
		must(t, err)
		_, err = e.cc.SetMetadata(ctx, nil)
		must(t, err)
		_, err = e.cc.Delete(ctx, nil)
		mustCode(t, err, 412, "LeaseIdMissing")
		_, err = e.cc.Delete(ctx, &container.DeleteOptions{AccessConditions: &container.AccessConditions{LeaseAccessConditions: &container.LeaseAccessConditions{LeaseID: ptr(idB)}}})
		mustCode(t, err, 412, "LeaseIdMismatchWithContainerOperation")
		_, err = e.cc.GetProperties(ctx, &container.GetPropertiesOptions{LeaseAccessConditions: &container.LeaseAccessConditions{LeaseID: ptr(idB)}})
		mustCode(t, err, 412, "LeaseIdMismatchWithContainerOperation")
		p, err := e.cc.GetProperties(ctx, nil)
		must(t, err)
		if *p.LeaseState != "leased" || *p.LeaseDuration != "infinite" {
			t.Fatalf("container lease %v %v", *p.LeaseState, *p.LeaseDuration)
		}
		// Blob leases do not block Delete Container.
		blc, err := lease.NewBlobClient(e.cc.NewBlockBlobClient("b"), nil)
		must(t, err)
		_, err = blc.AcquireLease(ctx, -1, nil)
		must(t, err)
		_, err = lc.ReleaseLease(ctx, nil)
		must(t, err)
		_, err = e.cc.Delete(ctx, &container.DeleteOptions{AccessConditions: &container.AccessConditions{LeaseAccessConditions: &container.LeaseAccessConditions{LeaseID: ptr(idA)}}})
		mustCode(t, err, 412, "LeaseNotPresentWithContainerOperation")
		_, err = e.cc.Delete(ctx, nil)
		must(t, err)
	})
}

// TestRaceLeaseAcquire: of N acquirers with different ids exactly one wins.
func TestRaceLeaseAcquire(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		bb := e.cc.NewBlockBlobClient("contended")
		_, err := bb.Upload(ctx, body([]byte("x")), nil)
		must(t, err)
		const n = 16
		var wins, losses atomic.Int32
		var winner atomic.Int32
		var wg sync.WaitGroup
		g := newStartGate(n)
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				lc, err := lease.NewBlobClient(bb, &lease.BlobClientOptions{LeaseID: ptr(fmt.Sprintf("%08d-0000-0000-0000-000000000000", i))})
				g.wait()
				if err != nil {
					t.Error(err)
					return
				}
				_, err = lc.AcquireLease(context.Background(), -1, nil)
				if err == nil {
					wins.Add(1)
					winner.Store(int32(i))
					return
				}
				if isCode(err, 409, "LeaseAlreadyPresent") {
					losses.Add(1)
					return
				}
				t.Error(err)
			}(i)
		}
		g.open()
		wg.Wait()
		if wins.Load() != 1 || losses.Load() != n-1 {
			t.Fatalf("wins %d losses %d", wins.Load(), losses.Load())
		}
		// The stored lease is the winner's: its id lets a write through,
		// any other id is refused.
		w := int(winner.Load())
		id := func(i int) *string { return ptr(fmt.Sprintf("%08d-0000-0000-0000-000000000000", i)) }
		_, err = bb.SetMetadata(ctx, map[string]*string{"k": ptr("v")}, &blob.SetMetadataOptions{AccessConditions: &blob.AccessConditions{LeaseAccessConditions: &blob.LeaseAccessConditions{LeaseID: id(w)}}})
		must(t, err)
		_, err = bb.SetMetadata(ctx, nil, &blob.SetMetadataOptions{AccessConditions: &blob.AccessConditions{LeaseAccessConditions: &blob.LeaseAccessConditions{LeaseID: id((w + 1) % n)}}})
		mustCode(t, err, 412, "LeaseIdMismatchWithBlobOperation")
	})
}

package admin

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"

	"github.com/lazuli-storage/lazuli/emulator"
	"github.com/lazuli-storage/lazuli/internal/engine/pgstore/pgtest"
)

type clockState struct {
	Now      time.Time `json:"now"`
	Offset   string    `json:"offset"`
	OffsetMs int64     `json:"offsetMs"`
}

func advance(t *testing.T, emu *emulator.Emulator, d string) clockState {
	t.Helper()
	var st clockState
	adminCall(t, "POST", emu.AdminURL()+"/clock", map[string]string{"advance": d}, 200, &st)
	return st
}

// engines are the setups every clock test runs on.
var engines = []struct {
	name string
	opts func(t *testing.T) emulator.Options
}{
	{"mem", func(*testing.T) emulator.Options { return emulator.Options{InMemory: true} }},
	{"log", func(t *testing.T) emulator.Options { return emulator.Options{Dir: t.TempDir(), EngineKind: "log"} }},
}

// TestClockGetPostDelete: the clock's state, moved forward, set, and back.
func TestClockGetPostDelete(t *testing.T) {
	emu := startTCP(t, emulator.Options{InMemory: true})
	var st clockState
	adminCall(t, "GET", emu.AdminURL()+"/clock", nil, 200, &st)
	if st.OffsetMs != 0 || time.Since(st.Now).Abs() > 5*time.Second {
		t.Fatalf("initial clock: %+v", st)
	}
	st = advance(t, emu, "20s")
	if st.OffsetMs < 19_999 || st.OffsetMs > 20_001 || st.Offset != "20s" {
		t.Errorf("after advance 20s: %+v", st)
	}
	target := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	adminCall(t, "POST", emu.AdminURL()+"/clock", map[string]string{"set": target.Format(time.RFC3339)}, 200, &st)
	if st.Now.Sub(target).Abs() > 5*time.Second {
		t.Errorf("after set: %+v", st)
	}
	adminCall(t, "DELETE", emu.AdminURL()+"/clock", nil, 200, &st)
	if st.OffsetMs != 0 {
		t.Errorf("after DELETE: %+v", st)
	}
	for _, bad := range []map[string]string{{"advance": "soon"}, {"set": "tomorrow"}, {}, {"advance": "1s", "set": "2030-01-01T00:00:00Z"}} {
		adminCall(t, "POST", emu.AdminURL()+"/clock", bad, 400, nil)
	}
}

// TestClockMovesLeasesVisibilitySAS: a 15 s blob lease expires when the
// clock moves 20 s; a dequeued message reappears after its visibility
// timeout and an expired one goes; a SAS valid for a minute is refused
// two minutes later; the times lazuli writes follow the clock.
func TestClockMovesLeasesVisibilitySAS(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			emu := startTCP(t, e.opts(t))
			runClockScenario(t, []*emulator.Emulator{emu})
		})
	}
}

// TestClockIsSharedByInstances: two instances on one PostgreSQL database
// follow one clock; the scenario moves it through the first and checks
// through the second.
func TestClockIsSharedByInstances(t *testing.T) {
	url := pgtest.NewDatabase(t)
	a := startTCP(t, emulator.Options{EngineKind: "postgres", PostgresURL: url})
	b := startTCP(t, emulator.Options{EngineKind: "postgres", PostgresURL: url})
	runClockScenario(t, []*emulator.Emulator{a, b})
	// The database answers the readiness check's ping, and the engine's
	// figures are in the scrape.
	if code := httpGet(t, b.AdminURL()+"/readyz"); code != 200 {
		t.Errorf("readyz on PostgreSQL: %d", code)
	}
	resp, err := http.Get(b.AdminURL() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	text, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{"lazuli_engine_transactions_total ", "lazuli_engine_retries_total ", "lazuli_engine_connections "} {
		if !bytes.Contains(text, []byte(want)) {
			t.Errorf("no %q in the scrape of a PostgreSQL instance", want)
		}
	}
}

// runClockScenario moves the clock through the first emulator and checks
// its effects through the last (the same one on a single instance).
func runClockScenario(t *testing.T, emus []*emulator.Emulator) {
	ctx := t.Context()
	first, last := emus[0], emus[len(emus)-1]
	// moveClock advances the clock and waits until every instance sees it.
	moveClock := func(d string) {
		t.Helper()
		want := advance(t, first, d).OffsetMs
		for _, emu := range emus {
			deadline := time.Now().Add(5 * time.Second)
			for {
				var st clockState
				adminCall(t, "GET", emu.AdminURL()+"/clock", nil, 200, &st)
				if st.OffsetMs == want {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("instance at %s still shows offset %s, want %d ms", emu.AdminURL(), st.Offset, want)
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
	}
	blobA, _ := blobClient(t, first, -1)
	blobB, _ := blobClient(t, last, -1)

	// Blob lease: 15 s, then 20 s pass.
	if _, err := blobA.CreateContainer(ctx, "clock", nil); err != nil {
		t.Fatal(err)
	}
	up, err := blobA.UploadBuffer(ctx, "clock", "leased", []byte("x"), nil)
	if err != nil {
		t.Fatal(err)
	}
	bcA := blobA.ServiceClient().NewContainerClient("clock").NewBlobClient("leased")
	bcB := blobB.ServiceClient().NewContainerClient("clock").NewBlobClient("leased")
	la, _ := lease.NewBlobClient(bcA, &lease.BlobClientOptions{LeaseID: to.Ptr("11111111-1111-1111-1111-111111111111")})
	lb, _ := lease.NewBlobClient(bcB, &lease.BlobClientOptions{LeaseID: to.Ptr("22222222-2222-2222-2222-222222222222")})
	if _, err := la.AcquireLease(ctx, 15, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := lb.AcquireLease(ctx, 15, nil); !bloberror.HasCode(err, bloberror.LeaseAlreadyPresent) {
		t.Fatalf("second acquire within the lease: %v", err)
	}

	// Queue: a message dequeued for 30 s, another that lives 60 s.
	qcred, _ := azqueue.NewSharedKeyCredential(emulator.Account, emulator.Key)
	qsA, _ := azqueue.NewServiceClientWithSharedKeyCredential(first.Endpoint(emulator.Queue), qcred, nil)
	qsB, _ := azqueue.NewServiceClientWithSharedKeyCredential(last.Endpoint(emulator.Queue), qcred, nil)
	if _, err := qsA.CreateQueue(ctx, "clock", nil); err != nil {
		t.Fatal(err)
	}
	qA, qB := qsA.NewQueueClient("clock"), qsB.NewQueueClient("clock")
	if _, err := qA.EnqueueMessage(ctx, "hidden", nil); err != nil {
		t.Fatal(err)
	}
	got, err := qA.DequeueMessage(ctx, &azqueue.DequeueMessageOptions{VisibilityTimeout: to.Ptr(int32(30))})
	if err != nil || len(got.Messages) != 1 || *got.Messages[0].MessageText != "hidden" {
		t.Fatalf("dequeue: %v %+v", err, got)
	}
	if _, err := qA.EnqueueMessage(ctx, "short-lived", &azqueue.EnqueueMessageOptions{TimeToLive: to.Ptr(int32(60))}); err != nil {
		t.Fatal(err)
	}

	// A SAS that expires in a minute works now.
	cred, _ := azblob.NewSharedKeyCredential(emulator.Account, emulator.Key)
	var now clockState
	adminCall(t, "GET", first.AdminURL()+"/clock", nil, 200, &now)
	qp, err := sas.BlobSignatureValues{Protocol: sas.ProtocolHTTPSandHTTP, ExpiryTime: now.Now.Add(time.Minute),
		ContainerName: "clock", BlobName: "leased", Permissions: (&sas.BlobPermissions{Read: true}).String()}.SignWithSharedKey(cred)
	if err != nil {
		t.Fatal(err)
	}
	sasURL := last.Endpoint(emulator.Blob) + "/clock/leased?" + qp.Encode()
	if code := httpGet(t, sasURL); code != 200 {
		t.Fatalf("SAS within its window: %d", code)
	}

	moveClock("20s")
	if _, err := lb.AcquireLease(ctx, -1, nil); err != nil {
		t.Errorf("acquire after the 15 s lease expired (clock +20 s): %v", err)
	}
	// An infinite lease broken with a 10 s break period is free 10 s on.
	if _, err := la.BreakLease(ctx, &lease.BlobBreakOptions{BreakPeriod: to.Ptr(int32(10))}); err != nil {
		t.Fatal(err)
	}
	if _, err := la.AcquireLease(ctx, 15, nil); !bloberror.HasCode(err, bloberror.LeaseAlreadyPresent) {
		t.Errorf("acquire while the lease is breaking: %v", err)
	}

	moveClock("11s") // 31 s in all: past the 30 s visibility timeout, and the break period
	if _, err := la.AcquireLease(ctx, 15, nil); err != nil {
		t.Errorf("acquire after the break period: %v", err)
	}
	peek, err := qB.PeekMessages(ctx, &azqueue.PeekMessagesOptions{NumberOfMessages: to.Ptr(int32(32))})
	if err != nil {
		t.Fatal(err)
	}
	visible := map[string]int64{}
	for _, m := range peek.Messages {
		visible[*m.MessageText] = *m.DequeueCount
	}
	if n, ok := visible["hidden"]; !ok || n != 1 || len(visible) != 2 {
		t.Errorf("messages visible after the visibility timeout: %v, want hidden (dequeued once) and short-lived", visible)
	}

	moveClock("2m") // the SAS and the 60 s message have expired
	if code := httpGet(t, sasURL); code != 403 {
		t.Errorf("SAS two minutes after its expiry: %d, want 403", code)
	}
	peek, err = qB.PeekMessages(ctx, &azqueue.PeekMessagesOptions{NumberOfMessages: to.Ptr(int32(32))})
	if err != nil {
		t.Fatal(err)
	}
	if len(peek.Messages) != 1 {
		t.Errorf("%d messages visible two minutes on, want 1 (hidden)", len(peek.Messages))
	}
	for _, m := range peek.Messages {
		if *m.MessageText == "short-lived" {
			t.Errorf("a message past its time to live is still there")
		}
	}

	// Times lazuli writes follow the clock: a blob's Last-Modified and an
	// entity's Timestamp, an hour ahead.
	moveClock("1h")
	adminCall(t, "GET", last.AdminURL()+"/clock", nil, 200, &now)
	up2, err := blobB.UploadBuffer(ctx, "clock", "later", []byte("y"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := up2.LastModified.Sub(now.Now).Abs(); d > 5*time.Second {
		t.Errorf("Last-Modified %v, clock %v", up2.LastModified, now.Now)
	}
	if up2.LastModified.Sub(*up.LastModified) < time.Hour {
		t.Errorf("Last-Modified %v is not an hour after %v", up2.LastModified, up.LastModified)
	}
	tcred, _ := aztables.NewSharedKeyCredential(emulator.Account, emulator.Key)
	ts, _ := aztables.NewServiceClientWithSharedKey(last.Endpoint(emulator.Table), tcred, nil)
	if _, err := ts.CreateTable(ctx, "clock", nil); err != nil {
		t.Fatal(err)
	}
	tc := ts.NewClient("clock")
	if _, err := tc.AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"r"}`), nil); err != nil {
		t.Fatal(err)
	}
	ent, err := tc.GetEntity(ctx, "p", "r", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(ent.Value, []byte(now.Now.UTC().Format("2006-01-02T15"))) {
		t.Errorf("entity %s: Timestamp not at the clock's %v", ent.Value, now.Now)
	}

	// Back to real time: writes keep ETags unique and Last-Modified does
	// not go back.
	etags := map[azcore.ETag]bool{*up2.ETag: true}
	adminCall(t, "DELETE", first.AdminURL()+"/clock", nil, 200, nil)
	moveClock("0s")
	for range 3 {
		r, err := blobB.UploadBuffer(ctx, "clock", "later", []byte("z"), nil)
		if err != nil {
			t.Fatal(err)
		}
		if etags[*r.ETag] {
			t.Errorf("ETag %s handed out again after the clock went back", *r.ETag)
		}
		etags[*r.ETag] = true
		if r.LastModified.Before(*up2.LastModified) {
			t.Errorf("Last-Modified went back: %v after %v", r.LastModified, up2.LastModified)
		}
	}
	// Deleted and created again after the clock went back: still a new ETag.
	if _, err := blobB.DeleteBlob(ctx, "clock", "later", nil); err != nil {
		t.Fatal(err)
	}
	r, err := blobB.UploadBuffer(ctx, "clock", "later", []byte("w"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if etags[*r.ETag] {
		t.Errorf("ETag %s handed out again after delete and the clock going back", *r.ETag)
	}
}

func httpGet(t *testing.T, url string) int {
	t.Helper()
	req, _ := http.NewRequestWithContext(context.Background(), "GET", url, nil)
	req.Header.Set("x-ms-version", "2025-11-05")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

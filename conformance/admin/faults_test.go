package admin

import (
	"bytes"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"

	"github.com/lazuli-storage/lazuli/emulator"
)

type faultState struct {
	ID        int    `json:"id"`
	Service   string `json:"service"`
	Operation string `json:"operation"`
	Remaining *int   `json:"remaining"`
	Hits      int64  `json:"hits"`
}

// TestInjected503IsRetriedBySDK: one injected 503 ServerBusy on Put Blob
// is retried by azblob (retries on), which then succeeds: two attempts.
func TestInjected503IsRetriedBySDK(t *testing.T) {
	emu := startTCP(t, emulator.Options{InMemory: true})
	c, attempts := blobClient(t, emu, 3)
	ctx := t.Context()
	if _, err := c.CreateContainer(ctx, "faults", nil); err != nil {
		t.Fatal(err)
	}
	var states []faultState
	adminCall(t, "POST", emu.AdminURL()+"/faults", map[string]any{"service": "blob", "operation": "PutBlob", "status": 503, "count": 1}, 201, &states)
	if len(states) != 1 || states[0].Remaining == nil || *states[0].Remaining != 1 {
		t.Fatalf("rules after POST: %+v", states)
	}
	attempts.n.Store(0)
	if _, err := c.UploadBuffer(ctx, "faults", "b", []byte("hello"), nil); err != nil {
		t.Fatalf("upload with one injected 503: %v", err)
	}
	if n := attempts.n.Load(); n != 2 {
		t.Errorf("attempts: %d, want 2 (a 503, then the retry)", n)
	}
	adminCall(t, "GET", emu.AdminURL()+"/faults", nil, 200, &states)
	if len(states) != 1 || *states[0].Remaining != 0 || states[0].Hits != 1 {
		t.Errorf("rules after the hit: %+v", states)
	}
	// The error the first attempt saw is Azure's, with the SDK's code.
	adminCall(t, "POST", emu.AdminURL()+"/faults", map[string]any{"service": "blob", "operation": "GetBlob", "status": 503}, 201, nil)
	noRetry, _ := blobClient(t, emu, -1)
	_, err := noRetry.DownloadStream(ctx, "faults", "b", nil)
	var re *azcore.ResponseError
	if !errors.As(err, &re) || re.StatusCode != 503 || !bloberror.HasCode(err, bloberror.ServerBusy) {
		t.Fatalf("Get Blob under a 503 rule: %v", err)
	}
	adminCall(t, "DELETE", emu.AdminURL()+"/faults", nil, 200, &states)
	if len(states) != 0 {
		t.Errorf("rules after DELETE: %+v", states)
	}
	if _, err := noRetry.DownloadStream(ctx, "faults", "b", nil); err != nil {
		t.Errorf("Get Blob after DELETE /faults: %v", err)
	}
}

// TestInjectedResetIsRetriedBySDK: a connection cut mid-response, on an
// answer with a body (Get Blob) and without one (Put Blob), is retried.
func TestInjectedResetIsRetriedBySDK(t *testing.T) {
	emu := startTCP(t, emulator.Options{InMemory: true})
	c, attempts := blobClient(t, emu, 3)
	ctx := t.Context()
	if _, err := c.CreateContainer(ctx, "resets", nil); err != nil {
		t.Fatal(err)
	}
	adminCall(t, "POST", emu.AdminURL()+"/faults", map[string]any{"operation": "PutBlob", "reset": true, "count": 1}, 201, nil)
	data := bytes.Repeat([]byte("0123456789"), 1000)
	attempts.n.Store(0)
	if _, err := c.UploadBuffer(ctx, "resets", "b", data, nil); err != nil {
		t.Fatalf("upload with one reset: %v", err)
	}
	if n := attempts.n.Load(); n != 2 {
		t.Errorf("Put Blob attempts: %d, want 2", n)
	}
	adminCall(t, "POST", emu.AdminURL()+"/faults", map[string]any{"operation": "GetBlob", "reset": true, "count": 1}, 201, nil)
	attempts.n.Store(0)
	resp, err := c.DownloadStream(ctx, "resets", "b", nil)
	if err != nil {
		t.Fatalf("download with one reset: %v", err)
	}
	// The SDK resumes a cut download with a range request.
	body := resp.NewRetryReader(ctx, &blob.RetryReaderOptions{MaxRetries: 3})
	var got bytes.Buffer
	_, err = got.ReadFrom(body)
	body.Close()
	if err != nil || !bytes.Equal(got.Bytes(), data) {
		t.Fatalf("download with one reset: %v, %d bytes", err, got.Len())
	}
	if n := attempts.n.Load(); n != 2 {
		t.Errorf("Get Blob attempts: %d, want 2 (cut mid-body, then the retry)", n)
	}
}

// TestThrottlingAnswersServerBusy: beyond ratePerSecond, requests are
// answered 503 ServerBusy; within it they pass.
func TestThrottlingAnswersServerBusy(t *testing.T) {
	emu := startTCP(t, emulator.Options{InMemory: true})
	c, _ := blobClient(t, emu, -1)
	ctx := t.Context()
	if _, err := c.CreateContainer(ctx, "throttle", nil); err != nil {
		t.Fatal(err)
	}
	adminCall(t, "POST", emu.AdminURL()+"/faults", map[string]any{"service": "blob", "ratePerSecond": 5}, 201, nil)
	ok, busy := 0, 0
	for range 20 {
		_, err := c.UploadBuffer(ctx, "throttle", "b", []byte("x"), nil)
		switch {
		case err == nil:
			ok++
		case bloberror.HasCode(err, bloberror.ServerBusy):
			busy++
		default:
			t.Fatalf("upload: %v", err)
		}
	}
	// 20 requests in well under a second: the bucket of 5 lets 5 (or a
	// few more as it refills) through.
	if ok < 5 || ok > 10 || busy < 10 {
		t.Errorf("%d passed, %d throttled; want about 5 passed", ok, busy)
	}
	time.Sleep(1100 * time.Millisecond)
	if _, err := c.UploadBuffer(ctx, "throttle", "b", []byte("x"), nil); err != nil {
		t.Errorf("after a second: %v", err)
	}
}

// TestFaultLatencyAndBadRules: latencyMs delays the request; rules that
// cannot work are refused with a reason.
func TestFaultLatencyAndBadRules(t *testing.T) {
	emu := startTCP(t, emulator.Options{InMemory: true})
	c, _ := blobClient(t, emu, -1)
	ctx := t.Context()
	adminCall(t, "POST", emu.AdminURL()+"/faults", map[string]any{"operation": "CreateContainer", "latencyMs": 300}, 201, nil)
	start := time.Now()
	if _, err := c.CreateContainer(ctx, "slow", nil); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Errorf("Create Container took %v with 300 ms added", d)
	}
	for _, bad := range []string{
		`{"status":418}`, `{"service":"dfs","status":503}`, `{"errorCode":"NoSuchCode"}`, `{"probability":2,"status":503}`,
		`{"reset":true,"status":503}`, `{}`, `{"status":503,"bogus":1}`, `[{"status":503},{"status":200}]`,
	} {
		resp, err := http.Post(emu.AdminURL()+"/faults", "application/json", strings.NewReader(bad))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 400 {
			t.Errorf("POST %s: %d, want 400", bad, resp.StatusCode)
		}
	}
	var states []faultState
	adminCall(t, "GET", emu.AdminURL()+"/faults", nil, 200, &states)
	if len(states) != 1 {
		t.Errorf("a refused batch left rules: %+v", states)
	}
	// A named code sets the status: OperationTimedOut is 500.
	adminCall(t, "POST", emu.AdminURL()+"/faults", map[string]any{"operation": "GetContainerProperties", "errorCode": "OperationTimedOut", "probability": 1}, 201, nil)
	_, err := c.ServiceClient().NewContainerClient("slow").GetProperties(ctx, nil)
	if !bloberror.HasCode(err, bloberror.OperationTimedOut) {
		t.Errorf("Get Container Properties: %v", err)
	}
}

// Package admin tests the admin listener through the official SDKs: the
// test clock and fault injection as a user's tests would drive them.
package admin

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"

	"github.com/lazuli-storage/lazuli/emulator"
)

// startTCP starts lazuli on loopback ports with its admin listener.
func startTCP(t *testing.T, o emulator.Options) *emulator.Emulator {
	t.Helper()
	o.Admin = true
	emu, err := emulator.Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { emu.Close() })
	return emu
}

// adminCall sends a JSON request to the admin listener and decodes the
// answer into out (when not nil); it fails the test on an unexpected
// status.
func adminCall(t *testing.T, method, url string, body any, want int, out any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, url, rd)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("%s %s: %d, want %d: %s", method, url, resp.StatusCode, want, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: %v: %s", method, url, err, b)
		}
	}
}

// countingTransport counts the requests the SDK sends, retries included.
type countingTransport struct {
	n    atomic.Int64
	next http.Client
}

func (c *countingTransport) Do(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.next.Do(r)
}

// blobClient is an azblob client of emu with the SDK's retries on (fast
// ones), counting its attempts.
func blobClient(t *testing.T, emu *emulator.Emulator, tries int32) (*azblob.Client, *countingTransport) {
	t.Helper()
	cred, err := azblob.NewSharedKeyCredential(emulator.Account, emulator.Key)
	if err != nil {
		t.Fatal(err)
	}
	ct := &countingTransport{}
	c, err := azblob.NewClientWithSharedKeyCredential(emu.Endpoint(emulator.Blob), cred, &azblob.ClientOptions{ClientOptions: azcore.ClientOptions{
		Transport: ct,
		Retry:     policy.RetryOptions{MaxRetries: tries, RetryDelay: 10e6, MaxRetryDelay: 50e6},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return c, ct
}

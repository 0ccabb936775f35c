package queue

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"

	"github.com/lazuli-storage/lazuli/conformance/harness"
	"github.com/lazuli-storage/lazuli/internal/auth/sharedkey"
	"github.com/lazuli-storage/lazuli/internal/queue"
)

// Raw is a raw HTTP response.
type Raw struct {
	Status int
	Header http.Header
	Body   string
}

// do sends a Shared Key signed request to the target's queue endpoint;
// path is relative to the account ("" for the service).
func do(t *testing.T, tg *harness.Target, method, path, body string, hdr ...string) *Raw {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(harness.Ctx(t), method, tg.QueueURL+"/"+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("x-ms-version", "2023-11-03")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	if method != http.MethodOptions {
		if err := sharedkey.Sign(req, tg.Account, tg.KeyBytes(), false); err != nil {
			t.Fatal(err)
		}
	}
	resp, err := tg.HTTP.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return &Raw{Status: resp.StatusCode, Header: resp.Header, Body: string(b)}
}

// MustStatus fails unless r has the status and (when code is set) the
// error code both in x-ms-error-code and in the XML body.
func MustStatus(t *testing.T, r *Raw, status int, code string) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d; body: %s", r.Status, status, r.Body)
	}
	if code != "" {
		if got := r.Header.Get("x-ms-error-code"); got != code {
			t.Fatalf("x-ms-error-code %q, want %q; body %s", got, code, r.Body)
		}
		if !strings.Contains(r.Body, "<Code>"+code+"</Code>") {
			t.Fatalf("body lacks code %s: %s", code, r.Body)
		}
	}
}

// MustCode fails unless err is an Azure response error with status and code.
func MustCode(t *testing.T, err error, status int, code string) {
	t.Helper()
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		t.Fatalf("err = %v, want %d %s", err, status, code)
	}
	if re.StatusCode != status || re.ErrorCode != code {
		t.Fatalf("got %d %s, want %d %s", re.StatusCode, re.ErrorCode, status, code)
	}
}

// MustNoErr fails on err.
func MustNoErr(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// MustQueue creates a fresh queue and returns its client.
func MustQueue(t *testing.T, tg *harness.Target, prefix string) (*azqueue.QueueClient, string) {
	t.Helper()
	name := harness.UniqueName(prefix)
	svc := tg.Queue(t)
	_, err := svc.CreateQueue(harness.Ctx(t), name, nil)
	MustNoErr(t, err)
	t.Cleanup(func() { svc.DeleteQueue(harness.Ctx(t), name, nil) })
	return svc.NewQueueClient(name), name
}

var (
	idRE      = regexp.MustCompile(`<MessageId>([^<]*)</MessageId>`)
	receiptRE = regexp.MustCompile(`<PopReceipt>([^<]*)</PopReceipt>`)
)

// first returns the first submatch of re in s, failing when absent.
func first(t *testing.T, re *regexp.Regexp, s string) string {
	t.Helper()
	m := re.FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("%s not found in %s", re, s)
	}
	return m[1]
}

func ptr[T any](v T) *T { return &v }

// fillQueue puts many messages into queue name and returns how many: on
// lazuli targets n through the domain's bulk path (straight into the
// target's engine), on the remote target a few through the SDK.
func fillQueue(t *testing.T, tg *harness.Target, qc *azqueue.QueueClient, name string, n int) int {
	t.Helper()
	ctx := harness.Ctx(t)
	if tg.Emulator == nil {
		n = 50
		for i := range n {
			_, err := qc.EnqueueMessage(ctx, fmt.Sprint(i), nil)
			MustNoErr(t, err)
		}
		return n
	}
	const batch = 5000
	svc := queue.New(tg.Emulator.Engine(), nil)
	nms := make([]queue.NewMessage, batch)
	for i := range nms {
		nms[i] = queue.NewMessage{Text: fmt.Sprint("bulk-", i)}
	}
	for done := 0; done < n; done += batch {
		if _, err := svc.PutMessages(ctx, tg.Account, name, nms[:min(batch, n-done)]); err != nil {
			t.Fatal(err)
		}
	}
	return n
}

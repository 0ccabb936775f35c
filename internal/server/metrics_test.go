package server

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/lazuli-storage/lazuli/internal/auth"
	"github.com/lazuli-storage/lazuli/internal/auth/sharedkey"
	"github.com/lazuli-storage/lazuli/internal/smb/smbtest"
)

// signedDo sends a Shared Key request to a service of s.
func signedDo(t *testing.T, s *Server, svc auth.Service, method, path string, body []byte, hdr map[string]string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(method, "http://"+s.Addr(svc)+"/devstoreaccount1/"+path, bytes.NewReader(body))
	req.Header.Set("x-ms-version", "2025-11-05")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	if err := sharedkey.Sign(req, auth.DevAccount, auth.DevelopmentAccount().Keys[0], false); err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

// TestMetricsCountRequestsAndPassPromtool: /metrics counts requests by
// service, operation, status and error code, reports the engine's and
// SMB's figures, and is valid Prometheus text format.
func TestMetricsCountRequestsAndPassPromtool(t *testing.T) {
	s, err := New(context.Background(), Config{Location: t.TempDir(), Sync: true, BlobAddr: "127.0.0.1:0", QueueAddr: "127.0.0.1:0",
		FileAddr: "127.0.0.1:0", SMBAddr: "127.0.0.1:0", AdminAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if r := signedDo(t, s, auth.Blob, "PUT", "metrics?restype=container", nil, nil); r.StatusCode != 201 {
		t.Fatalf("Create Container: %d", r.StatusCode)
	}
	for range 3 {
		if r := signedDo(t, s, auth.Blob, "PUT", "metrics/b", make([]byte, 1024), map[string]string{"x-ms-blob-type": "BlockBlob"}); r.StatusCode != 201 {
			t.Fatalf("Put Blob: %d", r.StatusCode)
		}
	}
	if r := signedDo(t, s, auth.Blob, "GET", "metrics/nosuch", nil, nil); r.StatusCode != 404 {
		t.Fatalf("Get Blob: %d", r.StatusCode)
	}
	if r := signedDo(t, s, auth.Queue, "PUT", "metricsq", nil, nil); r.StatusCode != 201 {
		t.Fatalf("Create Queue: %d", r.StatusCode)
	}
	// Requests no operation claims count under one label, whatever they
	// carry.
	for _, comp := range []string{"nosuch1", "nosuch2"} {
		if r := signedDo(t, s, auth.Blob, "GET", "metrics/b?comp="+comp, nil, nil); r.StatusCode != 400 {
			t.Fatalf("comp=%s: %d", comp, r.StatusCode)
		}
	}
	// An SMB session with two opens, one holding two byte-range locks.
	if r := signedDo(t, s, auth.File, "PUT", "metricsshare?restype=share", nil, nil); r.StatusCode != 201 {
		t.Fatalf("Create Share: %d", r.StatusCode)
	}
	c, err := smbtest.Dial(s.SMBAddr(), auth.DevAccount, auth.DevKey)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.TreeConnect("metricsshare"); err != nil {
		t.Fatal(err)
	}
	const rw, shareAll = 0x1 | 0x2, 0x7
	f1, st := c.Create("a.txt", rw, shareAll, 3, 0x40)
	if st != 0 {
		t.Fatalf("create a.txt: %#x", st)
	}
	if _, st := c.Create("b.txt", rw, shareAll, 3, 0x40); st != 0 {
		t.Fatalf("create b.txt: %#x", st)
	}
	const exclusive, failImmediately = 0x2, 0x10
	for _, off := range []uint64{0, 100} {
		if st := c.Lock(f1, off, 10, exclusive|failImmediately); st != 0 {
			t.Fatalf("lock at %d: %#x", off, st)
		}
	}
	text := scrape(t, s)
	for _, want := range []string{
		`lazuli_requests_total{error_code="",operation="PutBlob",service="blob",status="201"} 3`,
		`lazuli_requests_total{error_code="BlobNotFound",operation="GetBlob",service="blob",status="404"} 1`,
		`lazuli_requests_total{error_code="",operation="CreateQueue",service="queue",status="201"} 1`,
		`lazuli_requests_total{error_code="InvalidQueryParameterValue",operation="Unrouted",service="blob",status="400"} 2`,
		`lazuli_request_duration_seconds_count{operation="PutBlob",service="blob"} 3`,
		`lazuli_request_body_bytes_total{operation="PutBlob",service="blob"} 3072`,
		"lazuli_engine_fsyncs_total ",
		"lazuli_engine_log_bytes ",
		"lazuli_engine_compactions_total 0",
		"lazuli_smb_connections 1",
		"lazuli_smb_sessions 1",
		"lazuli_smb_opens 2",
		"lazuli_smb_byte_range_locks 2",
		"lazuli_smb_leases 0",
		"lazuli_smb_lease_breaks_total 0",
		"go_goroutines ",
	} {
		if !strings.Contains(string(text), want) {
			t.Errorf("no %q in /metrics", want)
		}
	}
	if strings.Contains(string(text), "nosuch") {
		t.Error("a client's comp value became a label")
	}
	promtoolCheck(t, text)

	// Unlocked and closed, the figures fall back.
	if st := c.Lock(f1, 0, 10, 0x4); st != 0 {
		t.Fatalf("unlock: %#x", st)
	}
	if st := c.CloseFile(f1); st != 0 {
		t.Fatalf("close: %#x", st)
	}
	text = scrape(t, s)
	for _, want := range []string{"lazuli_smb_opens 1", "lazuli_smb_byte_range_locks 0"} {
		if !strings.Contains(string(text), want) {
			t.Errorf("no %q in /metrics after unlock and close", want)
		}
	}
}

func scrape(t *testing.T, s *Server) []byte {
	t.Helper()
	resp, err := http.Get("http://" + s.AdminAddr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Errorf("Content-Type %q", resp.Header.Get("Content-Type"))
	}
	text, _ := io.ReadAll(resp.Body)
	return text
}

// promtoolCheck runs `promtool check metrics` on a scrape. scripts/test.sh
// makes sure promtool is installed.
func promtoolCheck(t *testing.T, text []byte) {
	t.Helper()
	path, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("LAZULI_REQUIRE_PROMTOOL") != "" {
			t.Fatal("promtool is not installed (Debian package prometheus)")
		}
		t.Log("promtool not installed: the scrape's format is not checked")
		return
	}
	cmd := exec.Command(path, "check", "metrics")
	cmd.Stdin = bytes.NewReader(text)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}

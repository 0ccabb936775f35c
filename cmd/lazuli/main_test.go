package main

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// builtBinary is the command compiled once for all process tests.
var builtBinary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "lazuli-test-bin")
	if err != nil {
		panic(err)
	}
	bin := filepath.Join(dir, "lazuli")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	builtBinary = bin
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// buildLazuli returns the compiled command.
func buildLazuli(t *testing.T) string {
	t.Helper()
	return builtBinary
}

var readyLine = regexp.MustCompile(`^lazuli: blob (\S+) queue (\S+) table (\S+) file (\S+)(?: smb \S+)?(?: web \S+)?(?: admin (\S+))?$`)

// startLazuli runs the binary and returns the four listen addresses.
func startLazuli(t *testing.T, bin string, args ...string) (*exec.Cmd, []string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	sc := bufio.NewScanner(stderr)
	found := make(chan []string, 1)
	go func() {
		for sc.Scan() {
			if m := readyLine.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1:]
			}
		}
	}()
	select {
	case addrs := <-found:
		go io.Copy(io.Discard, stderr)
		return cmd, addrs
	case <-time.After(20 * time.Second):
		t.Fatal("lazuli did not report its addresses")
	}
	return nil, nil
}

func TestPortZeroAndAzureErrorsAndCleanShutdown(t *testing.T) {
	bin := buildLazuli(t)
	cmd, addrs := startLazuli(t, bin, "--inMemoryPersistence", "--blobPort", "0", "--queuePort", "0",
		"--tablePort", "0", "--filePort", "0", "--smbPort", "0", "--adminPort", "0", "--silent")
	for _, a := range addrs[:4] {
		if strings.HasSuffix(a, ":0") {
			t.Fatalf("port 0 was not resolved: %v", addrs)
		}
		resp, err := http.Get("http://" + a + "/devstoreaccount1/nosuch/thing?comp=unknown")
		if err != nil {
			t.Fatalf("%s: %v", a, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode < 400 || resp.Header.Get("x-ms-error-code") == "" {
			t.Errorf("%s: status %d, code %q", a, resp.StatusCode, resp.Header.Get("x-ms-error-code"))
		}
	}
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("no exit after SIGTERM")
	}
}

func TestBadFlagsExitNonZero(t *testing.T) {
	if code := run([]string{"--cert", "only-cert.pem"}, io.Discard); code == 0 {
		t.Fatal("--cert without --key accepted")
	}
	if code := run([]string{"--noSuchFlag"}, io.Discard); code == 0 {
		t.Fatal("unknown flag accepted")
	}
}

// TestAdminListenerAndJSONLog: the startup line ends with the admin
// address, which serves /healthz, and --logFormat json writes JSON lines.
func TestAdminListenerAndJSONLog(t *testing.T) {
	bin := buildLazuli(t)
	log := startLazuliLog(t, bin, "--inMemoryPersistence", "--blobPort", "0", "--queuePort", "0",
		"--tablePort", "0", "--filePort", "0", "--smbPort", "-1", "--adminPort", "0", "--logFormat", "json")
	var adminAddr string
	for _, line := range strings.Split(log(), "\n") {
		if m := readyLine.FindStringSubmatch(line); m != nil {
			adminAddr = m[5]
		}
	}
	if adminAddr == "" {
		t.Fatalf("no admin address in the startup line:\n%s", log())
	}
	resp, err := http.Get("http://" + adminAddr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("healthz: %d", resp.StatusCode)
	}
	if !strings.Contains(log(), `{"time":`) || !strings.Contains(log(), `"msg":"lazuli ready"`) {
		t.Errorf("no JSON log lines:\n%s", log())
	}
	if code := run([]string{"--logFormat", "xml"}, io.Discard); code != 2 {
		t.Errorf("--logFormat xml: exit %d, want 2", code)
	}
	if code := run([]string{"--logLevel", "loud"}, io.Discard); code != 2 {
		t.Errorf("--logLevel loud: exit %d, want 2", code)
	}
}

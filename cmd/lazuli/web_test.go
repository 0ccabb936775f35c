package main

import (
	"bufio"
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"testing"
	"time"
)

var webReadyLine = regexp.MustCompile(`^lazuli: blob \S+ queue \S+ table \S+ file \S+ smb off web (\S+) admin \S+$`)

// TestWebPort: --webPort serves the static website endpoint, shown as
// "web <addr>" between smb and admin in the line scripts parse; the site
// is off until Set Blob Service Properties enables it.
func TestWebPort(t *testing.T) {
	bin := buildLazuli(t)
	cmd := exec.Command(bin, "--inMemoryPersistence", "--blobPort", "0", "--queuePort", "0", "--tablePort", "0", "--filePort", "0",
		"--smbPort", "-1", "--adminPort", "0", "--webPort", "0", "--silent")
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := webReadyLine.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	var addr string
	select {
	case addr = <-found:
	case <-time.After(20 * time.Second):
		t.Fatal("no ready line with the web address")
	}
	resp, err := http.Get("http://" + addr + "/devstoreaccount1/")
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound || resp.Header.Get("x-ms-error-code") != "WebsiteDisabled" {
		t.Fatalf("web endpoint: %d %q", resp.StatusCode, resp.Header.Get("x-ms-error-code"))
	}
}

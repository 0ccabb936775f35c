package main

import (
	"bufio"
	"encoding/base64"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/auth"
	"github.com/lazuli-storage/lazuli/internal/auth/sharedkey"
	"github.com/lazuli-storage/lazuli/internal/smb/smbtest"
)

var smbReadyLine = regexp.MustCompile(`^lazuli: blob \S+ queue \S+ table \S+ file (\S+) smb (\S+)(?: web \S+)?(?: admin \S+)?$`)

// startWithSMB runs the binary on dir (with extra environment variables)
// and returns the File and SMB addresses.
func startWithSMB(t *testing.T, dir string, env ...string) (*exec.Cmd, string, string) {
	t.Helper()
	cmd := exec.Command(buildLazuli(t), "--location", dir, "--blobPort", "0", "--queuePort", "0", "--tablePort", "0",
		"--filePort", "0", "--smbPort", "0", "--adminPort", "0", "--silent")
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	found := make(chan []string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := smbReadyLine.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1:]
			}
		}
	}()
	select {
	case m := <-found:
		return cmd, m[0], m[1]
	case <-time.After(20 * time.Second):
		t.Fatal("lazuli did not report its SMB address")
	}
	return nil, "", ""
}

func restFile(t *testing.T, method, addr, path string, hdr map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, "http://"+addr+"/"+auth.DevAccount+"/"+path, nil)
	req.Header.Set("x-ms-version", "2025-11-05")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	key, _ := base64.StdEncoding.DecodeString(auth.DevKey)
	if err := sharedkey.Sign(req, auth.DevAccount, key, false); err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("x-ms-error-code") + string(b)
}

// TestSMBHandlesDoNotSurviveAKill: after kill -9 with SMB opens held (one
// unshared, one delete-pending), a restart starts with no handles: REST
// reads the file and the delete-pending file is gone.
func TestSMBHandlesDoNotSurviveAKill(t *testing.T) {
	dir := t.TempDir()
	cmd, fileAddr, smbAddr := startWithSMB(t, dir)
	if st, body := restFile(t, "PUT", fileAddr, "share1?restype=share", nil); st != 201 {
		t.Fatalf("create share: %d %s", st, body)
	}
	c, err := smbtest.Dial(smbAddr, auth.DevAccount, auth.DevKey)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.TreeConnect("share1"); err != nil {
		t.Fatal(err)
	}
	const rw, del = 0x1 | 0x2, 0x10000
	keep, st := c.Create("keep.txt", rw, 0, 3, 0x40)
	if st != 0 || c.Write(keep, 0, []byte("kept")) != 0 {
		t.Fatalf("create keep.txt: %#x", st)
	}
	gone, st := c.Create("gone.txt", rw|del, 7, 3, 0x40)
	if st != 0 || c.SetDisposition(gone, true) != 0 {
		t.Fatalf("create gone.txt: %#x", st)
	}
	if st, body := restFile(t, "GET", fileAddr, "share1/keep.txt", nil); st != 409 || !strings.HasPrefix(body, "SharingViolation") {
		t.Fatalf("REST read under an unshared SMB open: %d %s", st, body)
	}
	cmd.Process.Kill()
	cmd.Wait()

	_, fileAddr, _ = startWithSMB(t, dir)
	if st, body := restFile(t, "GET", fileAddr, "share1/keep.txt", nil); st != 200 || body != "kept" {
		t.Fatalf("REST read after restart: %d %s", st, body)
	}
	if st, body := restFile(t, "HEAD", fileAddr, "share1/gone.txt", nil); st != 404 {
		t.Fatalf("delete-pending file after restart: %d %s", st, body)
	}
}

// TestSMBLogonWithEveryAccount: each account of AZURITE_ACCOUNTS logs on
// over SMB with either of its keys; another account's key is refused.
func TestSMBLogonWithEveryAccount(t *testing.T) {
	k1 := base64.StdEncoding.EncodeToString([]byte("first key of account two, 32 by"))
	k2 := base64.StdEncoding.EncodeToString([]byte("second key of account two, 32 b"))
	k3 := base64.StdEncoding.EncodeToString([]byte("the key of account three, 32 by"))
	_, _, smbAddr := startWithSMB(t, t.TempDir(), "AZURITE_ACCOUNTS=acct2:"+k1+":"+k2+";acct3:"+k3)
	for _, c := range []struct {
		user, key string
		ok        bool
	}{{"acct2", k1, true}, {"acct2", k2, true}, {"acct3", k3, true}, {"acct3", k1, false}} {
		cl, err := smbtest.Dial(smbAddr, c.user, c.key)
		if err == nil {
			cl.Close()
		}
		if (err == nil) != c.ok {
			t.Errorf("logon as %s with key %.6s...: %v, want success %v", c.user, c.key, err, c.ok)
		}
	}
}

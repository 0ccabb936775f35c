package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/auth"
	"github.com/lazuli-storage/lazuli/internal/auth/sharedkey"
)

// devClient sends Shared Key signed requests as devstoreaccount1.
type devClient struct {
	t    *testing.T
	http *http.Client
	key  []byte
}

func newDevClient(t *testing.T) *devClient {
	return &devClient{t: t, http: &http.Client{Timeout: 10 * time.Second}, key: auth.DevelopmentAccount().Keys[0]}
}

func (c *devClient) do(method, url string, body []byte, hdr map[string]string) (*http.Response, []byte, error) {
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	req.ContentLength = int64(len(body))
	req.Header.Set("x-ms-version", "2025-11-05")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	if err := sharedkey.Sign(req, auth.DevAccount, c.key, false); err != nil {
		return nil, nil, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, b, err
}

// blobContent is the content written under name: derived from the name so
// that any blob found after a crash can be checked for completeness.
func blobContent(name string) []byte {
	sum := sha256.Sum256([]byte(name))
	return bytes.Repeat(sum[:], 300) // 9,600 bytes
}

// TestDataSurvivesRestart writes through the Blob service, stops lazuli
// cleanly, starts it again on the same data directory and reads back.
func TestDataSurvivesRestart(t *testing.T) {
	bin := buildLazuli(t)
	dir := t.TempDir()
	args := []string{"--location", dir, "--blobPort", "0", "--queuePort", "0", "--tablePort", "0", "--filePort", "0", "--smbPort", "0", "--adminPort", "0", "--silent"}
	c := newDevClient(t)
	cmd, addrs := startLazuli(t, bin, args...)
	base := "http://" + addrs[0] + "/devstoreaccount1/keep"
	if resp, b, err := c.do("PUT", base+"?restype=container", nil, nil); err != nil || resp.StatusCode != 201 {
		t.Fatalf("create container: %v %s", err, b)
	}
	if resp, b, err := c.do("PUT", base+"/b", blobContent("b"), map[string]string{"x-ms-blob-type": "BlockBlob"}); err != nil || resp.StatusCode != 201 {
		t.Fatalf("put blob: %v %s", err, b)
	}
	cmd.Process.Signal(sigterm)
	cmd.Wait()

	_, addrs = startLazuli(t, bin, args...)
	resp, b, err := c.do("GET", "http://"+addrs[0]+"/devstoreaccount1/keep/b", nil, nil)
	if err != nil || resp.StatusCode != 200 || !bytes.Equal(b, blobContent("b")) {
		t.Fatalf("after restart: %v status %v, %d bytes", err, resp, len(b))
	}
}

// TestKill9LosesNoAcknowledgedWrite runs lazuli as a child process, writes
// blobs from many goroutines, kills the process with SIGKILL mid-load,
// restarts it on the same data directory and checks that every write that
// was acknowledged is there, whole, and that every blob that is there is
// whole.
func TestKill9LosesNoAcknowledgedWrite(t *testing.T) {
	for _, syncOn := range []bool{false, true} {
		t.Run(fmt.Sprintf("sync=%v", syncOn), func(t *testing.T) {
			bin := buildLazuli(t)
			dir := t.TempDir()
			args := []string{"--location", dir, "--blobPort", "0", "--queuePort", "0", "--tablePort", "0", "--filePort", "0", "--smbPort", "0", "--adminPort", "0", "--silent"}
			if !syncOn {
				args = append(args, "--sync=false")
			}
			c := newDevClient(t)
			cmd, addrs := startLazuli(t, bin, args...)
			base := "http://" + addrs[0] + "/devstoreaccount1/crash"
			if resp, b, err := c.do("PUT", base+"?restype=container", nil, nil); err != nil || resp.StatusCode != 201 {
				t.Fatalf("create container: %v %s", err, b)
			}

			var mu sync.Mutex
			var acked []string
			stop := make(chan struct{})
			var wg sync.WaitGroup
			for g := 0; g < 8; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; ; i++ {
						select {
						case <-stop:
							return
						default:
						}
						name := fmt.Sprintf("g%d-%05d", g, i)
						resp, _, err := c.do("PUT", base+"/"+name, blobContent(name), map[string]string{"x-ms-blob-type": "BlockBlob"})
						if err != nil {
							return // the server is gone
						}
						if resp.StatusCode == 201 {
							mu.Lock()
							acked = append(acked, name)
							mu.Unlock()
						}
					}
				}()
			}
			time.Sleep(1500 * time.Millisecond)
			cmd.Process.Kill() // SIGKILL mid-load
			close(stop)
			wg.Wait()
			cmd.Wait()
			mu.Lock()
			written := append([]string(nil), acked...)
			mu.Unlock()
			if len(written) < 20 {
				t.Fatalf("only %d writes acknowledged before the kill", len(written))
			}

			_, addrs = startLazuli(t, bin, args...)
			base = "http://" + addrs[0] + "/devstoreaccount1/crash"
			for _, name := range written {
				resp, b, err := c.do("GET", base+"/"+name, nil, nil)
				if err != nil || resp.StatusCode != 200 || !bytes.Equal(b, blobContent(name)) {
					t.Fatalf("acknowledged blob %s after kill -9: err %v, %d bytes", name, err, len(b))
				}
			}
			// Nothing half-written: every listed blob is complete. The
			// listing may take several pages.
			var list struct {
				Blobs []struct {
					Name string `xml:"Name"`
				} `xml:"Blobs>Blob"`
			}
			for marker := ""; ; {
				resp, b, err := c.do("GET", base+"?restype=container&comp=list&maxresults=5000&marker="+url.QueryEscape(marker), nil, nil)
				if err != nil || resp.StatusCode != 200 {
					t.Fatalf("list: %v %s", err, b)
				}
				var page struct {
					Blobs []struct {
						Name string `xml:"Name"`
					} `xml:"Blobs>Blob"`
					NextMarker string `xml:"NextMarker"`
				}
				if err := xml.Unmarshal(b, &page); err != nil {
					t.Fatal(err)
				}
				list.Blobs = append(list.Blobs, page.Blobs...)
				if marker = page.NextMarker; marker == "" {
					break
				}
			}
			if len(list.Blobs) < len(written) {
				t.Fatalf("listed %d blobs, %d were acknowledged", len(list.Blobs), len(written))
			}
			for _, bl := range list.Blobs {
				resp, got, err := c.do("GET", base+"/"+bl.Name, nil, nil)
				if err != nil || resp.StatusCode != 200 || !bytes.Equal(got, blobContent(bl.Name)) {
					t.Fatalf("listed blob %s is not whole: err %v, %d bytes", bl.Name, err, len(got))
				}
			}
			t.Logf("%d acknowledged writes, %d blobs after restart", len(written), len(list.Blobs))
		})
	}
}

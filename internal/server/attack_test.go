package server

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if built != "" {
		os.RemoveAll(filepath.Dir(built))
	}
	os.Exit(code)
}

var (
	buildOnce sync.Once
	built     string // the lazuli command, built once per test process
	buildErr  error
)

// startLazuli builds the lazuli command (without the race detector,
// whatever flags this test runs with: its shadow memory would be measured
// too, and the command's own GC pacing is part of what is measured) and
// starts it on the in-memory engine with the given HTTP server;
// it returns the blob address and the process id.
func startLazuli(t *testing.T) (string, int) {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "lazuli-attack")
		if err != nil {
			buildErr = err
			return
		}
		built = filepath.Join(dir, "lazuli")
		build := exec.Command("go", "build", "-o", built, "github.com/lazuli-storage/lazuli/cmd/lazuli")
		build.Env = append(os.Environ(), "GOFLAGS=")
		if out, err := build.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("%v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatalf("build: %v", buildErr)
	}
	bin := built
	cmd := exec.Command(bin, "--inMemoryPersistence", "--silent",
		"--blobPort", "0", "--queuePort", "0", "--tablePort", "0", "--filePort", "0", "--smbPort", "-1", "--adminPort", "-1")
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "lazuli: blob "); ok {
			addr, _, _ := strings.Cut(rest, " ")
			go io.Copy(io.Discard, stderr)
			return addr, cmd.Process.Pid
		}
	}
	t.Fatalf("lazuli did not start")
	return "", 0
}

// peakRSS returns a process's peak resident set (VmHWM) in bytes.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	t.Fatal("no VmHWM")
	return 0
}

// TestSlowHeaderAttackRSS is the unauthenticated memory attack: 500
// connections each send a request head of up to 1 MiB, a line at a time,
// round after round, and never finish it; then 1,500 connections each
// send 60 KiB (under every per-request limit) and hold it. The server's
// peak resident memory must stay under 200 MB.
func TestSlowHeaderAttackRSS(t *testing.T) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err == nil && lim.Cur < lim.Max {
		lim.Cur = lim.Max
		syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
	}
	holders := min(1500, int(lim.Cur)/2-100)
	addr, pid := startLazuli(t)
	base := peakRSS(t, pid)
	attack(t, addr, 500, 1<<20, 8<<10)
	attack(t, addr, holders, 60<<10, 6<<10)
	peak := peakRSS(t, pid)
	t.Logf("peak RSS %d MB (idle %d MB)", peak>>20, base>>20)
	if peak > 200<<20 {
		t.Fatalf("peak RSS %d MB under the slow header attack, want < 200 MB", peak>>20)
	}
}

// attack opens conns connections that each send a request line and then
// header lines of lineSize bytes, all connections one line per round,
// until each has sent headBytes or the server has closed it. The
// connections stay open (the heads unfinished) until all rounds are done.
func attack(t *testing.T, addr string, conns, headBytes, lineSize int) {
	t.Helper()
	cs := make([]net.Conn, 0, conns)
	defer func() {
		for _, c := range cs {
			c.Close()
		}
	}()
	for range conns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("dial: %v", err)
		}
		cs = append(cs, c)
		c.Write([]byte("GET /devstoreaccount1/c HTTP/1.1\r\nHost: h\r\n"))
	}
	line := []byte("X-Pad: " + strings.Repeat("p", lineSize-len("X-Pad: \r\n")) + "\r\n")
	alive := make([]bool, len(cs))
	for i := range alive {
		alive[i] = true
	}
	for sent := 0; sent+lineSize <= headBytes; sent += lineSize {
		var wg sync.WaitGroup
		for i, c := range cs {
			if !alive[i] {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				c.SetWriteDeadline(time.Now().Add(2 * time.Second))
				if _, err := c.Write(line); err != nil {
					alive[i] = false
				}
			}()
		}
		wg.Wait()
	}
	// Let the server read what is in flight.
	time.Sleep(300 * time.Millisecond)
}

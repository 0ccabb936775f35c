package main

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// zeroPorts are the flags that give every listener a free port.
var zeroPorts = []string{"--blobPort", "0", "--queuePort", "0", "--tablePort", "0", "--filePort", "0", "--smbPort", "0", "--adminPort", "0"}

// wantListening checks that the startup line's addresses (blob, queue,
// table, file) are on for the services named in on and "off" for the
// others, and that those on answer as Azure does.
func wantListening(t *testing.T, addrs []string, on ...string) {
	t.Helper()
	for i, svc := range []string{"blob", "queue", "table", "file"} {
		want := false
		for _, s := range on {
			want = want || s == svc
		}
		if !want {
			if addrs[i] != "off" {
				t.Errorf("%s listens on %s, want off", svc, addrs[i])
			}
			continue
		}
		resp, err := http.Get("http://" + addrs[i] + "/devstoreaccount1/nosuch?restype=container&comp=unknown")
		if err != nil {
			t.Errorf("%s: %v", svc, err)
			continue
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.Header.Get("x-ms-error-code") == "" {
			t.Errorf("%s at %s: no Azure answer (%d)", svc, addrs[i], resp.StatusCode)
		}
	}
}

// TestServiceWordRunsOneService: the reference emulator's one-service
// commands and lazuli's own words, first on the command line, run that
// service alone, whatever the other port flags say.
func TestServiceWordRunsOneService(t *testing.T) {
	bin := buildLazuli(t)
	for word, svc := range map[string]string{"azurite-blob": "blob", "azurite-queue": "queue", "azurite-table": "table",
		"blob": "blob", "table": "table", "file": "file"} {
		t.Run(word, func(t *testing.T) {
			_, addrs := startLazuli(t, bin, append([]string{word, "--inMemoryPersistence", "--silent"}, zeroPorts...)...)
			wantListening(t, addrs, svc)
		})
	}
	// azurite runs every service, as lazuli does.
	_, addrs := startLazuli(t, bin, append([]string{"azurite", "--inMemoryPersistence", "--silent"}, zeroPorts...)...)
	wantListening(t, addrs, "blob", "queue", "table", "file")
}

// TestCommandNameRunsOneService: the binary started through a link named
// as one of the reference emulator's commands runs as that command.
func TestCommandNameRunsOneService(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "azurite-queue")
	if err := os.Symlink(buildLazuli(t), link); err != nil {
		t.Fatal(err)
	}
	_, addrs := startLazuli(t, link, append([]string{"--inMemoryPersistence", "--silent"}, zeroPorts...)...)
	wantListening(t, addrs, "queue")
	// Under its own name, or any other, it runs everything.
	other := filepath.Join(dir, "storage-emulator")
	if err := os.Symlink(buildLazuli(t), other); err != nil {
		t.Fatal(err)
	}
	_, addrs = startLazuli(t, other, append([]string{"--inMemoryPersistence", "--silent"}, zeroPorts...)...)
	wantListening(t, addrs, "blob", "queue", "table", "file")
}

func TestCommandLine(t *testing.T) {
	for _, c := range []struct {
		argv []string
		want string
	}{
		{[]string{"/usr/local/bin/azurite-blob", "--blobPort", "1"}, "azurite-blob --blobPort 1"},
		{[]string{"azurite", "-s"}, "azurite -s"},
		{[]string{"lazuli", "--silent"}, "--silent"},
		{[]string{"/opt/azurite-table.exe"}, "azurite-table"},
		{[]string{"/bin/blob", "-s"}, "-s"}, // lazuli's own words are no command names
	} {
		if got := strings.Join(commandLine(c.argv), " "); got != c.want {
			t.Errorf("commandLine(%q) = %q, want %q", c.argv, got, c.want)
		}
	}
}

// TestPortMinusOneTurnsAListenerOff: --queuePort -1 (and the same for
// every port flag) turns that listener off instead of failing; the
// startup line shows it as off.
func TestPortMinusOneTurnsAListenerOff(t *testing.T) {
	freeSMBPort(t)
	bin := buildLazuli(t)
	log := startLazuliLog(t, bin, "--inMemoryPersistence", "--silent", "--blobPort", "0", "--queuePort", "-1",
		"--tablePort", "0", "--filePort", "-1", "--smbPort", "-1")
	var line string
	for _, l := range strings.Split(log(), "\n") {
		if strings.HasPrefix(l, "lazuli: blob ") {
			line = l
		}
	}
	m := readyLine.FindStringSubmatch(line)
	if m == nil || !strings.Contains(line, " smb off") {
		t.Fatalf("startup line %q", line)
	}
	wantListening(t, m[1:], "blob", "table")
}

func TestBadListenerChoicesAreRefused(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--blobPort", "-1", "--queuePort", "-1", "--tablePort", "-1", "--filePort", "-1", "--smbPort", "-1"}, "every listener is off"},
		{[]string{"--queuePort", "-2"}, "--queuePort -2"},
		{[]string{"--blobPort", "70000"}, "--blobPort 70000"},
		{[]string{"--silent", "azurite-blob"}, "before the flags"},
		{[]string{"blob", "--smbPort", "0", "--filePort", "-1", "--blobPort", "-1"}, "every listener is off"},
	} {
		var out bytes.Buffer
		if code := run(append(c.args, "--inMemoryPersistence"), &out); code != 2 || !strings.Contains(out.String(), c.want) {
			t.Errorf("%v: exit %d, %q (want %q)", c.args, code, out.String(), c.want)
		}
	}
}

// TestHelpNamesClientsThatRejectDevelopmentStorage: --help says which
// clients do not expand UseDevelopmentStorage=true and gives the explicit
// string, whole on one line, with the README's endpoints.
func TestHelpNamesClientsThatRejectDevelopmentStorage(t *testing.T) {
	var out bytes.Buffer
	if code := run([]string{"--help"}, &out); code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"UseDevelopmentStorage=true", "Go SDK (azblob 1.8)", "az CLI", "azure-storage-blob", "azure-storage-queue"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("--help does not name %q", want)
		}
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(line, "DefaultEndpointsProtocol=") {
			found = strings.Contains(string(readme), "\n"+line+"\n")
		}
	}
	if !found {
		t.Error("--help has no explicit connection string line equal to the README's")
	}
}

// TestWildcardHostIsShownAsGiven: a listener on 0.0.0.0 is shown as
// 0.0.0.0 (Go's listener reports [::]) with the port it bound.
func TestWildcardHostIsShownAsGiven(t *testing.T) {
	freeSMBPort(t)
	bin := buildLazuli(t)
	log := startLazuliLog(t, bin, "--inMemoryPersistence", "--silent", "--blobHost", "0.0.0.0", "--smbHost", "0.0.0.0", "--adminHost", "0.0.0.0",
		"--blobPort", "0", "--queuePort", "0", "--tablePort", "0", "--filePort", "0", "--smbPort", "0")
	var line string
	for _, l := range strings.Split(log(), "\n") {
		if strings.HasPrefix(l, "lazuli: blob ") {
			line = l
		}
	}
	f := strings.Fields(line)
	if len(f) < 11 || !strings.HasPrefix(f[2], "0.0.0.0:") || strings.HasSuffix(f[2], ":0") ||
		!strings.HasPrefix(f[4], "127.0.0.1:") || !strings.HasPrefix(f[10], "0.0.0.0:") ||
		!regexp.MustCompile(` admin 0\.0\.0\.0:\d+$`).MatchString(line) {
		t.Fatalf("startup line %q", line)
	}
	wantListening(t, []string{f[2], f[4], f[6], f[8]}, "blob", "queue", "table", "file")
}

// startStdout runs the binary and returns the lines it printed on
// standard output by the time its startup line came on standard error.
func startStdout(t *testing.T, bin string, args ...string) []string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	stdout := &lockedBuffer{}
	cmd.Stdout = stdout
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if readyLine.MatchString(sc.Text()) {
				ready <- true
			}
		}
		ready <- false
	}()
	select {
	case ok := <-ready:
		if !ok {
			t.Fatal("lazuli stopped before it was ready")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("lazuli did not start")
	}
	// The reference lines follow the startup line at once; give the pipe
	// a moment.
	time.Sleep(200 * time.Millisecond)
	return strings.Split(strings.TrimSpace(stdout.String()), "\n")
}

// TestReferenceEmulatorStartupLines: lazuli prints the reference
// emulator's "... service is successfully listening at ..." lines on
// standard output, one per service that is on, with the host as given and
// the port bound, so that what waits for them works unchanged. The
// Testcontainers Azurite modules for Go, .NET and Node start the image with
// the entrypoint "azurite" and the command "--blobHost 0.0.0.0 --queueHost
// 0.0.0.0 --tableHost 0.0.0.0" and wait for "Blob service is successfully
// listening" (and Queue, Table); Java users wait for "Azurite Blob service
// is successfully listening at .*".
func TestReferenceEmulatorStartupLines(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "azurite")
	if err := os.Symlink(buildLazuli(t), link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"blobPort", "queuePort", "tablePort", "filePort", "smbPort", "adminPort"} {
		t.Setenv(envName(p), "0")
	}
	t.Setenv(envName("inMemoryPersistence"), "true")
	// --silent as well: the lines are not part of the access log.
	lines := startStdout(t, link, "--blobHost", "0.0.0.0", "--queueHost", "0.0.0.0", "--tableHost", "0.0.0.0", "--silent")
	re := regexp.MustCompile(`^Azurite (Blob|Queue|Table) service is successfully listening at http://0\.0\.0\.0:(\d+)$`)
	var seen []string
	for _, l := range lines {
		m := re.FindStringSubmatch(l)
		if m == nil {
			t.Errorf("unexpected line on standard output: %q", l)
			continue
		}
		seen = append(seen, m[1])
		if m[2] == "0" {
			t.Errorf("%q: port 0 not resolved", l)
		}
		resp, err := http.Get("http://127.0.0.1:" + m[2] + "/devstoreaccount1/nosuch?restype=container")
		if err != nil {
			t.Errorf("%s: %v", l, err)
			continue
		}
		resp.Body.Close()
		if resp.Header.Get("x-ms-error-code") == "" {
			t.Errorf("%s: no Azure answer", l)
		}
	}
	if strings.Join(seen, ",") != "Blob,Queue,Table" {
		t.Errorf("lines for %v, want Blob, Queue, Table in order:\n%s", seen, strings.Join(lines, "\n"))
	}
	// One service alone: its line only.
	lines = startStdout(t, buildLazuli(t), "azurite-table", "--tableHost", "127.0.0.1")
	if len(lines) != 1 || !regexp.MustCompile(`^Azurite Table service is successfully listening at http://127\.0\.0\.1:\d+$`).MatchString(lines[0]) {
		t.Errorf("azurite-table printed %q", lines)
	}
}

// lockedBuffer is a bytes.Buffer that a child process's output goes to
// while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestReferenceEmulatorDirectoryIsRefused: a data directory holding the
// reference emulator's files is not served (lazuli would start empty and
// write beside them); the message names the files and the import
// command, and nothing is written there.
func TestReferenceEmulatorDirectoryIsRefused(t *testing.T) {
	freeSMBPort(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "__azurite_db_blob__.json"), []byte(`{"collections":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "__blobstorage__"), 0o755); err != nil {
		t.Fatal(err)
	}
	out := runFail(t, "--location", dir, "--blobPort", "0", "--queuePort", "0", "--tablePort", "0", "--filePort", "0")
	for _, want := range []string{"__azurite_db_blob__.json", "__blobstorage__", "lazuli import-azurite --from " + dir} {
		if !strings.Contains(out, want) {
			t.Errorf("message lacks %q:\n%s", want, out)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("lazuli wrote into the directory: %d entries", len(entries))
	}
	// The import command reads it and writes a directory lazuli serves.
	target := filepath.Join(t.TempDir(), "imported")
	var log bytes.Buffer
	if code := run([]string{"import-azurite", "--from", dir, "--location", target}, &log); code != 0 {
		t.Fatalf("import: exit %d\n%s", code, log.String())
	}
	if !strings.Contains(log.String(), "containers=0") {
		t.Errorf("import summary:\n%s", log.String())
	}
	_, addrs := startLazuli(t, buildLazuli(t), append([]string{"--location", target, "--silent"}, zeroPorts...)...)
	wantListening(t, addrs, "blob", "queue", "table", "file")
	for _, args := range [][]string{{"import-azurite"}, {"import-azurite", "--from", dir, "--location", dir}} {
		var out bytes.Buffer
		if code := run(args, &out); code != 2 {
			t.Errorf("%v: exit %d\n%s", args, code, out.String())
		}
	}
}

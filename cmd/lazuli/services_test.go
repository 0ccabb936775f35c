package main

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// zeroPorts are the flags that give every listener a free port.
var zeroPorts = []string{"--blobPort", "0", "--queuePort", "0", "--tablePort", "0", "--filePort", "0", "--smbPort", "0"}

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
	if m == nil || !strings.HasSuffix(line, " smb off") {
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
	bin := buildLazuli(t)
	log := startLazuliLog(t, bin, "--inMemoryPersistence", "--silent", "--blobHost", "0.0.0.0", "--smbHost", "0.0.0.0",
		"--blobPort", "0", "--queuePort", "0", "--tablePort", "0", "--filePort", "0", "--smbPort", "0")
	var line string
	for _, l := range strings.Split(log(), "\n") {
		if strings.HasPrefix(l, "lazuli: blob ") {
			line = l
		}
	}
	f := strings.Fields(line)
	if len(f) != 11 || !strings.HasPrefix(f[2], "0.0.0.0:") || strings.HasSuffix(f[2], ":0") ||
		!strings.HasPrefix(f[4], "127.0.0.1:") || !strings.HasPrefix(f[10], "0.0.0.0:") {
		t.Fatalf("startup line %q", line)
	}
	wantListening(t, []string{f[2], f[4], f[6], f[8]}, "blob", "queue", "table", "file")
}

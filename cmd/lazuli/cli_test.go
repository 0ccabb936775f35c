package main

import (
	"bufio"
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"flag"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"software.sslmate.com/src/go-pkcs12"
)

// referenceFlags are the flags of the reference emulator 3.35.0 (the union
// of `azurite --help`, `azurite-blob --help`, `azurite-queue --help` and
// `azurite-table --help`) with their one-letter forms.
var referenceFlags = []string{
	"blobHost", "blobKeepAliveTimeout", "blobPort", "cert", "debug", "disableProductStyleUrl", "disableTelemetry",
	"extentMemoryLimit", "help", "inMemoryPersistence", "key", "location", "loose", "oauth", "pwd",
	"queueHost", "queueKeepAliveTimeout", "queuePort", "silent", "skipApiVersionCheck",
	"tableHost", "tableKeepAliveTimeout", "tablePort", "version",
	"d", "h", "l", "L", "s", "v",
}

func TestEveryReferenceEmulatorFlagIsDefined(t *testing.T) {
	fs, _ := newFlags()
	for _, name := range referenceFlags {
		if fs.Lookup(name) == nil {
			t.Errorf("flag -%s of the reference emulator is not defined", name)
		}
	}
}

// TestEveryFlagHasItsEnvironmentVariable sets LAZULI_<FLAG> for each flag
// in turn and checks that it becomes the flag's value, and that the
// command line still wins over it.
func TestEveryFlagHasItsEnvironmentVariable(t *testing.T) {
	all, _ := newFlags()
	for _, name := range allFlagNames(all) {
		if noEnv[name] {
			continue
		}
		fs, _ := newFlags()
		f := fs.Lookup(name)
		value := "some-value"
		switch {
		case isBool(f):
			value = "true"
		case f.Value.Set("4321") == nil:
			value = "4321"
		case f.Value.Set("1m30s") == nil:
			value = "1m30s"
		}
		env := map[string]string{envName(name): value}
		lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
		if err := fs.Parse(nil); err != nil {
			t.Fatal(err)
		}
		if err := applyEnv(fs, lookup); err != nil {
			t.Fatalf("%s: %v", envName(name), err)
		}
		if got := fs.Lookup(name).Value.String(); got != value {
			t.Errorf("%s=%s: --%s is %q", envName(name), value, name, got)
		}
		// The command line wins.
		fs2, _ := newFlags()
		arg := "--" + name + "=" + map[bool]string{true: "false", false: "1234"}[isBool(f)]
		if fs2.Lookup(name).Value.Set("1234") != nil && !isBool(f) {
			arg = "--" + name + "=2m0s"
		}
		if err := fs2.Parse([]string{arg}); err != nil {
			t.Fatal(err)
		}
		want := fs2.Lookup(name).Value.String()
		applyEnv(fs2, lookup)
		if got := fs2.Lookup(name).Value.String(); got != want {
			t.Errorf("%s overrode %s: %q", envName(name), arg, got)
		}
	}
	if err := applyEnv(mustParsed(t), func(k string) (string, bool) { return "not-a-number", k == "LAZULI_BLOB_PORT" }); err == nil ||
		!strings.Contains(err.Error(), "LAZULI_BLOB_PORT") {
		t.Errorf("a bad LAZULI_BLOB_PORT: %v", err)
	}
}

func mustParsed(t *testing.T) *flag.FlagSet {
	fs, _ := newFlags()
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	return fs
}

func TestEnvNames(t *testing.T) {
	for flagName, want := range map[string]string{
		"blobPort": "LAZULI_BLOB_PORT", "skipApiVersionCheck": "LAZULI_SKIP_API_VERSION_CHECK",
		"inMemoryPersistence": "LAZULI_IN_MEMORY_PERSISTENCE", "disableProductStyleUrl": "LAZULI_DISABLE_PRODUCT_STYLE_URL",
		"httpServer": "LAZULI_HTTP_SERVER", "cpuprofile": "LAZULI_CPUPROFILE", "location": "LAZULI_LOCATION",
	} {
		if got := envName(flagName); got != want {
			t.Errorf("envName(%s) = %s, want %s", flagName, got, want)
		}
	}
}

// TestHelpListsEveryFlagByGroup: every flag belongs to a help group, and
// --help (exit 0) shows each with its variable, the other variables and an
// example.
func TestHelpListsEveryFlagByGroup(t *testing.T) {
	fs, _ := newFlags()
	grouped := map[string]bool{}
	for _, g := range flagGroups {
		for _, n := range g.flags {
			grouped[n] = true
		}
	}
	for _, name := range allFlagNames(fs) {
		if !grouped[name] {
			t.Errorf("--%s is in no help group", name)
		}
	}
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		var out bytes.Buffer
		if code := run(args, &out); code != 0 {
			t.Fatalf("%v: exit %d", args, code)
		}
		text := out.String()
		for _, name := range allFlagNames(fs) {
			if !strings.Contains(text, "--"+name) {
				t.Errorf("%v does not show --%s", args, name)
			}
			if !noEnv[name] && !strings.Contains(text, envName(name)) {
				t.Errorf("%v does not show %s", args, envName(name))
			}
		}
		for _, s := range []string{"AZURITE_ACCOUNTS", "Example", "Listeners:", "Security:"} {
			if !strings.Contains(text, s) {
				t.Errorf("%v does not show %q", args, s)
			}
		}
	}
}

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"-v"}, {"version"}} {
		var out bytes.Buffer
		if code := run(args, &out); code != 0 || !strings.HasPrefix(out.String(), "lazuli ") {
			t.Errorf("%v: exit %d, %q", args, code, out.String())
		}
	}
	// The version given at build time is reported, with the commit when
	// the binary was built in a checkout.
	dir := t.TempDir()
	bin := filepath.Join(dir, "lazuli")
	// Go stamps the commit when the module sits in a git checkout whose
	// .git is a directory (not in a linked worktree, whose .git is a file).
	inCheckout := false
	if top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output(); err == nil {
		fi, err := os.Stat(filepath.Join(strings.TrimSpace(string(top)), ".git"))
		inCheckout = err == nil && fi.IsDir()
	}
	if out, err := exec.Command("go", "build", "-buildvcs="+fmt.Sprint(inCheckout), "-ldflags", "-X main.version=v9.8.7", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil || !strings.HasPrefix(string(out), "lazuli v9.8.7") {
		t.Fatalf("--version: %v %q", err, out)
	}
	if inCheckout && !strings.Contains(string(out), "(commit ") {
		t.Errorf("--version built in a checkout does not name the commit: %q", out)
	}
}

func TestStrayArgumentsAreRefused(t *testing.T) {
	for _, args := range [][]string{{"extra"}, {"--silent", "extra", "--blobPort", "1"}, {"version", "now"}} {
		var out bytes.Buffer
		if code := run(args, &out); code != 2 || !strings.Contains(out.String(), "unexpected argument") {
			t.Errorf("%v: exit %d, %q", args, code, out.String())
		}
	}
}

// TestReferenceEmulatorCommandLineStarts starts the binary with every flag
// of the reference emulator at once, as a script written for it would.
func TestReferenceEmulatorCommandLineStarts(t *testing.T) {
	freeSMBPort(t)
	dir := t.TempDir()
	args := []string{"--blobHost", "127.0.0.1", "--blobPort", "0", "--queueHost", "127.0.0.1", "--queuePort", "0",
		"--tableHost", "127.0.0.1", "--tablePort", "0", "--filePort", "0",
		"--blobKeepAliveTimeout", "5", "--queueKeepAliveTimeout", "5", "--tableKeepAliveTimeout", "5",
		"-l", dir, "--location", dir, "-L", "--loose", "-s", "--silent", "--skipApiVersionCheck",
		"--disableProductStyleUrl", "--disableTelemetry", "--extentMemoryLimit", "100", "--inMemoryPersistence",
		"-d", filepath.Join(dir, "debug.log"), "--debug", filepath.Join(dir, "debug.log")}
	log := startLazuliLog(t, buildLazuli(t), args...)
	for _, want := range []string{"--disableTelemetry changes nothing", "--extentMemoryLimit is ignored"} {
		if !strings.Contains(log(), want) {
			t.Errorf("no warning %q in\n%s", want, log())
		}
	}
}

// startLazuliLog is startLazuli that also returns the log so far.
func startLazuliLog(t *testing.T, bin string, args ...string) func() string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var mu = make(chan struct{}, 1)
	var buf bytes.Buffer
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		once := false
		for sc.Scan() {
			mu <- struct{}{}
			buf.WriteString(sc.Text() + "\n")
			<-mu
			if !once && readyLine.MatchString(sc.Text()) {
				once = true
				close(ready)
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(20 * time.Second):
		mu <- struct{}{}
		defer func() { <-mu }()
		t.Fatalf("lazuli did not start:\n%s", buf.String())
	}
	return func() string { mu <- struct{}{}; defer func() { <-mu }(); return buf.String() }
}

// runFail runs the binary expecting it to stop with an error and returns
// its output.
func runFail(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(buildLazuli(t), args...)
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("%v: exit 0\n%s", args, out)
	}
	return string(out)
}

// TestPortInUseNamesTheFlagAndCreatesNothing: a port in use stops startup
// with the flag to change, before the data directory is created.
func TestPortInUseNamesTheFlagAndCreatesNothing(t *testing.T) {
	freeSMBPort(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	dir := filepath.Join(t.TempDir(), "new-data")
	debugFile := filepath.Join(filepath.Dir(dir), "debug.log")
	out := runFail(t, "--queuePort", port, "--blobPort", "0", "--tablePort", "0", "--filePort", "0", "--location", dir,
		"--debug", debugFile, "--cpuprofile", debugFile+".prof")
	if !strings.Contains(out, "--queuePort") || !strings.Contains(out, "in use") {
		t.Errorf("message does not name --queuePort:\n%s", out)
	}
	for _, p := range []string{dir, debugFile, debugFile + ".prof"} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s was created: %v", p, err)
		}
	}
	// The SMB port is bound with the others, before the data directory.
	out = runFail(t, "--smbPort", port, "--blobPort", "0", "--queuePort", "0", "--tablePort", "0", "--filePort", "0", "--location", dir)
	if !strings.Contains(out, "--smbPort") || !strings.Contains(out, "in use") {
		t.Errorf("message does not name --smbPort:\n%s", out)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the data directory was created: %v", err)
	}
}

// TestLockedDirectoryNamesTheProcess: a second lazuli on the same data
// directory names the process that holds it.
func TestLockedDirectoryNamesTheProcess(t *testing.T) {
	freeSMBPort(t)
	dir := t.TempDir()
	bin := buildLazuli(t)
	cmd, _ := startLazuli(t, bin, "--location", dir, "--blobPort", "0", "--queuePort", "0", "--tablePort", "0", "--filePort", "0", "--smbPort", "0", "--adminPort", "0", "--silent")
	out := runFail(t, "--location", dir, "--blobPort", "0", "--queuePort", "0", "--tablePort", "0", "--filePort", "0", "--smbPort", "0", "--adminPort", "0")
	if want := fmt.Sprintf("in use by process %d", cmd.Process.Pid); !strings.Contains(out, want) || !strings.Contains(out, "--location") {
		t.Errorf("want %q and --location in:\n%s", want, out)
	}
}

// TestStartupLogSaysWhatWasRecovered restarts on a directory holding a
// container and checks the summary line.
func TestStartupLogSaysWhatWasRecovered(t *testing.T) {
	freeSMBPort(t)
	dir := t.TempDir()
	bin := buildLazuli(t)
	cmd, addrs := startLazuli(t, bin, "--location", dir, "--blobPort", "0", "--queuePort", "0", "--tablePort", "0", "--filePort", "0", "--smbPort", "0", "--adminPort", "0", "--silent")
	c := newDevClient(t)
	for _, name := range []string{"one", "two"} {
		resp, _, err := c.do("PUT", "http://"+addrs[0]+"/devstoreaccount1/"+name+"?restype=container", nil, nil)
		if err != nil || resp.StatusCode != 201 {
			t.Fatalf("create container: %v %v", err, resp)
		}
	}
	resp, _, err := c.do("PUT", "http://"+addrs[3]+"/devstoreaccount1/share1?restype=share", nil, nil)
	if err != nil || resp.StatusCode != 201 {
		t.Fatalf("create share: %v %v", err, resp)
	}
	resp, _, err = c.do("PUT", "http://"+addrs[3]+"/devstoreaccount1/share1?restype=share&comp=snapshot", nil, nil)
	if err != nil || resp.StatusCode != 201 {
		t.Fatalf("snapshot share: %v %v", err, resp)
	}
	cmd.Process.Signal(sigterm)
	cmd.Wait()
	log := startLazuliLog(t, bin, "--location", dir, "--blobPort", "0", "--queuePort", "0", "--tablePort", "0", "--filePort", "0", "--smbPort", "0", "--adminPort", "0", "--silent")
	line := regexp.MustCompile(`data directory opened.*`).FindString(log())
	for _, want := range []string{"accounts=1", "accounts_with_data=1", "containers=2", "queues=0", "tables=0", "shares=1", "bytes_on_disk=", "took="} {
		if !strings.Contains(line, want) {
			t.Errorf("startup summary %q lacks %s", line, want)
		}
	}
}

// selfSigned returns a certificate and key for 127.0.0.1 and localhost.
func selfSigned(t *testing.T) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "lazuli test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return cert, key
}

// TestPFXCertificateWithPassword serves HTTPS from a password-protected
// PFX file, as --cert x.pfx --pwd secret does for the reference emulator,
// and refuses a wrong password with a message saying so.
func TestPFXCertificateWithPassword(t *testing.T) {
	freeSMBPort(t)
	cert, key := selfSigned(t)
	pfx, err := pkcs12.Modern.Encode(key, cert, nil, "s3cret")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "cert.pfx")
	if err := os.WriteFile(path, pfx, 0o600); err != nil {
		t.Fatal(err)
	}
	_, addrs := startLazuli(t, buildLazuli(t), "--inMemoryPersistence", "--cert", path, "--pwd", "s3cret", "--oauth", "basic",
		"--blobPort", "0", "--queuePort", "0", "--tablePort", "0", "--filePort", "0", "--smbPort", "0", "--adminPort", "0", "--silent")
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}, Timeout: 10 * time.Second}
	resp, err := client.Get("https://" + addrs[0] + "/devstoreaccount1/nosuch?restype=container")
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.Header.Get("x-ms-error-code") == "" {
		t.Errorf("no Azure answer over HTTPS: %d", resp.StatusCode)
	}
	out := runFail(t, "--inMemoryPersistence", "--cert", path, "--pwd", "wrong", "--blobPort", "0", "--queuePort", "0", "--tablePort", "0", "--filePort", "0", "--smbPort", "0", "--adminPort", "0")
	if !strings.Contains(out, "password") {
		t.Errorf("wrong password: %s", out)
	}
	if out := runFail(t, "--inMemoryPersistence", "--oauth", "basic", "--blobPort", "0"); !strings.Contains(out, "--cert") {
		t.Errorf("--oauth without --cert: %s", out)
	}
}

// TestKeepAliveTimeout: --blobKeepAliveTimeout closes an idle kept-alive
// connection after that many seconds.
func TestKeepAliveTimeout(t *testing.T) {
	freeSMBPort(t)
	_, addrs := startLazuli(t, buildLazuli(t), "--inMemoryPersistence", "--blobKeepAliveTimeout", "1",
		"--blobPort", "0", "--queuePort", "0", "--tablePort", "0", "--filePort", "0", "--smbPort", "0", "--adminPort", "0", "--silent")
	c, err := net.Dial("tcp", addrs[0])
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET /devstoreaccount1/x?restype=container HTTP/1.1\r\nHost: %s\r\n\r\n", addrs[0])
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	start := time.Now()
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("idle connection: %v, want EOF", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("idle connection closed after %v with a 1 s keep-alive timeout", d)
	}
}

// TestReadmeFlagsTableIsComplete: the README's flags table names every
// flag (and its one-letter form) and nothing that is not a flag.
func TestReadmeFlagsTableIsComplete(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)
	start := strings.Index(text, "## Flags")
	end := strings.Index(text[start+1:], "\n## ")
	if start < 0 || end < 0 {
		t.Fatal("README has no Flags section")
	}
	table := text[start : start+1+end]
	fs, _ := newFlags()
	for _, name := range allFlagNames(fs) {
		if !strings.Contains(table, "`--"+name+"`") && !strings.Contains(table, "`--"+name+" ") {
			t.Errorf("README flags table lacks --%s", name)
		}
	}
	for s := range shorthands {
		if !strings.Contains(table, "`-"+s+"`") {
			t.Errorf("README flags table lacks -%s", s)
		}
	}
	for _, m := range regexp.MustCompile("`--?([A-Za-z]+)").FindAllStringSubmatch(table, -1) {
		if fs.Lookup(m[1]) == nil {
			t.Errorf("README flags table names -%s, which is no flag", m[1])
		}
	}
}

// allFlagNames lists the long flag names of fs, sorted.
func allFlagNames(fs *flag.FlagSet) []string {
	var out []string
	fs.VisitAll(func(f *flag.Flag) {
		if _, short := shorthands[f.Name]; !short {
			out = append(out, f.Name)
		}
	})
	sort.Strings(out)
	return out
}

// freeSMBPort makes the servers a test starts take a free SMB port
// through LAZULI_SMB_PORT, keeping their command lines those of the
// reference emulator (whose flags have no SMB port).
func freeSMBPort(t *testing.T) {
	t.Setenv(envName("smbPort"), "0")
	t.Setenv(envName("adminPort"), "0")
}

package smb

import (
	"bytes"
	"crypto/rand"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/lazuli-storage/lazuli/internal/smb/wire"
)

const (
	testAccount = "devstoreaccount1"
	testKey     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

func startServer(tb testing.TB, b Backend) (*Server, string) {
	tb.Helper()
	s := New(Config{Backend: b, Passwords: func(user string) ([]string, bool) {
		if user == testAccount {
			return []string{testKey}, true
		}
		return nil, false
	}})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	go s.Serve(ln)
	tb.Cleanup(func() { s.Close() })
	return s, ln.Addr().String()
}

// smbclient runs smbclient against addr with the given extra arguments
// and commands and returns its combined output.
func smbclient(tb testing.TB, addr, service, user string, args []string, cmds string) (string, error) {
	tb.Helper()
	path, err := exec.LookPath("smbclient")
	if err != nil {
		tb.Fatal("smbclient is needed (Debian package smbclient)")
	}
	host, port, _ := net.SplitHostPort(addr)
	a := []string{"-p", port, "-U", user, "--configfile=/dev/null"}
	if service == "-L" {
		a = append(a, "-L", "//"+host)
	} else {
		a = append(a, "//"+host+"/"+service, "-c", cmds)
	}
	a = append(a, args...)
	cmd := exec.Command(path, a...)
	cmd.Dir = tb.TempDir()
	cmd.Env = append(os.Environ(), "HOME="+cmd.Dir)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestSmbclientPutGetLsMkdirRm(t *testing.T) {
	fs := newMemFS("share1")
	_, addr := startServer(t, fs)
	dir := t.TempDir()
	data := make([]byte, 3<<20+123)
	rand.Read(data)
	src := filepath.Join(dir, "src.bin")
	os.WriteFile(src, data, 0o644)
	for _, mode := range [][]string{
		{"-m", "SMB2_02"}, {"-m", "SMB2_10"}, {"-m", "SMB3_00"}, {"-m", "SMB3_02"}, {"-m", "SMB3_11"},
		{"-m", "SMB2", "--client-protection=sign"}, {"-m", "SMB3", "--client-protection=sign"},
		{"-m", "SMB3_00", "--client-protection=encrypt"}, {"-m", "SMB3", "--client-protection=encrypt"},
	} {
		t.Run(strings.Join(mode, " "), func(t *testing.T) {
			dst := filepath.Join(dir, "dst-"+strconv.Itoa(len(mode))+mode[1])
			cmds := "mkdir d1; cd d1; put " + src + " f.bin; ls; get f.bin " + dst + "; rm f.bin; cd ..; rmdir d1; ls"
			out, err := smbclient(t, addr, "share1", testAccount+"%"+testKey, mode, cmds)
			if err != nil {
				t.Fatalf("smbclient: %v\n%s", err, out)
			}
			t.Log(out)
			if !strings.Contains(out, "f.bin") {
				t.Fatalf("listing lacks f.bin:\n%s", out)
			}
			got, err := os.ReadFile(dst)
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("get returned %d bytes (err %v), want the %d put", len(got), err, len(data))
			}
			if strings.Contains(out, "NT_STATUS") {
				t.Fatalf("unexpected error:\n%s", out)
			}
		})
	}
}

func TestSmbclientRefusesWrongKeyAndUnknownUser(t *testing.T) {
	_, addr := startServer(t, newMemFS("share1"))
	for _, user := range []string{testAccount + "%wrongkey", "nosuchaccount%" + testKey} {
		out, err := smbclient(t, addr, "share1", user, []string{"-m", "SMB3"}, "ls")
		if err == nil || !strings.Contains(out, "NT_STATUS_LOGON_FAILURE") {
			t.Fatalf("%s: want NT_STATUS_LOGON_FAILURE, got %v\n%s", user, err, out)
		}
	}
	out, err := smbclient(t, addr, "share1", "", []string{"-m", "SMB3", "-N"}, "ls")
	if err == nil || !(strings.Contains(out, "NT_STATUS_ACCESS_DENIED") || strings.Contains(out, "NT_STATUS_LOGON_FAILURE")) {
		t.Fatalf("anonymous: want refusal, got %v\n%s", err, out)
	}
}

func TestSmbclientListsShares(t *testing.T) {
	_, addr := startServer(t, newMemFS("alpha", "beta"))
	out, _ := smbclient(t, addr, "-L", testAccount+"%"+testKey, []string{"-m", "SMB3"}, "")
	for _, want := range []string{"alpha", "beta", "IPC$"} {
		if !strings.Contains(out, want) {
			t.Fatalf("share list lacks %s:\n%s", want, out)
		}
	}
}

func TestSmbclientDeltree(t *testing.T) {
	_, addr := startServer(t, newMemFS("share1"))
	out, err := smbclient(t, addr, "share1", testAccount+"%"+testKey, []string{"-m", "SMB3"},
		"mkdir a; mkdir a\\b; put /etc/hostname a\\b\\x; deltree a; ls")
	if err != nil || strings.Contains(out, "NT_STATUS") || strings.Contains(out, " a ") {
		t.Fatalf("deltree: %v\n%s", err, out)
	}
}

var _ = wire.HeaderSize

// impacket runs the share-mode, delete-pending and lock scenarios of
// testdata/impacket_scenarios.py with Debian's python3-impacket.
func impacket(t *testing.T, addr, share string) {
	t.Helper()
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Fatal("/usr/bin/python3 with python3-impacket is needed")
	}
	host, port, _ := net.SplitHostPort(addr)
	out, err := exec.Command("/usr/bin/python3", "testdata/impacket_scenarios.py", host, port, share, testAccount, testKey).CombinedOutput()
	t.Log(string(out))
	if err != nil {
		t.Fatalf("impacket scenarios failed: %v", err)
	}
}

func TestImpacketShareModesAndLocks(t *testing.T) {
	_, addr := startServer(t, newMemFS("share1"))
	impacket(t, addr, "share1")
}

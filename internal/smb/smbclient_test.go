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
	"sync"
	"testing"

	"github.com/lazuli-storage/lazuli/internal/smb/wire"
)

const (
	testAccount = "devstoreaccount1"
	testKey     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

// recordingListener notes, for each frame the server writes, whether it
// was encrypted (transform header) or signed (SMB2 header flag).
type recordingListener struct {
	net.Listener
	mu                sync.Mutex
	encrypted, signed int
	plain             int
}

type recordingConn struct {
	net.Conn
	l *recordingListener
}

func (l *recordingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &recordingConn{c, l}, nil
}

func (c *recordingConn) Write(b []byte) (int, error) {
	c.l.mu.Lock()
	switch {
	case len(b) >= 8 && [4]byte(b[4:8]) == wire.TransformID:
		c.l.encrypted++
	case len(b) >= 4+wire.HeaderSize && le.Uint32(b[4+16:])&wire.FlagSigned != 0:
		c.l.signed++
	default:
		c.l.plain++
	}
	c.l.mu.Unlock()
	return c.Conn.Write(b)
}

func (l *recordingListener) counts() (enc, signed, plain int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	enc, signed, plain = l.encrypted, l.signed, l.plain
	l.encrypted, l.signed, l.plain = 0, 0, 0
	return
}

func startServer(tb testing.TB, b Backend) (*Server, string) {
	tb.Helper()
	s, rl := startRecording(tb, b)
	_ = rl
	return s, rl.Addr().String()
}

func startRecording(tb testing.TB, b Backend) (*Server, *recordingListener) {
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
	rl := &recordingListener{Listener: ln}
	go s.Serve(rl)
	tb.Cleanup(func() { s.Close() })
	return s, rl
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
	_, rl := startRecording(t, fs)
	addr := rl.Addr().String()
	dir := t.TempDir()
	data := make([]byte, 3<<20+123)
	rand.Read(data)
	src := filepath.Join(dir, "src.bin")
	os.WriteFile(src, data, 0o644)
	for _, mode := range [][]string{
		{"-m", "SMB2_02"}, {"-m", "SMB2_10"}, {"-m", "SMB3_00"}, {"-m", "SMB3_02"}, {"-m", "SMB3_11"},
		{"-m", "SMB2", "--client-protection=sign"}, {"-m", "SMB3", "--client-protection=sign"},
		{"-m", "SMB3_00", "--client-protection=encrypt"}, {"-m", "SMB3_02", "--client-protection=encrypt"},
		{"-m", "SMB3", "--client-protection=encrypt"},
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
			// Every frame after the logon is protected as asked: the
			// plain ones are NEGOTIATE and SESSION_SETUP.
			enc, signed, plain := rl.counts()
			switch {
			case strings.HasSuffix(mode[len(mode)-1], "encrypt"):
				if enc < 10 || plain > 3 {
					t.Fatalf("encrypt: %d encrypted, %d signed, %d plain frames", enc, signed, plain)
				}
			case strings.HasSuffix(mode[len(mode)-1], "sign"):
				if signed < 10 || plain > 3 || enc > 0 {
					t.Fatalf("sign: %d encrypted, %d signed, %d plain frames", enc, signed, plain)
				}
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

// TestSMB1NegotiateUpgradesToSMB2: a client that starts with an SMB1
// NEGOTIATE offering SMB 2 (as older Windows and clients allowing NT1 do)
// gets an SMB2 answer and goes on in SMB 2/3.
func TestSMB1NegotiateUpgradesToSMB2(t *testing.T) {
	_, addr := startServer(t, newMemFS("share1"))
	out, err := smbclient(t, addr, "share1", testAccount+"%"+testKey,
		[]string{"--option=client min protocol=NT1", "--option=client max protocol=SMB3"}, "ls")
	if err != nil || strings.Contains(out, "NT_STATUS") {
		t.Fatalf("smbclient: %v\n%s", err, out)
	}
}

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
	// negotiate is the last NEGOTIATE response written.
	negotiate []byte
}

type recordingConn struct {
	net.Conn
	l *recordingListener
	// pend is the part of the server's byte stream not yet seen as
	// whole frames: a frame may be written in several pieces.
	pend []byte
}

func (l *recordingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &recordingConn{Conn: c, l: l}, nil
}

func (c *recordingConn) Write(b []byte) (int, error) {
	c.l.mu.Lock()
	c.pend = append(c.pend, b...)
	for len(c.pend) >= 4 {
		n := 4 + (int(c.pend[1])<<16 | int(c.pend[2])<<8 | int(c.pend[3]))
		if len(c.pend) < n {
			break
		}
		c.l.record(c.pend[:n])
		c.pend = c.pend[n:]
	}
	if len(c.pend) == 0 {
		c.pend = nil
	}
	c.l.mu.Unlock()
	return c.Conn.Write(b)
}

// record classifies one whole frame (with its 4-byte length).
func (l *recordingListener) record(b []byte) {
	switch {
	case len(b) >= 8 && [4]byte(b[4:8]) == wire.TransformID:
		l.encrypted++
	case len(b) >= 4+wire.HeaderSize && le.Uint32(b[4+16:])&wire.FlagSigned != 0:
		l.signed++
	default:
		l.plain++
		if len(b) >= 4+wire.HeaderSize && le.Uint16(b[4+12:]) == wire.Negotiate && le.Uint32(b[4+16:])&wire.FlagServerToRedir != 0 {
			l.negotiate = append([]byte(nil), b[4:]...)
		}
	}
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
	for _, user := range []string{testAccount + "%wrongkey", "nosuchaccount%" + testKey, "Guest%", "guest%" + testKey} {
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

// TestSmbclientAnyDomain: the domain of the logon plays no part (Azure
// Files users type AZURE\\account).
func TestSmbclientAnyDomain(t *testing.T) {
	_, addr := startServer(t, newMemFS("share1"))
	for _, c := range []struct{ user, domain string }{{"AZURE\\" + testAccount, ""}, {testAccount, "WORKGROUP"}, {testAccount, "lazuli.example"}} {
		args := []string{"-m", "SMB3"}
		if c.domain != "" {
			args = append(args, "-W", c.domain)
		}
		out, err := smbclient(t, addr, "share1", c.user+"%"+testKey, args, "ls")
		if err != nil || strings.Contains(out, "NT_STATUS") {
			t.Fatalf("%s (domain %q): %v\n%s", c.user, c.domain, err, out)
		}
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

// negotiated reads the dialect, signing algorithm and cipher of the last
// NEGOTIATE response (the algorithm and cipher are -1 without their
// negotiate contexts, as below SMB 3.1.1).
func (l *recordingListener) negotiated(t *testing.T) (dialect uint16, signing, cipher int) {
	t.Helper()
	l.mu.Lock()
	m := l.negotiate
	l.mu.Unlock()
	if len(m) < wire.HeaderSize+64 {
		t.Fatalf("no NEGOTIATE response recorded (%d bytes)", len(m))
	}
	body := m[wire.HeaderSize:]
	dialect, signing, cipher = le.Uint16(body[4:]), -1, -1
	n, off := int(le.Uint16(body[6:])), int(le.Uint32(body[60:]))
	for range n {
		if off+8 > len(m) {
			t.Fatalf("negotiate context past the end of the response")
		}
		typ, ln := le.Uint16(m[off:]), int(le.Uint16(m[off+2:]))
		data := m[off+8 : off+8+ln]
		switch typ {
		case wire.CtxSigning:
			signing = int(le.Uint16(data[2:]))
		case wire.CtxEncryption:
			cipher = int(le.Uint16(data[2:]))
		}
		off = (off + 8 + ln + 7) &^ 7
	}
	return dialect, signing, cipher
}

// TestSmbclientSigningAndCipherChoices: on SMB 3.1.1 the server takes
// the client's preferred signing algorithm and cipher among those it
// offers (Samba's smbclient prefers AES-GMAC and AES-128-GCM), and each of
// HMAC-SHA256 (2.1, and 3.1.1 when the client offers only it), AES-CMAC,
// AES-GMAC, AES-128-CCM, AES-128-GCM, AES-256-CCM and AES-256-GCM (which
// Azure Files offers too) carries a transfer whose frames are all signed or
// encrypted.
func TestSmbclientSigningAndCipherChoices(t *testing.T) {
	_, rl := startRecording(t, newMemFS("share1"))
	addr := rl.Addr().String()
	src := filepath.Join(t.TempDir(), "src.bin")
	data := make([]byte, 1<<20+5)
	rand.Read(data)
	os.WriteFile(src, data, 0o644)
	for _, c := range []struct {
		name            string
		args            []string
		dialect         uint16
		signing, cipher int
	}{
		{"HMAC-SHA256", []string{"-m", "SMB2_10", "--client-protection=sign"}, 0x210, -1, -1},
		{"AES-CMAC 3.0.2", []string{"-m", "SMB3_02", "--client-protection=sign"}, 0x302, -1, -1},
		{"AES-GMAC", []string{"-m", "SMB3_11", "--client-protection=sign"}, 0x311, 2, -1},
		{"HMAC-SHA256 3.1.1", []string{"-m", "SMB3_11", "--client-protection=sign", "--option=client smb3 signing algorithms=hmac-sha-256"}, 0x311, 0, -1},
		{"AES-CMAC 3.1.1", []string{"-m", "SMB3_11", "--client-protection=sign", "--option=client smb3 signing algorithms=AES-128-CMAC"}, 0x311, 1, -1},
		{"AES-128-GCM", []string{"-m", "SMB3_11", "--client-protection=encrypt"}, 0x311, 2, 2},
		{"AES-128-CCM 3.1.1", []string{"-m", "SMB3_11", "--client-protection=encrypt", "--option=client smb3 encryption algorithms=AES-128-CCM"}, 0x311, 2, 1},
		{"AES-256-GCM", []string{"-m", "SMB3_11", "--client-protection=encrypt", "--option=client smb3 encryption algorithms=AES-256-GCM"}, 0x311, 2, 4},
		{"AES-256-CCM", []string{"-m", "SMB3_11", "--client-protection=encrypt", "--option=client smb3 encryption algorithms=AES-256-CCM"}, 0x311, 2, 3},
		{"AES-128-CCM 3.0", []string{"-m", "SMB3_00", "--client-protection=encrypt"}, 0x300, -1, -1},
	} {
		t.Run(c.name, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "dst.bin")
			out, err := smbclient(t, addr, "share1", testAccount+"%"+testKey, c.args, "put "+src+" x.bin; get x.bin "+dst+"; rm x.bin")
			if err != nil || strings.Contains(out, "NT_STATUS") {
				t.Fatalf("smbclient: %v\n%s", err, out)
			}
			if got, _ := os.ReadFile(dst); !bytes.Equal(got, data) {
				t.Fatalf("get returned %d bytes, want the %d put", len(got), len(data))
			}
			dialect, signing, cipher := rl.negotiated(t)
			if dialect != c.dialect {
				t.Fatalf("dialect %#x, want %#x", dialect, c.dialect)
			}
			// The encryption context, when the client sends one, is
			// answered whether or not it then encrypts.
			if signing != c.signing || c.cipher >= 0 && cipher != c.cipher {
				t.Fatalf("signing algorithm %d, cipher %d; want %d, %d", signing, cipher, c.signing, c.cipher)
			}
			enc, signed, plain := rl.counts()
			if c.cipher >= 0 || c.dialect == 0x300 && c.signing < 0 && strings.Contains(strings.Join(c.args, " "), "encrypt") {
				if enc < 10 || plain > 3 {
					t.Fatalf("%d encrypted, %d signed, %d plain frames\n%s", enc, signed, plain, out)
				}
			} else if signed < 10 || plain > 3 || enc > 0 {
				t.Fatalf("%d encrypted, %d signed, %d plain frames", enc, signed, plain)
			}
		})
	}
}

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

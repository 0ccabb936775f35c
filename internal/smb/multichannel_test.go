package smb

import (
	"bytes"
	"net"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/smb/smbtest"
	"github.com/lazuli-storage/lazuli/internal/smb/wire"
)

var testGUID = [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}

// primary logs on over SMB 3.0.2 as client testGUID, connects share1 and
// writes f.txt, which it keeps open.
func primary(t *testing.T, addr string) (*smbtest.Client, wire.FileID) {
	t.Helper()
	a, err := smbtest.DialGUID(addr, testAccount, testKey, wire.Dialect302, testGUID)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	if err := a.TreeConnect("share1"); err != nil {
		t.Fatal(err)
	}
	fid, st := a.Create("f.txt", FileReadData|FileWriteData, 7, FileOpenIf, 0)
	if st != 0 {
		t.Fatalf("create: %#x", st)
	}
	if st := a.Write(fid, 0, []byte("channels")); st != 0 {
		t.Fatalf("write: %#x", st)
	}
	return a, fid
}

func connect(t *testing.T, addr string, dialect uint16, guid [16]byte) *smbtest.Client {
	t.Helper()
	c, err := smbtest.Connect(addr, dialect, guid)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// A second connection of the client binds to the session, signed with the
// session's signing key; the session's tree and opens are then used on
// it, signed with the channel's own key, and outlive the first channel.
func TestSessionBinding(t *testing.T) {
	srv, addr := startServer(t, newMemFS("share1"))
	a, fid := primary(t, addr)
	b := connect(t, addr, wire.Dialect302, testGUID)
	if st := b.Bind(a.SessionID(), a.TreeID(), a.SigningKey(), testAccount, testKey); st != 0 {
		t.Fatalf("bind: %#x", st)
	}
	if got, st := b.Read(fid, 0, 100); st != 0 || string(got) != "channels" {
		t.Fatalf("read on the bound channel: %q %#x", got, st)
	}
	if st := b.Write(fid, 8, []byte(" two")); st != 0 {
		t.Fatalf("write on the bound channel: %#x", st)
	}
	if n := srv.Stats().Sessions; n != 1 {
		t.Fatalf("%d sessions, want 1", n)
	}
	// Losing the first channel loses nothing.
	a.Close()
	waitFor(t, func() bool { return srv.Conns() == 1 })
	if got, st := b.Read(fid, 0, 100); st != 0 || string(got) != "channels two" {
		t.Fatalf("read after the first channel closed: %q %#x", got, st)
	}
	// LOGOFF on any channel ends the session and closes its opens.
	if h, _, err := b.Do(wire.Logoff, []byte{4, 0, 0, 0}); err != nil || h.Status != 0 {
		t.Fatalf("logoff: %#x %v", h.Status, err)
	}
	if st := srv.Stats(); st.Sessions != 0 || st.Opens != 0 {
		t.Fatalf("after logoff: %+v", st)
	}
}

// Bindings MS-SMB2 3.3.5.5 refuses, each with its status; none harms the
// session.
func TestSessionBindingRefused(t *testing.T) {
	_, addr := startServer(t, newMemFS("share1"))
	a, fid := primary(t, addr)
	other := testGUID
	other[0]++
	wrongKey := bytes.Repeat([]byte{7}, 16)
	for _, tc := range []struct {
		name     string
		dialect  uint16
		guid     [16]byte
		sid      uint64
		key      []byte
		password string
		want     uint32
	}{
		{"bad signature", wire.Dialect302, testGUID, a.SessionID(), wrongKey, testKey, statusAccessDenied},
		{"unsigned", wire.Dialect302, testGUID, a.SessionID(), nil, testKey, statusInvalidParameter},
		{"other dialect", wire.Dialect300, testGUID, a.SessionID(), a.SigningKey(), testKey, statusInvalidParameter},
		{"SMB 2.1", wire.Dialect210, testGUID, a.SessionID(), a.SigningKey(), testKey, statusRequestNotAccepted},
		{"no such session", wire.Dialect302, testGUID, a.SessionID() ^ 1, a.SigningKey(), testKey, statusUserSessionDeleted},
		{"wrong password", wire.Dialect302, testGUID, a.SessionID(), a.SigningKey(), "not-the-key", statusLogonFailure},
	} {
		b := connect(t, addr, tc.dialect, tc.guid)
		if st := b.Bind(tc.sid, a.TreeID(), tc.key, testAccount, tc.password); st != tc.want {
			t.Errorf("%s: %#x, want %#x", tc.name, st, tc.want)
		}
		b.Close()
	}
	// Another client GUID binds, as on Windows.
	o := connect(t, addr, wire.Dialect302, other)
	if st := o.Bind(a.SessionID(), a.TreeID(), a.SigningKey(), testAccount, testKey); st != 0 {
		t.Errorf("other client GUID: %#x, want success", st)
	}
	o.Close()
	// A connection binds once.
	b := connect(t, addr, wire.Dialect302, testGUID)
	if st := b.Bind(a.SessionID(), a.TreeID(), a.SigningKey(), testAccount, testKey); st != 0 {
		t.Fatalf("bind: %#x", st)
	}
	c := connect(t, addr, wire.Dialect302, testGUID)
	if st := c.Bind(a.SessionID(), a.TreeID(), a.SigningKey(), testAccount, testKey); st != 0 {
		t.Fatalf("second channel: %#x", st)
	}
	if got, st := a.Read(fid, 0, 100); st != 0 || string(got) != "channels" {
		t.Fatalf("session after refused bindings: %q %#x", got, st)
	}
}

// FSCTL_QUERY_NETWORK_INTERFACE_INFO answers the address the client
// reached the server on.
func TestNetworkInterfaceInfo(t *testing.T) {
	_, addr := startServer(t, newMemFS("share1"))
	a, _ := primary(t, addr)
	all := wire.FileID{Persistent: ^uint64(0), Volatile: ^uint64(0)}
	ioctl := withFileID(57, 56, 8, all)
	le.PutUint32(ioctl[4:], fsctlQueryNetworkInterfaceInfo)
	le.PutUint32(ioctl[24:], wire.HeaderSize+56)
	le.PutUint32(ioctl[36:], wire.HeaderSize+56)
	le.PutUint32(ioctl[44:], 65536)
	le.PutUint32(ioctl[48:], 1) // SMB2_0_IOCTL_IS_FSCTL
	h, resp, err := a.Do(wire.Ioctl, ioctl)
	if err != nil || h.Status != 0 {
		t.Fatalf("IOCTL: %#x %v", h.Status, err)
	}
	body := resp[wire.HeaderSize:]
	off, n := le.Uint32(body[32:]), le.Uint32(body[36:])
	out := resp[off : off+n]
	if n != 152 || le.Uint32(out) != 0 || le.Uint16(out[24:]) != 2 {
		t.Fatalf("interface info %x", out)
	}
	if ip := net.IP(out[28:32]); !ip.Equal(net.IPv4(127, 0, 0, 1)) {
		t.Fatalf("address %v", ip)
	}
}

// waitFor polls cond for up to 5 s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for i := 0; i < 500 && !cond(); i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if !cond() {
		t.Fatal("condition not reached")
	}
}

// A re-authentication sent unsigned on a channel bound later does not get
// in, yet its credentials are checked: good ones are refused with
// ACCESS_DENIED and the session lives on, bad ones answer LOGON_FAILURE
// and end the session on every channel, as on Windows (smbtorture
// smb2.session.bind_invalid_auth).
func TestUnsignedReauthOnBoundChannel(t *testing.T) {
	_, addr := startServer(t, newMemFS("share1"))
	a, fid := primary(t, addr)
	b := connect(t, addr, wire.Dialect302, testGUID)
	if st := b.Bind(a.SessionID(), a.TreeID(), a.SigningKey(), testAccount, testKey); st != 0 {
		t.Fatalf("bind: %#x", st)
	}
	b.Unsigned()
	if st := b.Reauthenticate(testAccount, testKey); st != statusAccessDenied {
		t.Fatalf("unsigned re-authentication with good credentials: %#x, want ACCESS_DENIED", st)
	}
	if _, st := a.Read(fid, 0, 100); st != 0 {
		t.Fatalf("session after the refused re-authentication: %#x", st)
	}
	if st := b.Reauthenticate(testAccount, "not-the-key"); st != statusLogonFailure {
		t.Fatalf("unsigned re-authentication with bad credentials: %#x, want LOGON_FAILURE", st)
	}
	if _, st := a.Read(fid, 0, 100); st != statusUserSessionDeleted {
		t.Fatalf("first channel after the failed re-authentication: %#x, want USER_SESSION_DELETED", st)
	}
}

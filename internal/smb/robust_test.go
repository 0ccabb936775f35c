package smb

import (
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/smb/ntlm"
	"github.com/lazuli-storage/lazuli/internal/smb/smbtest"
	"github.com/lazuli-storage/lazuli/internal/smb/wire"
)

func frame(msg []byte) []byte {
	n := len(msg)
	return append([]byte{0, byte(n >> 16), byte(n >> 8), byte(n)}, msg...)
}

func negotiateMsg(mid uint64, dialects ...uint16) []byte {
	m := (&wire.Header{Command: wire.Negotiate, MessageID: mid, Credits: 10}).Append(nil)
	body := make([]byte, 36)
	le.PutUint16(body, 36)
	le.PutUint16(body[2:], uint16(len(dialects)))
	le.PutUint16(body[4:], 1)
	m = append(m, body...)
	for _, d := range dialects {
		m = le.AppendUint16(m, d)
	}
	return m
}

func readResponse(t *testing.T, c net.Conn) (wire.Header, []byte) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	var hdr [4]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		t.Fatalf("read: %v", err)
	}
	n := int(hdr[1])<<16 | int(hdr[2])<<8 | int(hdr[3])
	b := make([]byte, n)
	if _, err := io.ReadFull(c, b); err != nil {
		t.Fatalf("read: %v", err)
	}
	h, err := wire.DecodeHeader(b)
	if err != nil {
		t.Fatal(err)
	}
	return h, b
}

// expectClosed waits for the server to close c.
func expectClosed(t *testing.T, c net.Conn, within time.Duration) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(within))
	buf := make([]byte, 1024)
	for {
		_, err := c.Read(buf)
		if err == io.EOF {
			return
		}
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Fatal("connection still open")
		}
		if err != nil {
			return
		}
	}
}

func waitConns(t *testing.T, s *Server, n int) {
	t.Helper()
	for i := 0; i < 200 && s.Conns() != n; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if s.Conns() != n {
		t.Fatalf("%d connections open, want %d", s.Conns(), n)
	}
}

func startQuick(t *testing.T) (*Server, string) {
	s := New(Config{Backend: newMemFS("share1"), AuthTimeout: 300 * time.Millisecond,
		Passwords: func(string) ([]string, bool) { return []string{testKey}, true }})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(ln)
	t.Cleanup(func() { s.Close() })
	return s, ln.Addr().String()
}

func dial(t *testing.T, addr string) net.Conn {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestMalformedInputClosesConnection(t *testing.T) {
	s, addr := startQuick(t)
	cases := map[string][]byte{
		"not SMB":            frame([]byte("GET / HTTP/1.1\r\n\r\n")),
		"truncated header":   frame(negotiateMsg(0, wire.Dialect311)[:40]),
		"huge length":        {0, 0xff, 0xff, 0xff, 0xfe, 'S', 'M', 'B'},
		"session type":       {0x85, 0, 0, 0},
		"SMB1 without SMB2":  frame(append([]byte{0xff, 'S', 'M', 'B', 0x72}, make([]byte, 40)...)),
		"before negotiate":   frame((&wire.Header{Command: wire.SessionSetup}).Append(make([]byte, 0))),
		"response flag":      frame((&wire.Header{Command: wire.Negotiate, Flags: wire.FlagServerToRedir}).Append(nil)),
		"message id too far": frame(negotiateMsg(5, wire.Dialect311)),
		"large before logon": {0, 0x04, 0, 0, 0xfe, 'S', 'M', 'B'},
	}
	for name, b := range cases {
		t.Run(name, func(t *testing.T) {
			c := dial(t, addr)
			c.Write(b)
			expectClosed(t, c, 3*time.Second)
		})
	}
	waitConns(t, s, 0)
}

func TestHalfOpenConnectionsAreClosed(t *testing.T) {
	s, addr := startQuick(t)
	silent := dial(t, addr)
	partial := dial(t, addr)
	partial.Write([]byte{0, 0, 1, 0, 0xfe, 'S'}) // announces 256 bytes, sends 2
	expectClosed(t, silent, 3*time.Second)
	expectClosed(t, partial, 3*time.Second)
	waitConns(t, s, 0)
}

func TestSecondNegotiateAndReusedMessageIDClose(t *testing.T) {
	_, addr := startQuick(t)
	c := dial(t, addr)
	c.Write(frame(negotiateMsg(0, wire.Dialect210)))
	if h, _ := readResponse(t, c); h.Status != 0 {
		t.Fatalf("negotiate: %#x", h.Status)
	}
	c.Write(frame(negotiateMsg(0, wire.Dialect210))) // id 0 was used
	expectClosed(t, c, 3*time.Second)
}

func TestUnknownCommandAndNoSessionGetErrors(t *testing.T) {
	_, addr := startQuick(t)
	c := dial(t, addr)
	c.Write(frame(negotiateMsg(0, wire.Dialect300, wire.Dialect210)))
	h, b := readResponse(t, c)
	if h.Status != 0 || le.Uint16(b[wire.HeaderSize+4:]) != wire.Dialect300 {
		t.Fatalf("negotiate: %#x dialect %#x", h.Status, le.Uint16(b[wire.HeaderSize+4:]))
	}
	for i, cmd := range []uint16{0x77, wire.Create, wire.TreeConnect} {
		m := (&wire.Header{Command: cmd, MessageID: uint64(1 + i), SessionID: 99}).Append(nil)
		m = append(m, 9, 0, 0, 0, 0, 0, 0, 0, 0)
		c.Write(frame(m))
		h, _ := readResponse(t, c)
		if h.Status != statusUserSessionDeleted {
			t.Fatalf("command %#x: status %#x", cmd, h.Status)
		}
	}
	// ECHO needs no session.
	m := (&wire.Header{Command: wire.Echo, MessageID: 4}).Append(nil)
	c.Write(frame(append(m, 4, 0, 0, 0)))
	if h, _ := readResponse(t, c); h.Status != 0 {
		t.Fatalf("echo: %#x", h.Status)
	}
}

func TestSessionsPerConnectionBounded(t *testing.T) {
	s := New(Config{Backend: newMemFS("share1"), MaxSessionsPerConn: 3,
		Passwords: func(string) ([]string, bool) { return nil, false }})
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	go s.Serve(ln)
	defer s.Close()
	c := dial(t, ln.Addr().String())
	c.Write(frame(negotiateMsg(0, wire.Dialect210)))
	readResponse(t, c)
	tok := ntlm.InitialToken() // any token works for the first leg's bookkeeping
	_ = tok
	var last uint32
	for i := 1; i <= 5; i++ {
		m := (&wire.Header{Command: wire.SessionSetup, MessageID: uint64(i), Credits: 1}).Append(nil)
		body := make([]byte, 24)
		le.PutUint16(body, 25)
		neg := append([]byte("NTLMSSP\x00\x01\x00\x00\x00"), 0x01, 0x82, 0x08, 0xa2)
		neg = append(neg, make([]byte, 16)...)
		le.PutUint16(body[12:], wire.HeaderSize+24)
		le.PutUint16(body[14:], uint16(len(neg)))
		c.Write(frame(append(append(m, body...), neg...)))
		h, _ := readResponse(t, c)
		last = h.Status
	}
	if last != statusInsufficientResources {
		t.Fatalf("sixth pending session: status %#x, want STATUS_INSUFFICIENT_RESOURCES", last)
	}
}

func FuzzConnection(f *testing.F) {
	f.Add(frame(negotiateMsg(0, wire.Dialect311, wire.Dialect202)))
	f.Add(append(frame(negotiateMsg(0, wire.Dialect210)), frame((&wire.Header{Command: wire.Echo, MessageID: 1}).Append(nil))...))
	s := New(Config{Backend: newMemFS("share1"), AuthTimeout: 50 * time.Millisecond,
		Passwords: func(string) ([]string, bool) { return []string{testKey}, true }})
	f.Fuzz(func(t *testing.T, b []byte) {
		a, z := net.Pipe()
		c := newConn(s, a)
		done := make(chan struct{})
		go func() { c.serve(); close(done) }()
		go io.Copy(io.Discard, z)
		z.SetWriteDeadline(time.Now().Add(time.Second))
		z.Write(b)
		z.Close()
		<-done
	})
}

var _ = binary.LittleEndian

// TestConnectionsWithoutLogonBounded: past the bound, new connections are
// closed at once; a logon frees a place.
func TestConnectionsWithoutLogonBounded(t *testing.T) {
	s := New(Config{Backend: newMemFS("share1"), MaxUnauthenticated: 3,
		Passwords: func(string) ([]string, bool) { return []string{testKey}, true }})
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	go s.Serve(ln)
	defer s.Close()
	addr := ln.Addr().String()
	// The logged-on client is held (and closed) to the end: a connection
	// nothing references is closed by its finalizer at the next GC.
	c, err := smbtest.Dial(addr, testAccount, testKey)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i := 0; i < 3; i++ {
		dial(t, addr)
	}
	waitConns(t, s, 4)
	expectClosed(t, dial(t, addr), 3*time.Second)
	waitConns(t, s, 4)
}

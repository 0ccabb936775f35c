package server

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/auth"
)

// TestCloseDoesNotWaitForSilentConnections: a client that opened a
// connection and never sent a request must not hold up shutdown.
func TestCloseDoesNotWaitForSilentConnections(t *testing.T) {
	s, err := New(context.Background(), Config{InMemory: true, BlobAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", s.Addr(auth.Blob))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	time.Sleep(50 * time.Millisecond)
	start := time.Now()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("Close took %v with one silent connection open", d)
	}
}

package server

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/h1"
)

// serve serves h on a loopback listener with the progress timeout d, as
// newHTTPServer builds the server.
func serve(t *testing.T, h http.Handler, d time.Duration) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &h1.Server{Handler: h, ProgressTimeout: d, ErrorLog: log.New(io.Discard, "", 0)}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// A request body that stops arriving, and a response the client stops
// reading, close the connection after the progress timeout; a slow upload
// and a slow download that keep moving are served whole, however long they
// take in all.
func TestProgressTimeouts(t *testing.T) {
	const d = 500 * time.Millisecond
	bodyErr := make(chan error, 1)
	writeErr := make(chan error, 1)
	addr := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/upload":
			n, err := io.Copy(io.Discard, r.Body)
			if r.URL.RawQuery == "stall" {
				bodyErr <- err
				return
			}
			fmt.Fprintf(w, "%d", n)
		case "/download":
			chunk := make([]byte, 64<<10)
			var err error
			for i := 0; i < 256 && err == nil; i++ {
				_, err = w.Write(chunk)
			}
			if r.URL.RawQuery == "stall" {
				writeErr <- err
			}
		}
	}), d)
	dial := func() net.Conn {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}

	// A body that stops: the handler's read fails, the connection closes.
	c := dial()
	io.WriteString(c, "PUT /upload?stall HTTP/1.1\r\nHost: h\r\nContent-Length: 100\r\n\r\nabc")
	select {
	case err := <-bodyErr:
		if err == nil {
			t.Fatal("stalled body read without error")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a stalled request body held the handler")
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.Copy(io.Discard, c); err != nil {
		t.Fatalf("connection of the stalled body: %v", err)
	}

	// A response nobody reads: the handler's write fails.
	c = dial()
	io.WriteString(c, "GET /download?stall HTTP/1.1\r\nHost: h\r\n\r\n")
	select {
	case err := <-writeErr:
		if err == nil {
			t.Fatal("16 MiB written to a client that reads nothing")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a stalled reader held the handler")
	}

	// A slow upload that keeps moving: 20 pieces, one every d/5.
	c = dial()
	io.WriteString(c, "PUT /upload HTTP/1.1\r\nHost: h\r\nContent-Length: 20480\r\n\r\n")
	for range 20 {
		time.Sleep(d / 5)
		if _, err := c.Write([]byte(strings.Repeat("u", 1024))); err != nil {
			t.Fatalf("slow upload cut off: %v", err)
		}
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("slow upload: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	if string(b) != "20480" {
		t.Fatalf("slow upload: %d %q", resp.StatusCode, b)
	}

	// A slow download that keeps moving: 16 MiB read in pieces with
	// pauses shorter than d; the whole of it arrives.
	c = dial()
	io.WriteString(c, "GET /download HTTP/1.1\r\nHost: h\r\n\r\n")
	br := bufio.NewReader(c)
	resp, err = http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4<<20)
	var got int64
	for {
		time.Sleep(d / 10)
		n, err := io.ReadFull(resp.Body, buf)
		got += int64(n)
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			break
		}
		if err != nil {
			t.Fatalf("slow download cut off after %d bytes: %v", got, err)
		}
	}
	if got != 16<<20 {
		t.Fatalf("slow download: %d bytes", got)
	}
}

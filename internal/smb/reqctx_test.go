package smb

import (
	"net"
	"testing"
	"time"
)

// TestRequestContextShared: requests starting together share one context
// (no timer each), bounded by 29 to 30 s, which ends with the connection.
func TestRequestContextShared(t *testing.T) {
	s := New(Config{Backend: newMemFS("share1")})
	a, z := net.Pipe()
	defer z.Close()
	c := newConn(s, a)
	start := time.Now()
	ctx1, cancel1 := c.reqCtx()
	cancel1() // a request's end does not end the shared context
	ctx2, cancel2 := c.reqCtx()
	defer cancel2()
	if ctx1 != ctx2 {
		t.Fatal("two requests a moment apart have contexts of their own")
	}
	if ctx1.Err() != nil {
		t.Fatalf("shared context ended by one request's cancel: %v", ctx1.Err())
	}
	d, ok := ctx1.Deadline()
	if !ok || d.Before(start.Add(reqTimeout-reqSlack)) || d.After(time.Now().Add(reqTimeout)) {
		t.Fatalf("deadline %v after start, want %v to %v", d.Sub(start), reqTimeout-reqSlack, reqTimeout)
	}
	// A context older than the slack is not handed out.
	c.reqDeadline.Store(&deadlineCtx{ctx: ctx1, deadline: time.Now().Add(reqTimeout - reqSlack - time.Millisecond)})
	if ctx3, _ := c.reqCtx(); ctx3 == ctx1 {
		t.Fatal("a context with less than the timeout minus the slack left was reused")
	}
	c.end()
	if ctx1.Err() == nil {
		t.Fatal("the shared context outlives its connection")
	}
}

package smb_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"

	"github.com/lazuli-storage/lazuli/internal/smb/smbtest"
	"github.com/lazuli-storage/lazuli/internal/smb/wire"
)

// Oplock levels and lease states of CREATE.
const (
	oplockII    = 0x01
	oplockBatch = 0x09
	oplockLease = 0xFF
	leaseR      = 1
	leaseH      = 2
	leaseW      = 4
)

type createContext struct {
	name string
	data []byte
}

// withContexts appends create contexts to a CREATE body.
func withContexts(b []byte, cs ...createContext) []byte {
	for (wire.HeaderSize+len(b))%8 != 0 {
		b = append(b, 0)
	}
	start := len(b)
	for i, c := range cs {
		at := len(b)
		// The data follows the name at the next 8-byte boundary (a
		// GUID-named context has a 16-byte name).
		doff := (16 + len(c.name) + 7) &^ 7
		e := make([]byte, doff, doff+len(c.data)+8)
		le.PutUint16(e[4:], 16)
		le.PutUint16(e[6:], uint16(len(c.name)))
		le.PutUint16(e[10:], uint16(doff))
		le.PutUint32(e[12:], uint32(len(c.data)))
		copy(e[16:], c.name)
		e = append(e, c.data...)
		if i < len(cs)-1 {
			for len(e)%8 != 0 {
				e = append(e, 0)
			}
			le.PutUint32(e, uint32(len(e)))
		}
		b = append(b, e...)
		_ = at
	}
	le.PutUint32(b[48:], uint32(wire.HeaderSize+start))
	le.PutUint32(b[52:], uint32(len(b)-start))
	return b
}

// leaseContext is an RqLs request (v1) for key and state.
func leaseContext(key byte, state uint32) createContext {
	d := make([]byte, 32)
	d[0] = key
	le.PutUint32(d[16:], state)
	return createContext{"RqLs", d}
}

// created is what a CREATE answered.
type created struct {
	status   uint32
	fid      wire.FileID
	oplock   byte
	contexts map[string][]byte
}

func parseCreate(h wire.Header, msg []byte) created {
	c := created{status: h.Status, contexts: map[string][]byte{}}
	if h.Status != 0 {
		return c
	}
	r := msg[wire.HeaderSize:]
	c.oplock = r[2]
	c.fid = wire.FileID{Persistent: le.Uint64(r[64:]), Volatile: le.Uint64(r[72:])}
	off, n := int(le.Uint32(r[80:])), int(le.Uint32(r[84:]))
	for p := off; n > 0 && p+16 <= len(msg); {
		next := int(le.Uint32(msg[p:]))
		no, nl := int(le.Uint16(msg[p+4:])), int(le.Uint16(msg[p+6:]))
		do, dl := int(le.Uint16(msg[p+10:])), int(le.Uint32(msg[p+12:]))
		c.contexts[string(msg[p+no:p+no+nl])] = msg[p+do : p+do+dl]
		if next == 0 {
			break
		}
		p += next
	}
	return c
}

func create(t *testing.T, c *smbtest.Client, body []byte) created {
	t.Helper()
	h, msg, err := c.Do(wire.Create, body)
	must(t, err)
	return parseCreate(h, msg)
}

// createBody is a CREATE of an existing file asking for an oplock level.
func createBody(name string, access, share uint32, oplock byte) []byte {
	b := smbtest.CreateBody(name, access, share, openOnly, nonDir)
	b[3] = oplock
	return b
}

// recvBreak reads the next message, which must be a break notification.
func recvBreak(t *testing.T, c *smbtest.Client) []byte {
	t.Helper()
	h, msg, err := c.Recv()
	must(t, err)
	if h.Command != wire.OplockBreak || h.MessageID != ^uint64(0) {
		t.Fatalf("got command %#x message id %#x status %#x, want a break notification", h.Command, h.MessageID, h.Status)
	}
	return msg[wire.HeaderSize:]
}

func oplockAck(fid wire.FileID, level byte) []byte {
	b := make([]byte, 24)
	le.PutUint16(b, 24)
	b[2] = level
	le.PutUint64(b[8:], fid.Persistent)
	le.PutUint64(b[16:], fid.Volatile)
	return b
}

// TestOplockBreakOnConflictingOpen: a batch oplock is granted to a lone
// open; a second client's open breaks it to level II, waiting (answered
// STATUS_PENDING) until the holder acknowledges, and is granted level II
// itself; a write then breaks both level II oplocks to none, the
// writer's own included.
func TestOplockBreakOnConflictingOpen(t *testing.T) {
	engines(t, func(t *testing.T, e *env) {
		e.createFile(t, "o.txt", []byte("data"))
		a, b := e.smb(t), e.smb(t)
		all := uint32(shareR | shareW | shareD)
		ga := create(t, a, createBody("o.txt", readData|writeData, all, oplockBatch))
		if ga.status != 0 || ga.oplock != oplockBatch {
			t.Fatalf("first open: status %#x oplock %#x, want batch", ga.status, ga.oplock)
		}
		mid, err := b.Send(wire.Create, createBody("o.txt", readData|writeData, all, oplockBatch))
		must(t, err)
		brk := recvBreak(t, a)
		if brk[2] != oplockII || le.Uint64(brk[8:]) != ga.fid.Persistent {
			t.Fatalf("break to %#x of %#x, want level II of %#x", brk[2], le.Uint64(brk[8:]), ga.fid.Persistent)
		}
		if h, _, err := b.Recv(); err != nil || h.Status != smbtest.StatusPending {
			t.Fatalf("second open before the acknowledgement: %#x %v, want STATUS_PENDING", h.Status, err)
		}
		h, msg, err := a.Do(wire.OplockBreak, oplockAck(ga.fid, oplockII))
		must(t, err)
		if h.Status != 0 || msg[wire.HeaderSize+2] != oplockII {
			t.Fatalf("acknowledgement: %#x", h.Status)
		}
		h, msg, err = b.Wait(mid)
		must(t, err)
		gb := parseCreate(h, msg)
		if gb.status != 0 || gb.oplock != oplockII {
			t.Fatalf("second open: status %#x oplock %#x, want level II", gb.status, gb.oplock)
		}
		w := make([]byte, 48)
		le.PutUint16(w, 49)
		le.PutUint16(w[2:], wire.HeaderSize+48)
		le.PutUint32(w[4:], 1)
		le.PutUint64(w[16:], gb.fid.Persistent)
		le.PutUint64(w[24:], gb.fid.Volatile)
		wmid, err := b.Send(wire.Write, append(w, 'x'))
		must(t, err)
		if brk := recvBreak(t, a); brk[2] != 0 {
			t.Fatalf("break of the other open after the write to %#x, want none", brk[2])
		}
		// The writer's own break and the WRITE response, in either order.
		got := map[uint16]uint32{}
		for range 2 {
			h, msg, err := b.Recv()
			must(t, err)
			got[h.Command] = h.Status
			if h.Command == wire.OplockBreak && msg[wire.HeaderSize+2] != 0 {
				t.Fatalf("own break to %#x, want none", msg[wire.HeaderSize+2])
			}
			if h.Command == wire.Write && h.MessageID != wmid {
				t.Fatalf("unexpected WRITE response %d", h.MessageID)
			}
		}
		if st, ok := got[wire.Write]; !ok || st != 0 || len(got) != 2 {
			t.Fatalf("writer got %v, want its WRITE answered and its own level II broken", got)
		}
	})
}

// TestRESTWriteBreaksSMBLease: a REST Put Range on a file an SMB client
// holds a read-write-handle lease on breaks it to handle caching and
// waits for the acknowledgement before it writes.
func TestRESTWriteBreaksSMBLease(t *testing.T) {
	engines(t, func(t *testing.T, e *env) {
		f := e.createFile(t, "l.txt", []byte("data"))
		a := e.smb(t)
		g := create(t, a, withContexts(createBody("l.txt", readData|writeData, shareR|shareW|shareD, oplockLease),
			leaseContext(7, leaseR|leaseH|leaseW)))
		ls := g.contexts["RqLs"]
		if g.status != 0 || g.oplock != oplockLease || len(ls) < 32 || le.Uint32(ls[16:]) != leaseR|leaseH|leaseW {
			t.Fatalf("open: status %#x oplock %#x lease %x, want RWH", g.status, g.oplock, ls)
		}
		done := make(chan error, 1)
		go func() {
			_, err := f.UploadRange(ctx(t), 0, body([]byte("DA")), nil)
			done <- err
		}()
		brk := recvBreak(t, a)
		if le.Uint16(brk) != 44 || le.Uint32(brk[4:])&1 == 0 || brk[8] != 7 ||
			le.Uint32(brk[24:]) != leaseR|leaseH|leaseW || le.Uint32(brk[28:]) != leaseH {
			t.Fatalf("lease break %x, want RWH to H with acknowledgement", brk)
		}
		select {
		case err := <-done:
			t.Fatalf("the REST write went on before the acknowledgement: %v", err)
		case <-time.After(100 * time.Millisecond):
		}
		ack := make([]byte, 36)
		le.PutUint16(ack, 36)
		copy(ack[8:], brk[8:24])
		le.PutUint32(ack[24:], leaseH)
		h, _, err := a.Do(wire.OplockBreak, ack)
		must(t, err)
		if h.Status != 0 {
			t.Fatalf("lease acknowledgement: %#x", h.Status)
		}
		must(t, <-done)
		if got := restBytes(t, f); !bytes.Equal(got, []byte("DAta")) {
			t.Fatalf("file holds %q", got)
		}
	})
}

// TestDurableHandleSurvivesDisconnect: a durable open (batch oplock,
// DHnQ) outlives its connection: REST List Handles shows it and its
// share mode still refuses REST reads; a reconnect (DHnC) takes it back
// and writes through it. Force Close Handles ends a parked one, and a
// reconnect then finds nothing.
func TestDurableHandleSurvivesDisconnect(t *testing.T) {
	engines(t, func(t *testing.T, e *env) {
		f := e.createFile(t, "d.txt", []byte("data"))
		a := e.smb(t)
		g := create(t, a, withContexts(createBody("d.txt", readData|writeData, 0, oplockBatch),
			createContext{"DHnQ", make([]byte, 16)}))
		if g.status != 0 || g.oplock != oplockBatch || g.contexts["DHnQ"] == nil {
			t.Fatalf("durable open: status %#x oplock %#x contexts %v", g.status, g.oplock, g.contexts)
		}
		a.Close()
		time.Sleep(50 * time.Millisecond)
		hs, err := f.ListHandles(ctx(t), nil)
		must(t, err)
		if len(hs.Handles) != 1 {
			t.Fatalf("List Handles after the disconnect: %d handles, want 1", len(hs.Handles))
		}
		if got := code(restOps(t, f)["Get File"]()); got != "409 SharingViolation" {
			t.Fatalf("REST read while the durable open waits: %s", got)
		}
		reconnect := func(c *smbtest.Client) created {
			dh := make([]byte, 16)
			le.PutUint64(dh, g.fid.Persistent)
			le.PutUint64(dh[8:], g.fid.Volatile)
			return create(t, c, withContexts(createBody("d.txt", 0, 0, 0), createContext{"DHnC", dh}))
		}
		b := e.smb(t)
		r := reconnect(b)
		if r.status != 0 || r.fid != g.fid || r.oplock != oplockBatch {
			t.Fatalf("reconnect: status %#x id %v (was %v) oplock %#x", r.status, r.fid, g.fid, r.oplock)
		}
		if st := b.Write(r.fid, 0, []byte("DU")); st != 0 {
			t.Fatalf("write through the reconnected open: %#x", st)
		}
		b.Close()
		time.Sleep(50 * time.Millisecond)
		n, err := f.ForceCloseHandles(ctx(t), "*", &file.ForceCloseHandlesOptions{})
		must(t, err)
		if *n.NumberOfHandlesClosed != 1 {
			t.Fatalf("Force Close Handles closed %d", *n.NumberOfHandlesClosed)
		}
		if r := reconnect(e.smb(t)); r.status != smbtest.StatusNotFound {
			t.Fatalf("reconnect after Force Close Handles: %#x, want STATUS_OBJECT_NAME_NOT_FOUND", r.status)
		}
		if got := restBytes(t, f); !bytes.Equal(got, []byte("DUta")) {
			t.Fatalf("file holds %q", got)
		}
	})
}

package smb_test

import (
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/smb/smbtest"
	"github.com/lazuli-storage/lazuli/internal/smb/wire"
)

// durableV2Request is a DH2Q context asking for a v2 durable open with
// create GUID guid.
func durableV2Request(guid byte) createContext {
	d := make([]byte, 32)
	d[16] = guid
	return createContext{"DH2Q", d}
}

// durableReconnect is a DHnC context, or with v2 a DH2C one with create
// GUID guid, naming fid.
func durableReconnect(fid wire.FileID, v2 bool, guid byte) createContext {
	if !v2 {
		d := make([]byte, 16)
		le.PutUint64(d, fid.Persistent)
		le.PutUint64(d[8:], fid.Volatile)
		return createContext{"DHnC", d}
	}
	d := make([]byte, 36)
	le.PutUint64(d, fid.Persistent)
	le.PutUint64(d[8:], fid.Volatile)
	d[16] = guid
	return createContext{"DH2C", d}
}

// durableBatch opens name with a batch oplock, durable as ctx asks.
func durableBatch(t *testing.T, c *smbtest.Client, name string, ctx createContext) created {
	t.Helper()
	g := create(t, c, withContexts(createBody(name, readData|writeData, 0, oplockBatch), ctx))
	if g.status != 0 || g.oplock != oplockBatch || g.contexts[ctx.name] == nil {
		t.Fatalf("durable open: status %#x oplock %#x contexts %v", g.status, g.oplock, g.contexts)
	}
	return g
}

// TestDurableOpenSurvivesLogoff: a LOGOFF leaves the session's durable
// opens for their client to take back, as Windows and Samba do
// (smbtorture smb2.durable-open.reopen4), and so does a session setup
// naming the session as its previous one.
func TestDurableOpenSurvivesLogoff(t *testing.T) {
	engines(t, func(t *testing.T, e *env) {
		e.createFile(t, "l.txt", []byte("data"))
		a := e.smb(t)
		g := durableBatch(t, a, "l.txt", createContext{"DHnQ", make([]byte, 16)})
		h, _, err := a.Do(wire.Logoff, []byte{4, 0, 0, 0})
		must(t, err)
		if h.Status != 0 {
			t.Fatalf("LOGOFF: %#x", h.Status)
		}
		time.Sleep(50 * time.Millisecond)
		r := create(t, e.smb(t), withContexts(createBody("l.txt", 0, 0, 0), durableReconnect(g.fid, false, 0)))
		if r.status != 0 || r.fid != g.fid || r.oplock != oplockBatch {
			t.Fatalf("reconnect after LOGOFF: status %#x id %v (was %v) oplock %#x", r.status, r.fid, g.fid, r.oplock)
		}
	})
}

// TestDurableReconnectVersions: a v2 reconnect (DH2C) takes back an open
// with the create GUID it names (none for a v1 open); a v1 reconnect
// (DHnC) takes back a v2 open too; a v2 reconnect beside a v2 request is
// invalid (MS-SMB2 3.3.5.9.12; smbtorture smb2.durable-v2-open.reopen2b,
// reopen2c and create-blob, smb2.durable-open.reopen2-lease).
func TestDurableReconnectVersions(t *testing.T) {
	engines(t, func(t *testing.T, e *env) {
		e.createFile(t, "v2.txt", []byte("data"))
		e.createFile(t, "v1.txt", []byte("data"))
		a := e.smb(t)
		g2 := durableBatch(t, a, "v2.txt", durableV2Request(7))
		g1 := durableBatch(t, a, "v1.txt", createContext{"DHnQ", make([]byte, 16)})
		a.Close()
		time.Sleep(50 * time.Millisecond)
		b := e.smb(t)
		reconnect := func(name string, cs ...createContext) created {
			return create(t, b, withContexts(createBody(name, 0, 0, 0), cs...))
		}
		if r := reconnect("v2.txt", durableReconnect(g2.fid, true, 7), durableV2Request(7)); r.status != statusInvalidParameter {
			t.Fatalf("DH2C beside DH2Q: %#x, want STATUS_INVALID_PARAMETER", r.status)
		}
		if r := reconnect("v2.txt", durableReconnect(g2.fid, true, 0)); r.status != smbtest.StatusNotFound {
			t.Fatalf("DH2C with another create GUID: %#x, want STATUS_OBJECT_NAME_NOT_FOUND", r.status)
		}
		if r := reconnect("v1.txt", durableReconnect(g1.fid, true, 9)); r.status != smbtest.StatusNotFound {
			t.Fatalf("DH2C of a v1 open with a create GUID: %#x, want STATUS_OBJECT_NAME_NOT_FOUND", r.status)
		}
		if r := reconnect("v2.txt", durableReconnect(g2.fid, false, 0)); r.status != 0 || r.fid != g2.fid || r.oplock != oplockBatch {
			t.Fatalf("DHnC of a v2 open: status %#x id %v (was %v) oplock %#x", r.status, r.fid, g2.fid, r.oplock)
		}
		if r := reconnect("v1.txt", durableReconnect(g1.fid, true, 0)); r.status != 0 || r.fid != g1.fid {
			t.Fatalf("DH2C without a create GUID of a v1 open: status %#x", r.status)
		}
	})
}

const statusFileClosed uint32 = 0xC0000128

// appInstance is an SMB2_CREATE_APP_INSTANCE_ID context naming instance
// id.
func appInstance(id byte) createContext {
	d := make([]byte, 20)
	le.PutUint16(d, 20)
	d[4] = id
	return createContext{"\x45\xbc\xa6\x6a\xef\xa7\xf7\x4a\x90\x08\xfa\x46\x2e\x14\x4d\x74", d}
}

// TestAppInstanceTakesOver: a durable open naming the application
// instance of another client's durable open of the file closes that one
// first, without a break, and gets the file to itself (MS-SMB2
// 3.3.5.9.13; smbtorture smb2.durable-v2-open.app-instance).
func TestAppInstanceTakesOver(t *testing.T) {
	engines(t, func(t *testing.T, e *env) {
		e.createFile(t, "a.txt", []byte("data"))
		a, b := e.smb(t), e.smb(t)
		first := create(t, a, withContexts(createBody("a.txt", readData|writeData, 0, oplockBatch), durableV2Request(1), appInstance(5)))
		if first.status != 0 || first.oplock != oplockBatch {
			t.Fatalf("first open: status %#x oplock %#x", first.status, first.oplock)
		}
		second := create(t, b, withContexts(createBody("a.txt", readData|writeData, 0, oplockBatch), durableV2Request(2), appInstance(5)))
		if second.status != 0 || second.oplock != oplockBatch {
			t.Fatalf("open of the same instance: status %#x oplock %#x", second.status, second.oplock)
		}
		if st := a.CloseFile(first.fid); st != statusFileClosed {
			t.Fatalf("close of the replaced open: %#x, want STATUS_FILE_CLOSED", st)
		}
	})
}

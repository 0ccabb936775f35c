package smb

import (
	"testing"

	"github.com/lazuli-storage/lazuli/internal/smb/smbtest"
	"github.com/lazuli-storage/lazuli/internal/smb/wire"
)

func renameInfo(name string) []byte {
	n := wire.AppendUTF16(nil, name)
	b := make([]byte, 20)
	b[0] = 1 // ReplaceIfExists
	le.PutUint32(b[16:], uint32(len(n)))
	return append(b, n...)
}

// A session re-authenticated as the anonymous user keeps its opens, which
// keep their access, but opens, renames and connects nothing new until the
// account re-authenticates (smbtorture smb2.session.reauth2 to reauth4).
func TestReauthenticateAnonymously(t *testing.T) {
	_, addr := startServer(t, newMemFS("share1"))
	c := dialTest(t, addr)
	fid, st := c.Create("a.txt", FileAllAccess, 7, FileCreate, 0)
	if st != 0 {
		t.Fatalf("create: %#x", st)
	}
	if st := c.Reauthenticate("", ""); st != 0 {
		t.Fatalf("anonymous re-authentication: %#x", st)
	}
	if _, st := c.QueryInfo(fid, wire.InfoFile, filePositionInformation, 0, 8); st != 0 {
		t.Fatalf("query on the open: %#x", st)
	}
	if st := c.Write(fid, 0, []byte("x")); st != 0 {
		t.Fatalf("write on the open: %#x", st)
	}
	if _, st := c.Create("b.txt", FileAllAccess, 7, FileCreate, 0); st != smbtest.StatusAccessDenied {
		t.Fatalf("create while anonymous: %#x", st)
	}
	if st := c.SetInfo(fid, wire.InfoFile, fileRenameInformation, 0, renameInfo("c.txt")); st != smbtest.StatusAccessDenied {
		t.Fatalf("rename while anonymous: %#x", st)
	}
	if err := c.TreeConnect("share1"); err == nil || err.(smbtest.StatusError) != smbtest.StatusError(statusAccessDenied) {
		t.Fatalf("tree connect while anonymous: %v", err)
	}
	if st := c.Reauthenticate(testAccount, testKey); st != 0 {
		t.Fatalf("re-authentication: %#x", st)
	}
	if st := c.SetInfo(fid, wire.InfoFile, fileRenameInformation, 0, renameInfo("c.txt")); st != 0 {
		t.Fatalf("rename: %#x", st)
	}
	if _, st := c.Create("b.txt", FileAllAccess, 7, FileCreate, 0); st != 0 {
		t.Fatalf("create: %#x", st)
	}
}

// A new session may not log on anonymously.
func TestAnonymousLogonRefused(t *testing.T) {
	_, addr := startServer(t, newMemFS("share1"))
	if _, err := smbtest.Dial(addr, "", ""); err == nil {
		t.Fatal("anonymous logon accepted")
	}
}

package smb

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/lazuli-storage/lazuli/internal/smb/wire"
)

func TestMatchPattern(t *testing.T) {
	for _, c := range []struct {
		pattern, name string
		want          bool
	}{
		{"*", "anything", true}, {"*.txt", "a.TXT", true}, {"*.txt", "a.txt.bak", false},
		{"a?c", "abc", true}, {"a?c", "ac", false}, {"<.txt", "x.txt", true}, {"ABC", "abc", true},
		{"a*b*c", "aXbYc", true}, {"a*b*c", "aXbY", false},
	} {
		if got := matchPattern(c.pattern, c.name); got != c.want {
			t.Errorf("matchPattern(%q, %q) = %v", c.pattern, c.name, got)
		}
	}
	// A pathological pattern ends quickly.
	matchPattern("*a*a*a*a*a*a*a*a*a*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")
}

func TestSharePath(t *testing.T) {
	for in, want := range map[string]string{"": "", `a\b\c.txt`: "a/b/c.txt", `dir\`: "dir", "f::$DATA": "f",
		// ".." names the parent of the component before it.
		`a\..\b`: "b", `a\b\..`: "a", `a\..`: ""} {
		if got, ok := sharePath(in); !ok || got != want {
			t.Errorf("sharePath(%q) = %q, %v", in, got, ok)
		}
	}
	for _, bad := range []string{`\lead`, `a\\b`, `a\..\..\b`, `..`, `a*\..`, `a:stream`, "a\x01", `a*`, `.`} {
		if _, ok := sharePath(bad); ok {
			t.Errorf("sharePath(%q) accepted", bad)
		}
	}
	// A name leaving the share is a bad path, other bad names invalid.
	for name, want := range map[string]uint32{`..\..\..`: statusObjectPathSyntaxBad, `..`: statusObjectPathSyntaxBad,
		"a\\..\b": statusObjectNameInvalid, `a:s`: statusObjectNameInvalid} {
		if got := badNameStatus(name); got != want {
			t.Errorf("badNameStatus(%q) = %#x, want %#x", name, got, want)
		}
	}
}

// TestSecurityDescriptorFromSDDL checks the self-relative encoding of an
// SDDL string: owner BA, group SY, a protected DACL with one allow ACE
// for Everyone (FA) inherited by files and directories.
func TestSecurityDescriptorFromSDDL(t *testing.T) {
	sd, err := securityDescriptor("O:BAG:SYD:P(A;OICI;FA;;;WD)", 7)
	if err != nil {
		t.Fatal(err)
	}
	want := "0100" + "0490" + // revision, control: self-relative | DACL present | DACL protected
		"14000000" + "24000000" + "00000000" + "30000000" + // owner, group, SACL, DACL offsets
		"010200000000000520000000" + "20020000" + // S-1-5-32-544
		"0101000000000005" + "12000000" + // S-1-5-18
		"02001c000100" + "0000" + // ACL: revision 2, size 28, one ACE
		"00031400" + "ff011f00" + "0101000000000001" + "00000000" // allow, OI|CI, FA, S-1-1-0
	if got := hex.EncodeToString(sd); got != want {
		t.Fatalf("descriptor\n got %s\nwant %s", got, want)
	}
	owner, _ := securityDescriptor("O:BAG:SYD:P(A;OICI;FA;;;WD)", 1)
	if !bytes.Equal(owner[4:8], []byte{20, 0, 0, 0}) || le.Uint32(owner[16:]) != 0 {
		t.Fatalf("owner-only descriptor: %x", owner)
	}
	for _, bad := range []string{"O:XX", "D:(A;;FA;;;S-1-x)", "D:(Z;;FA;;;WD)", "D:(A;;FA;;WD)"} {
		if _, err := securityDescriptor(bad, 7); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func FuzzSecurityDescriptor(f *testing.F) {
	f.Add("O:BAG:SYD:P(A;OICI;FA;;;WD)(D;;0x1200a9;;;S-1-5-21-1-2-3-500)")
	f.Fuzz(func(t *testing.T, s string) { securityDescriptor(s, 15) })
}

// TestSDDLFromDescriptor: a descriptor decodes to an SDDL that encodes
// back to the same bytes; a DACL-only descriptor keeps the owner and
// group of the current SDDL; object ACEs and truncated descriptors are
// refused; a NULL DACL is no access control.
func TestSDDLFromDescriptor(t *testing.T) {
	for _, sddl := range []string{
		"O:BAG:SYD:P(A;OICI;FA;;;WD)",
		"O:S-1-5-21-1-2-3-500G:S-1-5-21-1-2-3-513D:PAI(D;;0x1200a9;;;S-1-1-0)(A;OICIIOID;0x1f01ff;;;S-1-5-21-1-2-3-500)",
		"O:SYG:SYD:",
	} {
		sd, err := securityDescriptor(sddl, 7)
		if err != nil {
			t.Fatal(err)
		}
		got, err := sddlFromDescriptor(sd, 7, "")
		if err != nil {
			t.Fatalf("%s: %v", sddl, err)
		}
		again, err := securityDescriptor(got, 7)
		if err != nil || !bytes.Equal(again, sd) {
			t.Fatalf("%s decoded to %s, which encodes differently (%v)", sddl, got, err)
		}
	}
	dacl, _ := securityDescriptor("O:WDG:WDD:(A;;FR;;;BU)", 4)
	got, err := sddlFromDescriptor(dacl, 4, "O:BAG:SYD:(A;;FA;;;WD)")
	if err != nil || got != "O:BAG:SYD:(A;;0x120089;;;S-1-5-32-545)" {
		t.Fatalf("DACL only: %q %v", got, err)
	}
	sd, _ := securityDescriptor("O:BAG:SYD:(A;;FA;;;WD)", 7)
	object := bytes.Clone(sd)
	object[le.Uint32(object[16:])+8] = 5 // ACCESS_ALLOWED_OBJECT_ACE_TYPE
	null := bytes.Clone(sd)
	le.PutUint32(null[16:], 0)
	// A NULL DACL (present, at offset 0) is no access control, as on
	// Windows and Samba (smbtorture smb2.create.nulldacl), and reads back
	// as one.
	if got, err := sddlFromDescriptor(null, 7, ""); err != nil || got != "O:S-1-5-32-544G:S-1-5-18D:NO_ACCESS_CONTROL" {
		t.Errorf("NULL DACL: %q %v", got, err)
	} else if again, err := securityDescriptor(got, 7); err != nil || le.Uint16(again[2:])&0x0004 == 0 || le.Uint32(again[16:]) != 0 {
		t.Errorf("NULL DACL encodes as %x (%v), want DACL_PRESENT with the DACL at offset 0", again, err)
	}
	for name, bad := range map[string][]byte{"object ACE": object, "truncated": sd[:30], "short": sd[:10]} {
		if got, err := sddlFromDescriptor(bad, 7, ""); err == nil {
			t.Errorf("%s accepted as %q", name, got)
		}
	}
}

func FuzzSDDLFromDescriptor(f *testing.F) {
	sd, _ := securityDescriptor("O:BAG:SYD:P(A;OICI;FA;;;WD)(D;;0x1200a9;;;S-1-5-21-1-2-3-500)", 7)
	f.Add(sd, uint32(7))
	f.Fuzz(func(t *testing.T, sd []byte, info uint32) {
		got, err := sddlFromDescriptor(sd, info, "")
		if err == nil {
			if _, err := securityDescriptor(got, 7); err != nil {
				t.Fatalf("%x decoded to %q, which does not encode: %v", sd, got, err)
			}
		}
	})
}

// TestQueryDirectoryFitsTheBuffer lists a directory of many entries
// through small output buffers: every answer fits its buffer, entries
// are 8-byte aligned and chained, and together they name every file once.
func TestQueryDirectoryFitsTheBuffer(t *testing.T) {
	_, addr := startServer(t, newMemFS("share1"))
	c := dialTest(t, addr)
	for i := 0; i < 40; i++ {
		fid, st := c.Create(fmt.Sprintf("file-%02d-%s", i, strings.Repeat("x", i%7)), FileReadData, 7, FileCreate, 0)
		if st != 0 {
			t.Fatalf("create: %#x", st)
		}
		c.CloseFile(fid)
	}
	dir, st := c.Create("", FileReadData, 7, FileOpen, FileDirectoryFile)
	if st != 0 {
		t.Fatalf("open root: %#x", st)
	}
	seen := map[string]int{}
	for _, bufLen := range []uint32{300} {
		for {
			b := make([]byte, 32)
			le.PutUint16(b, 33)
			b[2] = fileIDBothDirectoryInformation
			le.PutUint64(b[8:], dir.Persistent)
			le.PutUint64(b[16:], dir.Volatile)
			le.PutUint16(b[24:], wire.HeaderSize+32)
			le.PutUint16(b[26:], 2)
			le.PutUint32(b[28:], bufLen)
			h, resp, err := c.Do(wire.QueryDirectory, append(b, '*', 0))
			if err != nil {
				t.Fatal(err)
			}
			if h.Status == statusNoMoreFiles {
				break
			}
			if h.Status != 0 {
				t.Fatalf("query: %#x", h.Status)
			}
			out := resp[le.Uint16(resp[wire.HeaderSize+2:]):]
			out = out[:le.Uint32(resp[wire.HeaderSize+4:])]
			if len(out) > int(bufLen) {
				t.Fatalf("answer of %d bytes for a buffer of %d", len(out), bufLen)
			}
			for off := 0; ; {
				n := le.Uint32(out[off+60:])
				name, _ := wire.DecodeUTF16(out[off+104 : off+104+int(n)])
				seen[name]++
				next := int(le.Uint32(out[off:]))
				if next == 0 {
					break
				}
				if next%8 != 0 {
					t.Fatalf("entry offset %d not aligned", next)
				}
				off += next
			}
		}
	}
	if len(seen) != 42 {
		t.Fatalf("listed %d names, want 40 files and . and ..", len(seen))
	}
	for name, n := range seen {
		if n != 1 {
			t.Fatalf("%s listed %d times", name, n)
		}
	}
}

package smb_test

import (
	"bytes"
	"crypto/rand"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lazuli-storage/lazuli/emulator"
)

// smbclient runs Samba's smbclient against the env's SMB listener.
func (e *env) smbclient(t *testing.T, service string, args []string, cmds string) (string, error) {
	t.Helper()
	path, err := exec.LookPath("smbclient")
	if err != nil {
		t.Fatal("smbclient is needed (Debian package smbclient)")
	}
	host, port, _ := net.SplitHostPort(e.em.SMBAddr())
	a := []string{"-p", port, "-U", emulator.Account + "%" + emulator.Key, "--configfile=/dev/null"}
	if service == "-L" {
		a = append(a, "-L", "//"+host)
	} else {
		a = append(a, "//"+host+"/"+service, "-c", cmds)
	}
	cmd := exec.Command(path, append(a, args...)...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "HOME="+cmd.Dir)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestSmbclientWorksInAShareRESTUses puts, lists, gets and removes files
// and directories with smbclient on every dialect family, signed and
// encrypted, and checks REST sees what SMB wrote.
func TestSmbclientWorksInAShareRESTUses(t *testing.T) {
	engines(t, func(t *testing.T, e *env) {
		dir := t.TempDir()
		data := make([]byte, 3<<20+77)
		rand.Read(data)
		src := filepath.Join(dir, "src.bin")
		must(t, os.WriteFile(src, data, 0o644))
		modes := [][]string{
			{"-m", "SMB2_02"}, {"-m", "SMB2"}, {"-m", "SMB3_00"}, {"-m", "SMB3"},
			{"-m", "SMB2", "--client-protection=sign"}, {"-m", "SMB3", "--client-protection=sign"},
			{"-m", "SMB3_00", "--client-protection=encrypt"}, {"-m", "SMB3", "--client-protection=encrypt"},
		}
		if e.engine != "memory" {
			// The protocol does not depend on the engine: one signed
			// SMB 3.1.1 run shows the engine serves SMB.
			modes = modes[5:6]
		}
		for i, mode := range modes {
			t.Run(strings.Join(mode, " "), func(t *testing.T) {
				d := "d" + string(rune('a'+i))
				dst := filepath.Join(dir, d+".out")
				out, err := e.smbclient(t, e.name, mode, "mkdir "+d+"; cd "+d+"; put "+src+" f.bin; mkdir sub; put "+src+
					" sub\\g.bin; ls; get f.bin "+dst)
				if err != nil || strings.Contains(out, "NT_STATUS") || !strings.Contains(out, "f.bin") {
					t.Fatalf("smbclient: %v\n%s", err, out)
				}
				got, err := os.ReadFile(dst)
				if err != nil || !bytes.Equal(got, data) {
					t.Fatalf("get returned %d bytes, want %d", len(got), len(data))
				}
				r, err := e.share.NewDirectoryClient(d).NewFileClient("f.bin").DownloadStream(ctx(t), nil)
				must(t, err)
				rest, _ := io.ReadAll(r.Body)
				r.Body.Close()
				if !bytes.Equal(rest, data) {
					t.Fatalf("REST reads %d bytes of what SMB wrote, want %d", len(rest), len(data))
				}
				out, err = e.smbclient(t, e.name, mode, "cd "+d+"; rm f.bin; deltree sub; cd ..; rmdir "+d+"; ls")
				if err != nil || strings.Contains(out, "NT_STATUS") || strings.Contains(out, " "+d+" ") {
					t.Fatalf("smbclient rm/deltree/rmdir: %v\n%s", err, out)
				}
				if _, err := e.share.NewDirectoryClient(d).GetProperties(ctx(t), nil); code(err) != "404 ResourceNotFound" {
					t.Fatalf("REST still sees %s: %s", d, code(err))
				}
			})
		}
	})
}

func TestSmbclientListsSharesAndRefusesWrongKey(t *testing.T) {
	engines(t, func(t *testing.T, e *env) {
		out, _ := e.smbclient(t, "-L", []string{"-m", "SMB3"}, "")
		if !strings.Contains(out, e.name) || !strings.Contains(out, "IPC$") {
			t.Fatalf("share list:\n%s", out)
		}
		host, port, _ := net.SplitHostPort(e.em.SMBAddr())
		bad, err := exec.Command("smbclient", "//"+host+"/"+e.name, "-p", port, "-U", emulator.Account+"%wrong",
			"--configfile=/dev/null", "-c", "ls").CombinedOutput()
		if err == nil || !strings.Contains(string(bad), "NT_STATUS_LOGON_FAILURE") {
			t.Fatalf("wrong key: %v\n%s", err, bad)
		}
	})
}

// TestImpacketScenarios runs the share-mode, delete-pending and lock
// scenarios with Debian's python3-impacket against the File service.
func TestImpacketScenarios(t *testing.T) {
	engines(t, func(t *testing.T, e *env) {
		host, port, _ := net.SplitHostPort(e.em.SMBAddr())
		out, err := exec.Command("/usr/bin/python3", "../../internal/smb/testdata/impacket_scenarios.py",
			host, port, e.name, emulator.Account, emulator.Key).CombinedOutput()
		t.Log(string(out))
		if err != nil {
			t.Fatalf("impacket scenarios: %v", err)
		}
	})
}

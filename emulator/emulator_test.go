package emulator_test

import (
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/lazuli-storage/lazuli/emulator"
)

// TestAddrs checks the listener addresses the emulator reports: each
// service's Addr is where its Endpoint points and answers HTTP, SMBAddr
// accepts connections, and without listeners both are empty.
func TestAddrs(t *testing.T) {
	emu, err := emulator.Start(emulator.Options{InMemory: true, SMB: true})
	if err != nil {
		t.Fatal(err)
	}
	defer emu.Close()
	for _, s := range []emulator.Service{emulator.Blob, emulator.Queue, emulator.Table, emulator.File} {
		addr := emu.Addr(s)
		if addr == "" || !strings.Contains(emu.Endpoint(s), "//"+addr+"/") {
			t.Fatalf("service %v: Addr %q, Endpoint %q", s, addr, emu.Endpoint(s))
		}
		resp, err := http.Get("http://" + addr + "/")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.Header.Get("X-Ms-Request-Id") == "" {
			t.Errorf("service %v at %s: no request id in the answer", s, addr)
		}
	}
	if emu.Engine() == nil {
		t.Error("no engine")
	}
	c, err := net.Dial("tcp", emu.SMBAddr())
	if err != nil {
		t.Fatalf("SMBAddr %q: %v", emu.SMBAddr(), err)
	}
	c.Close()

	if emu.AdminURL() != "" || emu.WebURL() != "" {
		t.Errorf("without Admin and Web: AdminURL %q, WebURL %q", emu.AdminURL(), emu.WebURL())
	}

	quiet, err := emulator.Start(emulator.Options{InMemory: true, NoListen: true})
	if err != nil {
		t.Fatal(err)
	}
	defer quiet.Close()
	if a, s := quiet.Addr(emulator.Blob), quiet.SMBAddr(); a != "" || s != "" {
		t.Errorf("NoListen: Addr %q, SMBAddr %q", a, s)
	}
}

// TestAdminAndWebURLs checks that the optional listeners are where the
// emulator says: the admin listener's health check answers 200 and the
// static website endpoint answers for the account.
func TestAdminAndWebURLs(t *testing.T) {
	emu, err := emulator.Start(emulator.Options{InMemory: true, Admin: true, Web: true})
	if err != nil {
		t.Fatal(err)
	}
	defer emu.Close()
	resp, err := http.Get(emu.AdminURL() + "/healthz")
	if err != nil {
		t.Fatalf("AdminURL %q: %v", emu.AdminURL(), err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("%s/healthz: %d", emu.AdminURL(), resp.StatusCode)
	}
	if !strings.HasSuffix(emu.WebURL(), "/"+emulator.Account) {
		t.Fatalf("WebURL %q does not name the account", emu.WebURL())
	}
	resp, err = http.Get(emu.WebURL() + "/")
	if err != nil {
		t.Fatalf("WebURL %q: %v", emu.WebURL(), err)
	}
	resp.Body.Close()
	if resp.Header.Get("X-Ms-Request-Id") == "" {
		t.Errorf("%s: no request id in the answer (status %d)", emu.WebURL(), resp.StatusCode)
	}
}

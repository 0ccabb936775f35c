//go:build linux

package main

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// TestServerCPUOfProcessTree: the CPU of a process counts its children,
// live ones and ones already waited for.
func TestServerCPUOfProcessTree(t *testing.T) {
	// A shell that burns CPU in a child it waits for, then in a child
	// that stays alive.
	sh := exec.Command("sh", "-c", `i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done & wait; `+
		`(i=0; while true; do i=$((i+1)); done) & echo started; wait`)
	sh.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := sh.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	// The shell's process group: it and its children.
	defer func() { syscall.Kill(-sh.Process.Pid, syscall.SIGKILL); sh.Wait() }()
	buf := make([]byte, 8)
	if _, err := out.Read(buf); err != nil {
		t.Fatal(err)
	}
	first := treeCPU(sh.Process.Pid)
	if first < 50*time.Millisecond {
		t.Fatalf("CPU of the tree after a waited-for busy child: %v", first)
	}
	for deadline := time.Now().Add(10 * time.Second); treeCPU(sh.Process.Pid)-first < 100*time.Millisecond; {
		if time.Now().After(deadline) {
			t.Fatalf("CPU of the tree did not grow with a busy live child: %v then %v", first, treeCPU(sh.Process.Pid))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if treeCPU(os.Getpid()) <= 0 {
		t.Fatal("no CPU for this process")
	}
}

func TestParseServerCPU(t *testing.T) {
	target, tier, err := parseServerCPU("pg3:lazuli=10, 11,12")
	if err != nil || target != "pg3" || tier.name != "lazuli" || len(tier.pids) != 3 || tier.pids[2] != 12 {
		t.Fatalf("got %q %+v %v", target, tier, err)
	}
	for _, bad := range []string{"pg3=1", "pg3:lazuli", "pg3:lazuli=", ":x=1", "a:b=x", "a:b=0", "a:b=1,,2"} {
		if _, _, err := parseServerCPU(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if _, code := parseFlags([]string{"--target", "a=UseDevelopmentStorage=true", "--cpu", "b:x=1"}, nil, devNull{}); code != 2 {
		t.Errorf("--cpu for an unknown target: exit %d, want 2", code)
	}
	o, code := parseFlags([]string{"--target", "a=UseDevelopmentStorage=true", "--cpu", "a:x=1", "--cpu", "a:y=2,3"}, nil, devNull{})
	// The two tiers named, then the load generator's.
	if tiers := o.settings.serverCPU["a"]; code != 0 || len(tiers) != 3 || tiers[0].name != "x" || tiers[1].name != "y" ||
		tiers[2].name != clientTier || tiers[2].pids[0] != os.Getpid() {
		t.Fatalf("parseFlags: %d %+v", code, o)
	}
}

type devNull struct{}

func (devNull) Write(p []byte) (int, error) { return len(p), nil }

//go:build unix

package main

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// processCPU returns the user plus system CPU time this process has used,
// so a result can show how much of the machine the client itself took.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}

// settle writes every dirty page of the machine's file systems to disk,
// then waits for the CPUs to go quiet (see quiesce).
func settle() {
	syscall.Sync()
	quiesce(10 * time.Second)
}

// quiesce waits, for at most max, until the machine's CPUs have been at
// least 85% idle over a short window (Linux; elsewhere it returns at once),
// so that background work a server started in an earlier workload (its
// own compaction or collection) does not run into the next measurement.
func quiesce(max time.Duration) {
	deadline := time.Now().Add(max)
	busy0, total0, ok := cpuJiffies()
	for ok && time.Now().Before(deadline) {
		time.Sleep(300 * time.Millisecond)
		busy1, total1, ok1 := cpuJiffies()
		if !ok1 {
			return
		}
		if total1 > total0 && float64(busy1-busy0)/float64(total1-total0) < 0.15 {
			return
		}
		busy0, total0 = busy1, total1
	}
}

// cpuJiffies reads the busy and total CPU time of the machine from
// /proc/stat.
func cpuJiffies() (busy, total uint64, ok bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 5 || f[0] != "cpu" {
		return 0, 0, false
	}
	for i, s := range f[1:] {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return 0, 0, false
		}
		total += n
		if i != 3 && i != 4 { // idle and iowait
			busy += n
		}
	}
	return busy, total, true
}

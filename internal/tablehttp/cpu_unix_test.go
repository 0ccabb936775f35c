//go:build unix

package tablehttp

import (
	"syscall"
	"time"
)

// processCPU is the CPU time the process has used, all threads, user and
// system: the workload benchmarks report it per operation, which a busy
// machine disturbs less than wall time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

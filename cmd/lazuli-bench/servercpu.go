package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// serverTier is a named group of server processes of one target, such as
// "lazuli" (its instances) or "postgres" (the database they share), whose
// CPU a measurement reports, so the cost of an operation on each tier is
// known apart from the others.
type serverTier struct {
	name string
	pids []int
}

// clientTier names the tier every target with --cpu tiers gets beside
// them: the CPU of the load generator (lazuli-bench's clients, or the
// pgbench it runs), which shares the machine with the servers.
const clientTier = "client"

// tierCPU is the CPU one tier used during one measurement.
type tierCPU struct {
	Tier string `json:"tier"`
	// Cores is the CPU used over the wall time (1.0 = one core busy).
	Cores float64 `json:"cores"`
	// MicrosPerOp is the CPU per successful operation, in microseconds.
	MicrosPerOp float64 `json:"cpu_us_per_op"`
}

// parseServerCPU parses the value of --cpu: target:tier=pid[,pid...].
func parseServerCPU(v string) (target string, tier serverTier, err error) {
	spec, pids, ok := strings.Cut(v, "=")
	target, name, ok2 := strings.Cut(spec, ":")
	if !ok || !ok2 || target == "" || name == "" || pids == "" {
		return "", tier, fmt.Errorf("want target:tier=pid[,pid...]")
	}
	tier.name = name
	for _, f := range strings.Split(pids, ",") {
		pid, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || pid <= 0 {
			return "", tier, fmt.Errorf("%q is not a process id", f)
		}
		tier.pids = append(tier.pids, pid)
	}
	return target, tier, nil
}

// sampleTiers returns the CPU time of each tier so far (see treeCPU).
func sampleTiers(tiers []serverTier) []time.Duration {
	out := make([]time.Duration, len(tiers))
	for i, t := range tiers {
		for _, pid := range t.pids {
			out[i] += treeCPU(pid)
		}
	}
	return out
}

// tierUsage turns two samples into per-tier figures.
func tierUsage(tiers []serverTier, before, after []time.Duration, ops int64, elapsed time.Duration) []tierCPU {
	var out []tierCPU
	for i, t := range tiers {
		used := after[i] - before[i]
		c := tierCPU{Tier: t.name}
		if elapsed > 0 {
			c.Cores = float64(used) / float64(elapsed)
		}
		if ops > 0 {
			c.MicrosPerOp = float64(used) / float64(time.Microsecond) / float64(ops)
		}
		out = append(out, c)
	}
	return out
}

// clockTick is the unit of /proc/<pid>/stat's times (USER_HZ, 100 on
// every Linux platform Go supports).
const clockTick = 10 * time.Millisecond

// treeCPU returns the user plus system CPU time of process pid, of its
// children that were waited for, and of every live descendant: a database
// server that runs a process per connection (PostgreSQL) is counted whole,
// connections that came and went included. 0 where /proc is missing.
func treeCPU(pid int) time.Duration {
	children := map[int][]int{}
	if dirs, err := os.ReadDir("/proc"); err == nil {
		for _, d := range dirs {
			p, err := strconv.Atoi(d.Name())
			if err != nil {
				continue
			}
			if f := procStat(p); len(f) > 1 {
				if pp, err := strconv.Atoi(f[1]); err == nil {
					children[pp] = append(children[pp], p)
				}
			}
		}
	}
	var total time.Duration
	var walk func(p int)
	walk = func(p int) {
		f := procStat(p)
		// Fields after the command: state is [0], ppid [1], utime [11],
		// stime [12], cutime [13], cstime [14].
		if len(f) < 15 {
			return
		}
		for _, i := range []int{11, 12, 13, 14} {
			n, _ := strconv.ParseInt(f[i], 10, 64)
			total += time.Duration(n) * clockTick
		}
		for _, c := range children[p] {
			walk(c)
		}
	}
	walk(pid)
	return total
}

// procStat returns the fields of /proc/<pid>/stat after the command name
// (which may hold spaces), or nil.
func procStat(pid int) []string {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return nil
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(s[i+1:])
}

package main

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Names of the pseudo-targets that measure limits rather than servers.
const (
	diskTarget    = "disk"
	pgbenchTarget = "pgbench"
)

// pgbenchRunner replays, with PostgreSQL's own pgbench, the statements that
// one lazuli operation sends to its database: a script per workload, its
// transaction rate the most a lazuli instance on that database could reach.
type pgbenchRunner struct {
	bin     string            // the pgbench executable
	db      string            // connection string of the database
	scripts map[string]string // workload name → pgbench script file
	// maxTries is how often a transaction that failed to serialize is
	// run again, as lazuli runs an Update again.
	maxTries int
}

// pgbenchStats are the figures of one pgbench run.
type pgbenchStats struct {
	processed int64   // transactions (script runs) completed
	failed    int64   // transactions that failed even after retries
	retried   int64   // transactions run again after a serialization failure
	tps       float64 // without initial connection time
	latencyMs float64 // average latency
}

// args are pgbench's arguments for script with clients for secs seconds.
func (p *pgbenchRunner) args(script string, clients, secs int) []string {
	jobs := min(clients, runtime.NumCPU())
	return []string{"-n", "-M", "prepared", "-c", strconv.Itoa(clients), "-j", strconv.Itoa(jobs),
		"-T", strconv.Itoa(secs), "--max-tries", strconv.Itoa(p.maxTries), "-f", script, p.db}
}

// wholeSeconds is d rounded up to pgbench's unit, at least one.
func wholeSeconds(d time.Duration) int {
	return max(1, int(math.Ceil(d.Seconds())))
}

// run runs pgbench once and returns its output.
func (p *pgbenchRunner) run(ctx context.Context, script string, clients int, d time.Duration) (string, error) {
	out, err := exec.CommandContext(ctx, p.bin, p.args(script, clients, wholeSeconds(d))...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("pgbench -f %s: %v: %s", script, err, lastLines(string(out), 5))
	}
	return string(out), nil
}

// measure runs workload's script after a warm-up, as measure does a
// workload on a server, sampling the CPU of the pgbench target's tiers.
func (p *pgbenchRunner) measure(ctx context.Context, workload string, s runSettings) *result {
	res := &result{Workload: workload, Target: pgbenchTarget}
	script := p.scripts[workload]
	fail := func(err error) *result {
		res.SetupError = err.Error()
		res.Failures = 1
		res.Errors = map[string]int64{"pgbench failed": 1}
		return res
	}
	if s.settle {
		settle()
	}
	if s.warmup > 0 {
		if _, err := p.run(ctx, script, s.concurrency, s.warmup); err != nil {
			return fail(err)
		}
	}
	tiers := s.serverCPU[pgbenchTarget]
	srv0 := sampleTiers(tiers)
	start := time.Now()
	out, err := p.run(ctx, script, s.concurrency, s.duration)
	elapsed := time.Since(start)
	srv1 := sampleTiers(tiers)
	if err != nil {
		return fail(err)
	}
	st, err := parsePgbench(out)
	if err != nil {
		return fail(err)
	}
	res.Ops = st.processed
	res.Seconds = float64(wholeSeconds(s.duration))
	res.OpsPerSec = st.tps
	res.MeanMs = st.latencyMs
	if st.failed > 0 {
		res.Failures = st.failed
		res.Errors = map[string]int64{"serialization or deadlock failure": st.failed}
		res.FirstError = "a transaction failed after " + strconv.Itoa(p.maxTries) + " tries"
	}
	res.ServerCPU = tierUsage(tiers, srv0, srv1, res.Ops, elapsed)
	if st.retried > 0 && st.processed > 0 {
		res.Note = fmt.Sprintf("%d of %d transactions retried after a serialization failure", st.retried, st.processed)
	}
	return res
}

// parsePgbench reads the summary pgbench prints at the end of a run.
func parsePgbench(out string) (pgbenchStats, error) {
	var st pgbenchStats
	var haveTPS, haveCount bool
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		field := func(prefix string) (string, bool) {
			v, ok := strings.CutPrefix(line, prefix)
			if !ok {
				return "", false
			}
			f := strings.Fields(v)
			if len(f) == 0 {
				return "", false
			}
			return f[0], true
		}
		if v, ok := field("number of transactions actually processed:"); ok {
			// "12345" or, with -t, "12345/20000".
			n, err := strconv.ParseInt(strings.SplitN(v, "/", 2)[0], 10, 64)
			if err != nil {
				return st, fmt.Errorf("pgbench: transactions %q: %v", v, err)
			}
			st.processed, haveCount = n, true
		} else if v, ok := field("number of failed transactions:"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return st, fmt.Errorf("pgbench: failed transactions %q: %v", v, err)
			}
			st.failed = n
		} else if v, ok := field("number of transactions retried:"); ok {
			st.retried, _ = strconv.ParseInt(v, 10, 64)
		} else if v, ok := field("latency average ="); ok {
			st.latencyMs, _ = strconv.ParseFloat(v, 64)
		} else if v, ok := field("tps ="); ok && !haveTPS {
			tps, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return st, fmt.Errorf("pgbench: tps %q: %v", v, err)
			}
			st.tps, haveTPS = tps, true
		}
	}
	if !haveTPS || !haveCount {
		return st, fmt.Errorf("pgbench printed no transaction count or tps: %s", lastLines(out, 5))
	}
	return st, nil
}

// lastLines returns the last n lines of s, joined with " / ".
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], " / ")
}

// parsePgbenchScript parses --pgbench-script's workload=file.
func parsePgbenchScript(v string) (workload, file string, err error) {
	workload, file, ok := strings.Cut(v, "=")
	if !ok || workload == "" || file == "" {
		return "", "", fmt.Errorf("want workload=file")
	}
	for _, w := range workloads() {
		if w.name == workload {
			if w.local {
				return "", "", fmt.Errorf("%s measures no server", workload)
			}
			return workload, file, nil
		}
	}
	return "", "", fmt.Errorf("unknown workload %q (see --list)", workload)
}

// Command lazuli-bench measures Azure Storage endpoints — lazuli, the
// reference emulator, or any account reachable with a Shared Key
// connection string — under many concurrent clients, and prints ops/s,
// p50 and p99 latency (and MB/s for payload workloads) per workload, with
// several targets side by side:
//
//	lazuli-bench --target lazuli='UseDevelopmentStorage=true' \
//	    --target azurite='AccountName=devstoreaccount1;AccountKey=...;BlobEndpoint=http://127.0.0.1:20000/devstoreaccount1;...' \
//	    --duration 10s --concurrency 16 --workloads blob-put-1k,queue-put
//
// With --goals it also measures the limits the speed goals are set
// against — the disk's own fdatasync'd write rate (disk-write-64m,
// --disk-dir), the wait the disk's group commit adds to each durable small
// write of the --sync=false target (nosync+fsync, --disk-dir) and pgbench
// replaying the statements of one lazuli operation (--pgbench-script) — over --rounds alternating rounds, and prints each
// goal's figure beside its limit (scripts/bench-limits.sh sets it all up).
//
// Requests go over a small HTTP/1.1 keep-alive client of its own, written
// and signed with Shared Key straight into each connection's buffer by the
// calling goroutine, so that the client takes as little CPU as it can from
// the server under test on the same machine; every workload creates its own uniquely named container, table or queue and
// deletes it afterwards. A workload whose service answers with errors is
// reported with the count of failures and the first error's status and
// x-ms-error-code instead of a measurement.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// defaultVersion is the x-ms-version sent unless --api-version says
// otherwise: recent enough for JSON-only Table and every header used here.
const defaultVersion = "2023-11-03"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// targetFlags collects repeated --target values.
type targetFlags []string

func (f *targetFlags) String() string { return strings.Join(*f, " ") }
func (f *targetFlags) Set(v string) error {
	*f = append(*f, v)
	return nil
}

// options are the parsed command line.
type options struct {
	targets    []*target
	workloads  []*workload
	settings   runSettings
	json       bool
	apiVersion string
	progress   io.Writer
	cpuProfile string
	rounds     int
	goals      bool
	// pgbench, when set, replays each scripted workload's statements on
	// PostgreSQL as the pseudo-target "pgbench".
	pgbench *pgbenchRunner
	// commit, with --goals and --disk-dir, is the group commit the
	// pseudo-target groupCommitTarget adds to the --sync=false target.
	commit *groupCommit
}

// target returns the target named name, or nil.
func (o *options) target(name string) *target {
	for _, t := range o.targets {
		if t.name == name {
			return t
		}
	}
	return nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, code := parseFlags(args, stdout, stderr)
	if o == nil {
		return code
	}
	defer func() {
		for _, t := range o.targets {
			t.close()
		}
	}()
	if o.cpuProfile != "" {
		f, err := os.Create(o.cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(stderr, "lazuli-bench: --cpuprofile:", err)
			return 1
		}
		defer func() {
			pprof.StopCPUProfile()
			f.Close()
		}()
	}
	if o.goals && o.settings.diskDir != "" && o.target(goalNoSync) != nil {
		g, err := newGroupCommit(o.settings.diskDir)
		if err != nil {
			fmt.Fprintln(stderr, "lazuli-bench: group commit in --disk-dir:", err)
			return 1
		}
		defer g.close()
		o.commit = g
	}
	rep := benchmark(ctx, o)
	var err error
	if o.json {
		err = rep.writeJSON(stdout)
	} else {
		err = rep.writeTable(stdout)
	}
	if err != nil {
		fmt.Fprintln(stderr, "lazuli-bench:", err)
		return 1
	}
	if ctx.Err() != nil {
		return 130
	}
	return 0
}

// parseFlags returns the options, or nil and the exit code.
func parseFlags(args []string, stdout, stderr io.Writer) (*options, int) {
	fs := flag.NewFlagSet("lazuli-bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var targets targetFlags
	fs.Var(&targets, "target", "`name=connection-string` of an endpoint to measure; repeat to compare (the first is the ratio's numerator); default UseDevelopmentStorage=true")
	duration := fs.Duration("duration", 10*time.Second, "measured time per workload and target")
	warmup := fs.Duration("warmup", time.Second, "unmeasured time per workload and target before measuring")
	concurrency := fs.Int("concurrency", 16, "concurrent clients")
	names := fs.String("workloads", "all", "comma-separated workloads to run (see --list)")
	preload := fs.Int("preload", 30000, "messages put into the queue before queue-receive-delete")
	var preloadFor targetFlags
	fs.Var(&preloadFor, "preload-for", "`name=N`: preload N messages on that target instead (repeatable); a target that "+
		"receives and deletes faster needs more to keep the queue at least --preload deep until the end")
	asJSON := fs.Bool("json", false, "print the results as JSON instead of a table")
	version := fs.String("api-version", defaultVersion, "x-ms-version to send")
	timeout := fs.Duration("timeout", 5*time.Minute, "limit for one request")
	list := fs.Bool("list", false, "list the workloads and exit")
	quiet := fs.Bool("quiet", false, "no progress lines on standard error")
	var serverCPU, engineURLs targetFlags
	fs.Var(&engineURLs, "engine-stats", "`target=url`: sample that lazuli instance's engine counters at url (its admin listener's /metrics) "+
		"before and after each measurement and note what the engine did meanwhile: the log's fsyncs (Updates each, mean time, "+
		"share of the time one ran) or the transactions PostgreSQL made run again (repeatable)")
	fs.Var(&serverCPU, "cpu", "`target:tier=pid[,pid...]`: report the CPU that these server processes (each with its child "+
		"processes) use per operation of that target, as tier (repeatable; e.g. pg:lazuli=41,42 --cpu pg:postgres=40); "+
		"such a target also reports the tier client, the CPU of the load generator (these clients, or the pgbench it runs)")
	settleFirst := fs.Bool("settle", true, "before each measurement, flush dirty pages and wait (up to 10 s) for the CPUs to go quiet; "+
		"false measures at once (shorter runs, on a machine that is never quiet)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the client to this file")
	rounds := fs.Int("rounds", 1, "measure every workload on every target this many times, the targets' order reversed "+
		"every other round, and report each one's median round (the lower middle one for an even count)")
	diskDir := fs.String("disk-dir", "", "directory on the file system whose durable write rate disk-write-64m measures "+
		"and where, with --goals and a target lazuli-nosync, nosync+fsync group-commits its records (the servers' data directory's)")
	goalsFlag := fs.Bool("goals", false, "print the speed goals, each measured figure over its limit or anchor, after the table; "+
		"unless --workloads says otherwise, run the workloads they need; targets "+goalDurable+", "+goalNoSync+" and "+goalPG+
		" then run only the workloads whose figures a goal uses (other targets run all)")
	var pgScripts targetFlags
	fs.Var(&pgScripts, "pgbench-script", "`workload=file`: replay file's statements with pgbench on --pgbench-db as target "+
		"\"pgbench\" of that workload (repeatable)")
	pgDB := fs.String("pgbench-db", "", "connection string of the database pgbench runs on")
	pgBin := fs.String("pgbench-bin", "pgbench", "the pgbench executable")
	pgTries := fs.Int("pgbench-max-tries", 10, "tries of a pgbench transaction that fails to serialize")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, 0
		}
		return nil, 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "lazuli-bench: unexpected argument %q\n", fs.Arg(0))
		return nil, 2
	}
	if *list {
		for _, w := range workloads() {
			fmt.Fprintf(stdout, "%-22s %s\n", w.name, w.desc)
		}
		return nil, 0
	}
	if *concurrency < 1 || *duration <= 0 || *warmup < 0 || *preload < 0 || *timeout <= 0 || *rounds < 1 || *pgTries < 1 {
		fmt.Fprintln(stderr, "lazuli-bench: --concurrency, --rounds and --pgbench-max-tries must be >= 1, --duration and --timeout > 0, --warmup and --preload >= 0")
		return nil, 2
	}
	workloadsSet := false
	fs.Visit(func(f *flag.Flag) { workloadsSet = workloadsSet || f.Name == "workloads" })
	if *goalsFlag && !workloadsSet {
		*names = goalWorkloadList()
	}
	wls, err := selectWorkloads(*names)
	if err != nil {
		fmt.Fprintln(stderr, "lazuli-bench:", err)
		return nil, 2
	}
	if len(targets) == 0 {
		targets = append(targets, "UseDevelopmentStorage=true")
	}
	o := &options{workloads: wls, json: *asJSON, apiVersion: *version, progress: stderr,
		cpuProfile: *cpuProfile, rounds: *rounds, goals: *goalsFlag}
	if *quiet {
		o.progress = io.Discard
	}
	if len(pgScripts) > 0 {
		if *pgDB == "" {
			fmt.Fprintln(stderr, "lazuli-bench: --pgbench-script needs --pgbench-db")
			return nil, 2
		}
		o.pgbench = &pgbenchRunner{bin: *pgBin, db: *pgDB, scripts: map[string]string{}, maxTries: *pgTries}
		for _, v := range pgScripts {
			w, file, err := parsePgbenchScript(v)
			if err != nil {
				fmt.Fprintf(stderr, "lazuli-bench: --pgbench-script %q: %v\n", v, err)
				return nil, 2
			}
			o.pgbench.scripts[w] = file
		}
	}
	// The pseudo-targets' names are taken: --cpu may name them.
	seen := map[string]bool{diskTarget: true, groupCommitTarget: true, pgbenchTarget: true}
	for i, v := range targets {
		name, conn := parseTarget(v, "target"+strconv.Itoa(i+1))
		if seen[name] {
			fmt.Fprintf(stderr, "lazuli-bench: two targets named %q (or a name of a limit: %s, %s)\n", name, diskTarget, pgbenchTarget)
			return nil, 2
		}
		seen[name] = true
		a, err := parseConnectionString(conn)
		if err != nil {
			fmt.Fprintf(stderr, "lazuli-bench: target %s: %v\n", name, err)
			return nil, 2
		}
		o.targets = append(o.targets, newTarget(name, a, *version, *concurrency, *timeout))
	}
	o.settings = runSettings{settle: *settleFirst, duration: *duration, warmup: *warmup, concurrency: *concurrency,
		preload: *preload, prefix: runPrefix(), diskDir: *diskDir}
	for _, v := range preloadFor {
		name, n, ok := strings.Cut(v, "=")
		count, err := strconv.Atoi(n)
		if !ok || err != nil || count < 0 || !seen[name] {
			fmt.Fprintf(stderr, "lazuli-bench: --preload-for %q: want name=N for a named target\n", v)
			return nil, 2
		}
		if o.settings.preloadFor == nil {
			o.settings.preloadFor = map[string]int{}
		}
		o.settings.preloadFor[name] = count
	}
	for _, v := range serverCPU {
		target, tier, err := parseServerCPU(v)
		if err == nil && !seen[target] {
			err = fmt.Errorf("no target named %q", target)
		}
		if err != nil {
			fmt.Fprintf(stderr, "lazuli-bench: --cpu %q: %v\n", v, err)
			return nil, 2
		}
		if o.settings.serverCPU == nil {
			o.settings.serverCPU = map[string][]serverTier{}
		}
		o.settings.serverCPU[target] = append(o.settings.serverCPU[target], tier)
	}
	// Beside a target's server tiers, the load generator's own CPU: this
	// process's requests, or the pgbench it runs for the pgbench target.
	for target := range o.settings.serverCPU {
		o.settings.serverCPU[target] = append(o.settings.serverCPU[target], serverTier{name: clientTier, pids: []int{os.Getpid()}})
	}
	for _, v := range engineURLs {
		target, url, ok := strings.Cut(v, "=")
		if !ok || url == "" || !seen[target] {
			fmt.Fprintf(stderr, "lazuli-bench: --engine-stats %q: want target=url of a target\n", v)
			return nil, 2
		}
		if o.settings.engineStats == nil {
			o.settings.engineStats = map[string]string{}
		}
		o.settings.engineStats[target] = url
	}
	return o, 0
}

// runPrefix is a random tag that keeps this run's containers, tables and
// queues apart from any earlier run's.
func runPrefix() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// benchmark runs every workload on every target, one after the other, the
// targets of a workload back to back so that they see the same machine, as
// many rounds as asked, and reports each workload and target's median.
func benchmark(ctx context.Context, o *options) *report {
	rep := &report{Started: time.Now(), DurationS: o.settings.duration.Seconds(),
		WarmupS: o.settings.warmup.Seconds(), Concurrency: o.settings.concurrency,
		Preload: o.settings.preload, PreloadFor: o.settings.preloadFor, APIVersion: o.apiVersion, CPUs: runtime.NumCPU(),
		LoadBefore: loadAverage(), Rounds: o.rounds}
	for _, t := range o.targets {
		rep.Targets = append(rep.Targets, t.name)
	}
	type key struct{ workload, target string }
	var order []key
	rounds := map[key][]*result{}
	for round := range o.rounds {
		for _, w := range o.workloads {
			steps := o.steps(ctx, w)
			// Every other round the targets go the other way, so that
			// none always runs first, right after the previous workload.
			if round%2 == 1 {
				slices.Reverse(steps)
			}
			for _, st := range steps {
				if ctx.Err() != nil {
					break
				}
				label := st.target
				if o.rounds > 1 {
					label = fmt.Sprintf("%s %d/%d", st.target, round+1, o.rounds)
				}
				fmt.Fprintf(o.progress, "%-22s %-10s ", w.name, label)
				r := st.run()
				if ctx.Err() != nil {
					// Interrupted mid-measurement: the numbers mean nothing.
					fmt.Fprintln(o.progress, "interrupted")
					break
				}
				k := key{w.name, st.target}
				if _, ok := rounds[k]; !ok {
					order = append(order, k)
				}
				rounds[k] = append(rounds[k], r)
				fmt.Fprintln(o.progress, progressLine(r))
			}
		}
	}
	// Results in workload order, each workload's targets in target order.
	targetIndex := func(name string) int {
		if i := slices.Index(rep.Targets, name); i >= 0 {
			return i
		}
		return len(rep.Targets) + slices.Index([]string{diskTarget, groupCommitTarget, pgbenchTarget}, name)
	}
	for _, w := range o.workloads {
		var ks []key
		for _, k := range order {
			if k.workload == w.name {
				ks = append(ks, k)
			}
		}
		slices.SortStableFunc(ks, func(a, b key) int { return targetIndex(a.target) - targetIndex(b.target) })
		for _, k := range ks {
			rep.Results = append(rep.Results, medianRound(rounds[k]))
		}
	}
	for _, name := range []string{diskTarget, groupCommitTarget, pgbenchTarget} {
		for _, k := range order {
			if k.target == name {
				rep.Targets = append(rep.Targets, name)
				break
			}
		}
	}
	if o.goals {
		rep.Goals = evalGoals(rep)
		applyLimits(rep.Goals, rep)
	}
	rep.LoadAfter = loadAverage()
	return rep
}

// step is one measurement of a round: a workload on one target.
type step struct {
	target string
	run    func() *result
}

// steps are the measurements of w in one round: on every target, or on
// the machine itself for a local workload, then its pgbench replay.
func (o *options) steps(ctx context.Context, w *workload) []step {
	if w.local {
		t := &target{name: diskTarget}
		return []step{{diskTarget, func() *result { return measure(ctx, w, t, o.settings) }}}
	}
	var out []step
	for _, t := range o.targets {
		if o.goals && !goalNeeds(w.name, t.name) {
			continue
		}
		out = append(out, step{t.name, func() *result { return measure(ctx, w, t, o.settings) }})
	}
	if nosync := o.target(goalNoSync); o.commit != nil && nosync != nil && durableSmallWrite(w.name) {
		s := o.settings
		s.commit, s.syncs = o.commit, syncs(w.name)
		out = append(out, step{groupCommitTarget, func() *result {
			r := measure(ctx, w, nosync, s)
			r.Target = groupCommitTarget
			return r
		}})
	}
	if o.pgbench != nil && o.pgbench.scripts[w.name] != "" {
		out = append(out, step{pgbenchTarget, func() *result { return o.pgbench.measure(ctx, w.name, o.settings) }})
	}
	return out
}

// medianRound returns the result of the median round by ops/s (the lower
// middle one for an even count), with every round's ops/s.
func medianRound(rs []*result) *result {
	if len(rs) == 1 {
		return rs[0]
	}
	sorted := slices.Clone(rs)
	slices.SortStableFunc(sorted, func(a, b *result) int {
		switch {
		case a.OpsPerSec < b.OpsPerSec:
			return -1
		case a.OpsPerSec > b.OpsPerSec:
			return 1
		}
		return 0
	})
	m := *sorted[(len(sorted)-1)/2]
	m.RoundOpsPerSec = nil
	for _, r := range rs {
		m.RoundOpsPerSec = append(m.RoundOpsPerSec, r.OpsPerSec)
	}
	return &m
}

// progressLine is the one-line summary of a result.
func progressLine(r *result) string {
	switch {
	case r.SetupError != "":
		return "setup failed: " + r.SetupError
	case r.Ops == 0:
		return fmt.Sprintf("failed (%d failures): %s", r.Failures, r.FirstError)
	}
	s := fmt.Sprintf("%s ops/s  p50 %s ms  p99 %s ms", fmtRate(r.OpsPerSec), fmtMs(r.P50ms), fmtMs(r.P99ms))
	if r.P99ms == 0 {
		// pgbench reports the mean latency alone.
		s = fmt.Sprintf("%s ops/s  mean %s ms", fmtRate(r.OpsPerSec), fmtMs(r.MeanMs))
	}
	if r.BytesPerOp > 0 {
		s += "  " + fmtRate(r.MBPerSec) + " MB/s"
	}
	if r.ClientCPU > 0 {
		// Per op too, so that client, lazuli and PostgreSQL add up to the
		// CPU one op costs the machine.
		s += fmt.Sprintf("  client %.2f cores %.0f µs/op", r.ClientCPU, r.ClientCPU/r.OpsPerSec*1e6)
	}
	for _, c := range r.ServerCPU {
		s += fmt.Sprintf("  %s %.0f µs/op", c.Tier, c.MicrosPerOp)
	}
	if r.Failures > 0 {
		s += fmt.Sprintf("  (%d failures; first: %s)", r.Failures, r.FirstError)
	}
	return s
}

package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

// op is one measured operation of one client. It may send several
// requests (Lease acquire + release, 16 Put Blocks + Put Block List); its
// latency is the time for all of them.
type op func() error

// prepared is a workload ready to run on one target.
type prepared struct {
	// client returns the operation of client id, after doing any
	// per-client setup (such as creating the client's own blob).
	client func(id int) (op, error)
	// bytesPerOp is the payload moved by one operation, for MB/s; 0 when
	// throughput in bytes is not what the workload measures.
	bytesPerOp int64
	// cleanup removes what the workload created (best effort).
	cleanup func()
	// note, when set, says something the numbers do not (read after
	// the measurement).
	note func() string
}

// workload is a named benchmark.
type workload struct {
	name string
	desc string
	// prepare creates the shared resources of the workload on a target.
	prepare func(e *env) (*prepared, error)
	// named workloads run only when --workloads names them, not in
	// "all".
	named bool
	// local workloads measure this machine, not a server: they run once
	// per round, as the pseudo-target "disk", instead of on every target.
	local bool
}

// env is what a workload sees while it prepares: the target, the run's
// settings and a unique prefix for resource names.
type env struct {
	t           *target
	concurrency int
	preload     int
	prefix      string // lowercase letters and digits, unique per run
	diskDir     string // where disk-write-64m writes (--disk-dir)
	// setupFails counts failed setup requests by kind (shared by parallel
	// setup).
	mu         sync.Mutex
	setupFails map[string]int64
}

// noteSetupFailure counts one failed setup request.
func (e *env) noteSetupFailure(err error) {
	e.mu.Lock()
	if e.setupFails == nil {
		e.setupFails = map[string]int64{}
	}
	e.setupFails[errorKind(err)]++
	e.mu.Unlock()
}

// parallel runs fn(i) for i in [0,n) on e.concurrency goroutines and
// returns the first error; every failure is counted as a failed setup
// request. It stops handing out work after the first failure.
func (e *env) parallel(n int, fn func(i int) error) error {
	var (
		mu    sync.Mutex
		next  int
		first error
		wg    sync.WaitGroup
	)
	workers := min(e.concurrency, n)
	for range workers {
		wg.Go(func() {
			for {
				mu.Lock()
				if next >= n || first != nil {
					mu.Unlock()
					return
				}
				i := next
				next++
				mu.Unlock()
				if err := fn(i); err != nil {
					e.noteSetupFailure(err)
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	return first
}

// result is the measurement of one workload on one target.
type result struct {
	Workload string `json:"workload"`
	Target   string `json:"target"`
	// Ops is the number of successful operations in the measured window.
	Ops        int64   `json:"ops"`
	Seconds    float64 `json:"seconds"`
	OpsPerSec  float64 `json:"ops_per_sec"`
	P50ms      float64 `json:"p50_ms"`
	P99ms      float64 `json:"p99_ms"`
	MeanMs     float64 `json:"mean_ms"`
	MaxMs      float64 `json:"max_ms"`
	BytesPerOp int64   `json:"bytes_per_op,omitempty"`
	MBPerSec   float64 `json:"mb_per_sec,omitempty"`
	// Failures counts failed operations (or failed setup requests when
	// SetupError is set); Errors groups them by status and error code.
	Failures   int64            `json:"failures"`
	Errors     map[string]int64 `json:"errors,omitempty"`
	FirstError string           `json:"first_error,omitempty"`
	SetupError string           `json:"setup_error,omitempty"`
	// ClientCPU is the CPU the benchmark process used while measuring, in
	// cores (1.0 = one core busy): what the client took from the machine.
	ClientCPU float64 `json:"client_cpu_cores,omitempty"`
	// ServerCPU is the CPU the target's server processes (--cpu) used
	// while measuring, per tier.
	ServerCPU []tierCPU `json:"server_cpu,omitempty"`
	// Note is the workload's own remark (see prepared.note).
	Note string `json:"note,omitempty"`
	// Engine is what the target's engine did during the measurement
	// (--engine-stats; see engineNote).
	Engine string `json:"engine,omitempty"`
	// FsyncMS is the mean time of the log's fsyncs during the
	// measurement (--engine-stats), 0 without fsyncs.
	FsyncMS float64 `json:"fsync_ms,omitempty"`
	// RoundOpsPerSec are the ops/s of every round, in the order run, when
	// --rounds is above 1; the result itself is the median round's.
	RoundOpsPerSec []float64 `json:"round_ops_per_sec,omitempty"`
}

// failed reports whether the workload could not be measured at all.
func (r *result) failed() bool { return r.SetupError != "" || r.Ops == 0 }

// runSettings are the knobs of one measurement.
type runSettings struct {
	duration    time.Duration
	warmup      time.Duration
	concurrency int
	preload     int
	preloadFor  map[string]int // per-target preload overrides
	// serverCPU lists, per target name, the server processes whose CPU
	// each measurement reports (--cpu).
	serverCPU map[string][]serverTier
	// engineStats names, per target, the /metrics URL whose engine
	// counters each measurement samples (--engine-stats).
	engineStats map[string]string
	prefix      string
	diskDir     string
	// commit, when set, adds its wait to every op (groupCommitTarget):
	// after the op, syncs commits of a commitRecord-byte record.
	commit *groupCommit
	syncs  int
	// settle lets the disk and CPUs go quiet before each measurement
	// (see settle); the command sets it, unit tests leave it off, since
	// it takes seconds per workload.
	settle bool
}

// clientStats is what one client collects; each client owns its own so the
// hot loop shares nothing.
type clientStats struct {
	lat     []time.Duration
	fails   int64
	errs    map[string]int64
	first   error
	firstAt time.Time
}

// measure prepares w on t, runs it for the warm-up and then the measured
// duration with s.concurrency clients, and cleans up.
func measure(ctx context.Context, w *workload, t *target, s runSettings) *result {
	res := &result{Workload: w.name, Target: t.name}
	e := &env{t: t, concurrency: s.concurrency, preload: s.preload, prefix: s.prefix, diskDir: s.diskDir}
	if n, ok := s.preloadFor[t.name]; ok {
		e.preload = n
	}
	p, err := w.prepare(e)
	if p != nil && p.cleanup != nil {
		defer p.cleanup()
	}
	if err == nil {
		ops := make([]op, s.concurrency)
		err = e.parallel(s.concurrency, func(i int) error {
			o, err := p.client(i)
			if s.commit != nil && err == nil {
				o = s.commit.durably(o, pattern(commitRecord), s.syncs)
			}
			ops[i] = o
			return err
		})
		if err == nil {
			res.BytesPerOp = p.bytesPerOp
			// Both servers share this machine: let the data that earlier
			// workloads and this one's setup wrote reach the disk, and
			// background work they started finish, so that neither
			// lands in this measurement.
			if s.settle {
				settle()
			}
			if s.warmup > 0 {
				runClients(ctx, ops, s.warmup, false)
			}
			tiers := s.serverCPU[t.name]
			eng0 := sampleEngine(s.engineStats[t.name])
			srv0 := sampleTiers(tiers)
			cpu0, ok0 := processCPU()
			stats, elapsed := runClients(ctx, ops, s.duration, true)
			cpu1, ok1 := processCPU()
			srv1 := sampleTiers(tiers)
			eng1 := sampleEngine(s.engineStats[t.name])
			res.Engine = engineNote(eng0, eng1, elapsed)
			res.FsyncMS = meanFsyncMS(eng0, eng1)
			summarize(res, stats, elapsed)
			if ok0 && ok1 && elapsed > 0 {
				res.ClientCPU = float64(cpu1-cpu0) / float64(elapsed)
			}
			res.ServerCPU = tierUsage(tiers, srv0, srv1, res.Ops, elapsed)
			if p.note != nil {
				res.Note = p.note()
			}
			return res
		}
	}
	res.SetupError = err.Error()
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.setupFails) == 0 {
		e.setupFails = map[string]int64{errorKind(err): 1}
	}
	res.Errors = e.setupFails
	for _, n := range e.setupFails {
		res.Failures += n
	}
	return res
}

// runClients runs every op in a loop on its own goroutine until d has
// passed (an operation in flight at the deadline completes) or ctx ends.
// It returns per-client statistics and the wall time from start until the
// last client stopped.
func runClients(ctx context.Context, ops []op, d time.Duration, record bool) ([]*clientStats, time.Duration) {
	stats := make([]*clientStats, len(ops))
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(d)
	for i, o := range ops {
		cs := &clientStats{}
		if record {
			cs.lat = make([]time.Duration, 0, 4096)
		}
		stats[i] = cs
		wg.Go(func() {
			for ctx.Err() == nil {
				t0 := time.Now()
				if !t0.Before(deadline) {
					break
				}
				err := o()
				lat := time.Since(t0)
				if !record {
					continue
				}
				if err != nil {
					cs.fails++
					if cs.errs == nil {
						cs.errs = map[string]int64{}
					}
					cs.errs[errorKind(err)]++
					if cs.first == nil {
						cs.first, cs.firstAt = err, t0
					}
					continue
				}
				cs.lat = append(cs.lat, lat)
			}
		})
	}
	wg.Wait()
	return stats, time.Since(start)
}

// errorKind groups an error for counting.
func errorKind(err error) string {
	var re *requestError
	if errors.As(err, &re) {
		return re.kind()
	}
	return err.Error()
}

// summarize merges client statistics into res.
func summarize(res *result, stats []*clientStats, elapsed time.Duration) {
	var all []time.Duration
	var first error
	var firstAt time.Time
	for _, cs := range stats {
		all = append(all, cs.lat...)
		res.Failures += cs.fails
		for k, n := range cs.errs {
			if res.Errors == nil {
				res.Errors = map[string]int64{}
			}
			res.Errors[k] += n
		}
		if cs.first != nil && (first == nil || cs.firstAt.Before(firstAt)) {
			first, firstAt = cs.first, cs.firstAt
		}
	}
	if first != nil {
		res.FirstError = first.Error()
	}
	res.Seconds = elapsed.Seconds()
	res.Ops = int64(len(all))
	if len(all) == 0 || elapsed <= 0 {
		return
	}
	res.OpsPerSec = float64(res.Ops) / res.Seconds
	if res.BytesPerOp > 0 {
		res.MBPerSec = res.OpsPerSec * float64(res.BytesPerOp) / 1e6
	}
	slices.Sort(all)
	var sum time.Duration
	for _, d := range all {
		sum += d
	}
	res.P50ms = ms(percentile(all, 0.50))
	res.P99ms = ms(percentile(all, 0.99))
	res.MeanMs = ms(sum / time.Duration(len(all)))
	res.MaxMs = ms(all[len(all)-1])
}

// percentile returns the q-quantile of sorted (nearest rank).
func percentile(sorted []time.Duration, q float64) time.Duration {
	rank := int(float64(len(sorted))*q+0.999999999) - 1
	return sorted[min(max(rank, 0), len(sorted)-1)]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// uniqueName returns a resource name made of the run prefix, a tag and a
// number, valid for containers and queues (lowercase, digits, hyphens).
func (e *env) uniqueName(tag string) string {
	return fmt.Sprintf("bench-%s-%s", e.prefix, tag)
}

// tableName returns a table name (letters and digits only).
func (e *env) tableName(tag string) string {
	return fmt.Sprintf("bench%s%s", e.prefix, tag)
}
